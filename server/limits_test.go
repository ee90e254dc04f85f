package server_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

// TestDescriptorLimits: a tool's own limits (Info.Limits, as a remote tool
// publishes its timeout and concurrency) are applied by the server, and an
// operator's per-tool setting overrides them, field by field.
func TestDescriptorLimits(t *testing.T) {
	var running, peak atomic.Int64
	slow := typed.MustNew("slow", "Sleep, or stop when cancelled.", func(ctx context.Context, in sleepIn) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		select {
		case <-time.After(time.Duration(in.Millis) * time.Millisecond):
			return "slept", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	info := slow.Info()
	info.Limits = tools.Limits{Timeout: 200 * time.Millisecond, MaxConcurrency: 1}
	reg, err := tools.NewRegistry(tools.WithInfo(slow, info))
	if err != nil {
		t.Fatal(err)
	}

	url := startRegistry(t, reg, server.Options{})
	c := httpClient(t, url, nil)
	if res := mustCall(t, c, "slow", map[string]any{"millis": 30000}); errorKind(res) != "timeout" || !strings.Contains(resultText(res), "after 200ms") {
		t.Errorf("a call past the descriptor's timeout = %q (%s), want a timeout after 200ms", resultText(res), errorKind(res))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if res := mustCall(t, c, "slow", map[string]any{"millis": 50}); res.IsError {
				t.Errorf("call = %q", resultText(res))
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p != 1 {
		t.Errorf("peak concurrent calls = %d, want 1 (the descriptor's MaxConcurrency)", p)
	}

	// The operator's setting wins: a minute instead of 200ms.
	url = startRegistry(t, reg, server.Options{Tools: map[string]server.ToolOptions{"slow": {Timeout: time.Minute}}})
	c = httpClient(t, url, nil)
	if res := mustCall(t, c, "slow", map[string]any{"millis": 400}); res.IsError {
		t.Errorf("with the operator's longer timeout = %q (%s), want it to finish", resultText(res), errorKind(res))
	}
}
