package server_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
)

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
}

func (p *progressLog) attach(c *client.Client) {
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/progress" {
			return
		}
		msg, _ := n.Params.AdditionalFields["message"].(string)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.msgs = append(p.msgs, msg)
	})
}

func (p *progressLog) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

func callWithProgress(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestProgressFromAGoTool runs over stdio. Over streamable HTTP mcp-go
// forwards notifications from a goroutine that stops when the response is
// written, so progress sent just before a tool returns may never leave
// (best effort, as the specification allows); heartbeats from a call that
// is still waiting do arrive (TestApprovalHeartbeats).
func TestProgressFromAGoTool(t *testing.T) {
	c, _ := startStdio(t)
	var p progressLog
	p.attach(c)
	if res := callWithProgress(t, c, "progress", map[string]any{}); resultText(res) != "ok" {
		t.Fatalf("progress tool = %q", resultText(res))
	}
	waitFor(t, func() bool { return len(p.list()) == 2 }, "two progress notifications")
	if got := strings.Join(p.list(), ","); got != "half,done" {
		t.Errorf("progress messages = %q", got)
	}
	// Without a progressToken nothing is sent.
	mustCall(t, c, "progress", map[string]any{})
	time.Sleep(100 * time.Millisecond)
	if n := len(p.list()); n != 2 {
		t.Errorf("%d notifications after a call without a token, want still 2", n)
	}
}

func TestApprovalHeartbeats(t *testing.T) {
	var o outbox
	reg, _ := tools.NewRegistry(append(testTools(), o.tool())...)
	url := startRegistry(t, reg, server.Options{ApprovalHeartbeat: 50 * time.Millisecond})
	rv := &reviewer{decide: func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		time.Sleep(400 * time.Millisecond) // a person thinking
		return answer(mcp.ElicitationResponseActionAccept, nil), nil
	}}
	c := gatedClient(t, url, rv, false)
	var p progressLog
	p.attach(c)
	if res := callWithProgress(t, c, "send", map[string]any{"to": "bob", "body": "hi"}); res.IsError {
		t.Fatalf("send = %q", resultText(res))
	}
	beats := 0
	for _, m := range p.list() {
		if strings.Contains(m, "waiting for a person to approve") {
			beats++
		}
	}
	if beats < 2 {
		t.Errorf("%d heartbeats while a person decided for 400ms at a 50ms interval, want several (%q)", beats, p.list())
	}
}

func TestCancelWithdrawsPendingApproval(t *testing.T) {
	var o outbox
	url := startGated(t, &o, approval.Policy{})
	asked := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	rv := &reviewer{decide: func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		close(asked)
		<-release // the person never answers in time
		return answer(mcp.ElicitationResponseActionAccept, nil), nil
	}}
	c := gatedClient(t, url, rv, false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "send"
		req.Params.Arguments = map[string]any{"to": "bob", "body": "hi"}
		_, err := c.CallTool(ctx, req)
		done <- err
	}()
	<-asked
	cancel() // the client sends notifications/cancelled
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	time.Sleep(200 * time.Millisecond)
	if got := o.list(); len(got) != 0 {
		t.Errorf("sent %v after the call was cancelled while pending", got)
	}
}

func TestBudgetCountsAnApprovedRetryOnce(t *testing.T) {
	var o outbox
	reg, _ := tools.NewRegistry(append(testTools(), o.tool())...)
	url := startRegistry(t, reg, server.Options{MaxCallsPerSession: 2})
	rv := &reviewer{decide: func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		return answer(mcp.ElicitationResponseActionAccept, nil), nil
	}}
	c := gatedClient(t, url, rv, true) // modern: input_required, then a retry
	if res := mustCall(t, c, "send", map[string]any{"to": "a", "body": "1"}); res.IsError {
		t.Fatalf("first = %q", resultText(res))
	}
	if res := mustCall(t, c, "echo", map[string]any{"text": "second"}); res.IsError {
		t.Fatalf("second call refused (%q): the approval retry was counted twice", resultText(res))
	}
	if res := mustCall(t, c, "echo", map[string]any{"text": "third"}); errorKind(res) != "budget_exhausted" {
		t.Errorf("third = %q, want the budget of 2 spent", resultText(res))
	}
}

// TestPipelineThroughServer runs a pipeline whose second step is gated:
// the step asks for approval like a top-level call, and a failing step
// fails the pipeline.
func TestPipelineThroughServer(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(map[bool]string{false: "legacy", true: "modern"}[modern], func(t *testing.T) {
			var o outbox
			send := o.tool()
			var shouted atomic.Int64
			shout := tools.NewPlain(tools.Info{Name: "compose", Description: "Make the message."}, func(_ context.Context, in string) (tools.Result, error) {
				shouted.Add(1)
				if in == "fail" {
					return tools.Result{}, tools.Failed("cannot compose %q", in)
				}
				return tools.Result{Structured: map[string]any{"to": "bob", "body": strings.ToUpper(in)}}, nil
			})
			p, err := pipeline.New(pipeline.Config{Name: "compose_and_send", Description: "Compose, then send.", Steps: []pipeline.Step{{Tool: shout}, {Tool: send}}})
			if err != nil {
				t.Fatal(err)
			}
			reg, err := tools.NewRegistry(append(testTools(), send, shout, p)...)
			if err != nil {
				t.Fatal(err)
			}
			url := startRegistry(t, reg, server.Options{})
			rv := &reviewer{decide: func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				if fieldDefault(req, "body") == "NO" {
					return answer(mcp.ElicitationResponseActionDecline, nil), nil
				}
				return answer(mcp.ElicitationResponseActionAccept, nil), nil
			}}
			c := gatedClient(t, url, rv, modern)
			if res := mustCall(t, c, "compose_and_send", map[string]any{"input": "hello"}); resultText(res) != "sent HELLO to bob" {
				t.Errorf("pipeline = %q", resultText(res))
			}
			if res := mustCall(t, c, "compose_and_send", map[string]any{"input": "no"}); errorKind(res) != "approval_denied" {
				t.Errorf("rejected step = %q kind %q", resultText(res), errorKind(res))
			}
			if res := mustCall(t, c, "compose_and_send", map[string]any{"input": "fail"}); !res.IsError || !strings.Contains(resultText(res), "step 1 (compose) failed") {
				t.Errorf("failing step = %q", resultText(res))
			}
			if got := o.list(); len(got) != 1 {
				t.Errorf("sent %v, want only the approved one", got)
			}
			if rv.asked.Load() != 2 {
				t.Errorf("asked %d times, want 2", rv.asked.Load())
			}
		})
	}
}

// TestPipelineCycleRefused: steps are called by name, so a pipeline built
// with a step named like another pipeline calls that one; when that calls
// the first back, every call would recurse until the stack overflows,
// which kills the process. New refuses it; shared steps that form no cycle
// are served.
func TestPipelineCycleRefused(t *testing.T) {
	plain := func(name string) tools.Tool {
		return tools.NewPlain(tools.Info{Name: name, Description: "d"}, func(_ context.Context, in string) (tools.Result, error) {
			return tools.Text(in), nil
		})
	}
	pipe := func(name string, steps ...tools.Tool) tools.Tool {
		var ss []pipeline.Step
		for _, st := range steps {
			ss = append(ss, pipeline.Step{Tool: st})
		}
		p, err := pipeline.New(pipeline.Config{Name: name, Description: "d", Steps: ss})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := pipe("a", plain("b"))
	b := pipe("b", plain("echo_step"), a)
	self := pipe("self", plain("self"))
	leaf := plain("leaf")
	shared := pipe("shared", leaf, leaf)
	top := pipe("top", shared, pipe("mid", shared, shared))
	tests := []struct {
		name  string
		tools []tools.Tool
		want  string // in New's error; "" for none
	}{
		{"through another", []tools.Tool{a, b, plain("echo_step")}, "a → b → a"},
		{"itself", []tools.Tool{self}, "self → self"},
		{"shared, no cycle", []tools.Tool{leaf, shared, pipe("mid", shared, shared), top}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := tools.NewRegistry(tt.tools...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = server.New(reg, server.Options{})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("New: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("New = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}
