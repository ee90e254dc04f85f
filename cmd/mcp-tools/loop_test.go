package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// The tool-use loop, end to end: a scripted model drives the real server
// over stdio, with the deterministic demo tools of testdata/demo served as
// subprocess tools from a config file.

// demoServer starts mcp-tools serving testdata/demo/tools.yaml and returns
// a client, the server's log, and the outbox file send_email writes to.
func demoServer(t *testing.T, reviewer client.ElicitationHandler, extra ...string) (*client.Client, *lockedBuffer, string) {
	t.Helper()
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo")
	build := exec.Command("go", "build", "-o", demo, "../../testdata/demo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the demo tools: %v\n%s", err, out)
	}
	outbox := filepath.Join(dir, "outbox.jsonl")
	env := []string{"DEMO_BIN=" + demo, "OUTBOX=" + outbox}
	args := append([]string{"serve", "--config", "../../testdata/demo/tools.yaml", "--log-level", "debug"}, extra...)
	var opts []client.ClientOption
	if reviewer != nil {
		opts = append(opts, client.WithElicitationHandler(reviewer))
	}
	c, _, logs := serveClient(t, env, opts, args...)
	return c, logs, outbox
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runs counts how often the server really started the named demo tool.
func runs(logs *lockedBuffer, tool string) int {
	return strings.Count(logs.String(), `msg="starting subprocess" tool=`+tool+" ")
}

// model is a scripted model: it decides from what it has seen, and records
// every tool result in order.
type model struct {
	t       *testing.T
	c       *client.Client
	results []string
}

type step struct {
	tool string
	args map[string]any
}

// call makes one tool call and records its result text; a JSON-RPC error
// is returned as err.
func (m *model) call(s step) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = s.tool
	req.Params.Arguments = s.args
	res, err := m.c.CallTool(ctx, req)
	if err == nil {
		m.results = append(m.results, text(res))
	}
	return res, err
}

// turn plays one user turn: the scripted model answers directly when it
// can, and otherwise calls the tool its script names and answers with the
// result.
func (m *model) turn(question string) string {
	m.results = nil
	switch {
	case strings.HasPrefix(question, "Hello"):
		return "Hello! How can I help?"
	case strings.Contains(question, "capital of"):
		res, err := m.call(step{"search_information", map[string]any{"query": question}})
		if err != nil || res.IsError {
			return "I could not find out."
		}
		return text(res)
	}
	return "I do not know."
}

func TestToolUseLoop(t *testing.T) {
	c, logs, _ := demoServer(t, nil)
	m := &model{t: t, c: c}

	t.Run("direct answer calls no tool", func(t *testing.T) {
		before := strings.Count(logs.String(), "tool=")
		answer := m.turn("Hello!")
		if answer != "Hello! How can I help?" || len(m.results) != 0 {
			t.Errorf("answer %q after %d tool results, want a direct answer", answer, len(m.results))
		}
		if after := strings.Count(logs.String(), "tool="); after != before {
			t.Errorf("the server saw %d tool calls for a direct answer", after-before)
		}
		if answer := m.turn("What is the capital of France?"); answer != "Paris" || len(m.results) != 1 {
			t.Errorf("a question that needs a tool: answer %q after %d results", answer, len(m.results))
		}
	})

	t.Run("multi-step: price, then arithmetic on it", func(t *testing.T) {
		m.results = nil
		price, err := m.call(step{"get_stock_price", map[string]any{"ticker": "AAPL"}})
		if err != nil || price.IsError {
			t.Fatalf("get_stock_price: %v %v", err, text(price))
		}
		// The model builds the next call from the first result.
		gain, err := m.call(step{"calculate_expression", map[string]any{"expression": fmt.Sprintf("(%s - 150) * 100", text(price))}})
		if err != nil || gain.IsError {
			t.Fatalf("calculate_expression: %v %v", err, text(gain))
		}
		if got := strings.Join(m.results, " then "); got != "178.15 then 2815" {
			t.Errorf("results in order = %q, want 178.15 then 2815", got)
		}
	})

	t.Run("unknown tool and bad arguments run nothing", func(t *testing.T) {
		before := runs(logs, "get_stock_price")
		if _, err := m.call(step{"get_stock_quote", map[string]any{"ticker": "AAPL"}}); err == nil {
			t.Error("an unknown tool was accepted")
		}
		for _, args := range []map[string]any{{}, {"ticker": 42}, {"ticker": "NOT A TICKER!"}} {
			res, err := m.call(step{"get_stock_price", args})
			if err != nil || !res.IsError || res.Meta == nil || res.Meta.AdditionalFields["mcp-tools/errorKind"] != "invalid_arguments" {
				t.Errorf("get_stock_price %v = %v %q, want an invalid_arguments result", args, err, text(res))
			}
		}
		if got := runs(logs, "get_stock_price"); got != before {
			t.Errorf("the tool ran %d times for refused calls", got-before)
		}
	})

	t.Run("unknown ticker is an error, never a made-up price", func(t *testing.T) {
		res, err := m.call(step{"get_stock_price", map[string]any{"ticker": "ZZZZ"}})
		if err != nil || !res.IsError {
			t.Fatalf("unknown ticker = %v %q, want an error result", err, text(res))
		}
		if regexp.MustCompile(`\d+\.\d+`).MatchString(text(res)) {
			t.Errorf("the error %q carries a price", text(res))
		}
	})
}

func TestToolUseLoopBudget(t *testing.T) {
	c, logs, _ := demoServer(t, nil, "--max-calls-per-session", "3")
	m := &model{t: t, c: c}
	for i := range 3 {
		if res, err := m.call(step{"search_information", map[string]any{"query": "capital of France"}}); err != nil || text(res) != "Paris" {
			t.Fatalf("call %d = %v %q", i+1, err, text(res))
		}
	}
	res, err := m.call(step{"search_information", map[string]any{"query": "capital of France"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "tool call budget of 3 calls exhausted") {
		t.Errorf("4th call = %v %q", err, text(res))
	}
	if got := runs(logs, "search_information"); got != 3 {
		t.Errorf("the tool ran %d times, want 3: nothing runs past the budget", got)
	}
}

// reviewer answers send_email's approval question with the next decision.
type reviewer struct {
	mu        sync.Mutex
	decisions []mcp.ElicitationResponseAction
	asked     int
}

func (r *reviewer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.decisions[r.asked]
	r.asked++
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: d}}, nil
}

func TestToolUseLoopApproval(t *testing.T) {
	rv := &reviewer{decisions: []mcp.ElicitationResponseAction{mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionAccept}}
	c, _, outbox := demoServer(t, rv)
	m := &model{t: t, c: c}
	email := map[string]any{"to": "bob@example.com", "subject": "Gain", "body": "The AAPL gain is 2815."}

	res, err := m.call(step{"send_email", email})
	if err != nil || !res.IsError || !strings.Contains(text(res), "Rejected by reviewer") {
		t.Fatalf("rejected send = %v %q", err, text(res))
	}
	if b, _ := os.ReadFile(outbox); len(b) != 0 {
		t.Fatalf("a rejected email was sent: %s", b)
	}
	res, err = m.call(step{"send_email", email})
	if err != nil || res.IsError {
		t.Fatalf("approved send = %v %q", err, text(res))
	}
	b, _ := os.ReadFile(outbox)
	if n := strings.Count(string(b), "\n"); n != 1 || !strings.Contains(string(b), "bob@example.com") {
		t.Errorf("outbox holds %d emails: %s, want exactly one", n, b)
	}
	if rv.asked != 2 {
		t.Errorf("the reviewer was asked %d times, want 2", rv.asked)
	}
}
