package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

// counterTool counts how often it ran and how many of its calls overlap.
type counterTool struct {
	ran, running, peak atomic.Int64
	hold               time.Duration
}

func (c *counterTool) tool(name string) tools.Tool {
	return tools.New(tools.Info{Name: name, Description: "Count calls."}, func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		c.ran.Add(1)
		n := c.running.Add(1)
		defer c.running.Add(-1)
		for {
			p := c.peak.Load()
			if n <= p || c.peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-time.After(c.hold):
		case <-ctx.Done():
			return tools.Result{}, ctx.Err()
		}
		return tools.Text("counted"), nil
	})
}

func startWith(t *testing.T, opts server.Options, ts ...tools.Tool) string {
	t.Helper()
	reg, err := tools.NewRegistry(append(testTools(), ts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return startRegistry(t, reg, opts)
}

func TestBudget(t *testing.T) {
	var c counterTool
	url := startWith(t, server.Options{MaxCallsPerSession: 3}, c.tool("count"))
	cl := httpClient(t, url, nil)

	// A call refused by validation does not count.
	if res := mustCall(t, cl, "add", map[string]any{"a": "x"}); errorKind(res) != "invalid_arguments" {
		t.Fatalf("invalid call = %s", resultText(res))
	}
	for i := range 3 {
		if res := mustCall(t, cl, "count", map[string]any{}); res.IsError {
			t.Fatalf("call %d refused: %s", i+1, resultText(res))
		}
	}
	res := mustCall(t, cl, "count", map[string]any{})
	if !res.IsError || errorKind(res) != "budget_exhausted" || resultText(res) != "Error: tool call budget of 3 calls exhausted for this session" {
		t.Errorf("4th call = %v %q %q", res.IsError, resultText(res), errorKind(res))
	}
	if got := c.ran.Load(); got != 3 {
		t.Errorf("the tool ran %d times, want 3: nothing runs past the budget", got)
	}
	// Another session has its own budget.
	other := httpClient(t, url, nil)
	if res := mustCall(t, other, "count", map[string]any{}); res.IsError {
		t.Errorf("a new session's first call = %s", resultText(res))
	}
}

func TestBudgetBelongsToToken(t *testing.T) {
	var c counterTool
	url := startWith(t, server.Options{MaxCallsPerSession: 2, BearerTokens: []string{"tok"}}, c.tool("count"))
	auth := map[string]string{"Authorization": "Bearer tok"}
	first := httpClient(t, url, auth)
	mustCall(t, first, "count", map[string]any{})
	mustCall(t, first, "count", map[string]any{})
	second := httpClient(t, url, auth)
	if res := mustCall(t, second, "count", map[string]any{}); errorKind(res) != "budget_exhausted" {
		t.Errorf("a new session with the same token = %q, want the budget to stay spent", resultText(res))
	}
}

func TestCallTimeout(t *testing.T) {
	url := startWith(t, server.Options{CallTimeout: 200 * time.Millisecond, Tools: map[string]server.ToolOptions{"echo": {Timeout: time.Minute}}})
	cl := httpClient(t, url, nil)
	res := mustCall(t, cl, "sleep", map[string]any{"millis": 30000})
	if !res.IsError || errorKind(res) != "timeout" || !strings.Contains(resultText(res), `tool "sleep" timed out after 200ms`) {
		t.Errorf("slow call = %v %q %q", res.IsError, resultText(res), errorKind(res))
	}
	if res := mustCall(t, cl, "sleep", map[string]any{"millis": 1}); res.IsError {
		t.Errorf("fast call = %s", resultText(res))
	}
}

func TestToolConcurrencyLimitWaitsNotRejects(t *testing.T) {
	c := counterTool{hold: 50 * time.Millisecond}
	url := startWith(t, server.Options{Tools: map[string]server.ToolOptions{"count": {MaxConcurrency: 2}}}, c.tool("count"))
	cl := httpClient(t, url, nil)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if res, err := callTool(t, cl, "count", map[string]any{}); err != nil || res.IsError {
				t.Errorf("call: %v %v", err, res)
			}
		})
	}
	wg.Wait()
	if got := c.ran.Load(); got != 10 {
		t.Errorf("ran %d, want all 10 (waiting, not rejected)", got)
	}
	if got := c.peak.Load(); got > 2 {
		t.Errorf("peak concurrency %d, want at most 2", got)
	}
}

func TestGlobalInFlightLimit(t *testing.T) {
	c := counterTool{hold: 50 * time.Millisecond}
	url := startWith(t, server.Options{MaxInFlightTotal: 3}, c.tool("count"))
	var wg sync.WaitGroup
	for range 3 {
		cl := httpClient(t, url, nil)
		for range 4 {
			wg.Go(func() {
				if res, err := callTool(t, cl, "count", map[string]any{}); err != nil || res.IsError {
					t.Errorf("call: %v %v", err, res)
				}
			})
		}
	}
	wg.Wait()
	if c.ran.Load() != 12 || c.peak.Load() > 3 {
		t.Errorf("ran %d with peak %d, want 12 with peak ≤ 3", c.ran.Load(), c.peak.Load())
	}
}

func TestToolRateLimit(t *testing.T) {
	var c counterTool
	url := startWith(t, server.Options{Tools: map[string]server.ToolOptions{"count": {Rate: 20, Burst: 1}}}, c.tool("count"))
	cl := httpClient(t, url, nil)
	start := time.Now()
	for range 6 {
		mustCall(t, cl, "count", map[string]any{})
	}
	// Six calls at 20/s with a burst of 1 need at least 5 intervals of 50 ms.
	if el := time.Since(start); el < 240*time.Millisecond {
		t.Errorf("6 calls took %v; the rate limit of 20/s was not applied", el)
	}
}

func TestUnknownToolSettingsRefused(t *testing.T) {
	reg, _ := tools.NewRegistry(testTools()...)
	if _, err := server.New(reg, server.Options{Tools: map[string]server.ToolOptions{"nope": {Timeout: time.Second}}}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("New = %v, want an error naming the unknown tool", err)
	}
}

func TestStrictRejectsUnknownFields(t *testing.T) {
	strict := typed.MustNew("find", "Find.", func(_ context.Context, in struct {
		Query string `json:"query"`
	}) (string, error) {
		return in.Query, nil
	})
	url := startWith(t, server.Options{Strict: true}, strict)
	cl := httpClient(t, url, nil)
	res := mustCall(t, cl, "find", map[string]any{"qurey": "y"})
	if !res.IsError || !strings.Contains(resultText(res), `did you mean "query"`) {
		t.Errorf("unknown field in strict mode = %v %q", res.IsError, resultText(res))
	}
	lenient := startWith(t, server.Options{})
	cl2 := httpClient(t, lenient, nil)
	if res := mustCall(t, cl2, "echo", map[string]any{"text": "x", "extra": 1}); res.IsError {
		t.Errorf("unknown field without strict = %s, want it ignored", resultText(res))
	}
}
