package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/tools"
)

func TestDecisionZeroValueRejects(t *testing.T) {
	var d approval.Decision
	if d != approval.Reject {
		t.Errorf("zero Decision = %s, want reject", d)
	}
	if got := (approval.Policy{}).OnTimeout; got != approval.Reject {
		t.Errorf("zero Policy's OnTimeout = %s, want reject", got)
	}
}

func TestDecisionString(t *testing.T) {
	tests := []struct {
		name string
		d    approval.Decision
		want string
	}{
		{name: "reject", d: approval.Reject, want: "reject"},
		{name: "approve", d: approval.Approve, want: "approve"},
		{name: "edit", d: approval.Edit, want: "edit"},
		{name: "out of range", d: approval.Decision(9), want: "Decision(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMemory(t *testing.T) {
	var m approval.Memory // the zero value is ready
	if m.Remembered("s1", "send") {
		t.Fatal("empty Memory remembers something")
	}
	m.Remember("s1", "send")
	m.Remember("s2", "write")
	tests := []struct {
		name          string
		session, tool string
		want          bool
	}{
		{name: "remembered", session: "s1", tool: "send", want: true},
		{name: "other session", session: "s2", tool: "send", want: false},
		{name: "other tool", session: "s1", tool: "write", want: false},
		{name: "other session's tool", session: "s2", tool: "write", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Remembered(tt.session, tt.tool); got != tt.want {
				t.Errorf("Remembered(%q, %q) = %v, want %v", tt.session, tt.tool, got, tt.want)
			}
		})
	}
	m.Forget("s1")
	if m.Remembered("s1", "send") {
		t.Error(`Remembered("s1", "send") after Forget("s1") = true, want false`)
	}
	if !m.Remembered("s2", "write") {
		t.Error(`Forget("s1") forgot session s2 too`)
	}
}

func TestMemoryConcurrent(t *testing.T) {
	var m approval.Memory
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := fmt.Sprint("s", i%2)
			m.Remember(s, "t")
			_ = m.Remembered(s, "t")
			m.Forget(fmt.Sprint("other", i))
		})
	}
	wg.Wait()
	if !m.Remembered("s0", "t") || !m.Remembered("s1", "t") {
		t.Error("concurrent Remember lost a session")
	}
}

func TestParseFallback(t *testing.T) {
	tests := []struct {
		in      string
		want    approval.Fallback
		wantErr bool
	}{
		{in: "", want: approval.FallbackDeny},
		{in: "deny", want: approval.FallbackDeny},
		{in: "allow", want: approval.FallbackAllow},
		{in: "webhook", want: approval.FallbackWebhook},
		{in: "Allow", wantErr: true},
		{in: "maybe", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := approval.ParseFallback(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseFallback(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPolicyGated(t *testing.T) {
	p := approval.Policy{Require: []string{"send", "both"}, Exempt: []string{"open", "both"}}
	tests := []struct {
		name      string
		tool      string
		gatedInGo bool
		want      bool
	}{
		{name: "required", tool: "send", want: true},
		{name: "gated in Go", tool: "write", gatedInGo: true, want: true},
		{name: "neither", tool: "read", want: false},
		{name: "exempt beats gated in Go", tool: "open", gatedInGo: true, want: false},
		{name: "exempt beats required", tool: "both", want: false},
		{name: "required and gated in Go", tool: "send", gatedInGo: true, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Gated(tt.tool, tt.gatedInGo); got != tt.want {
				t.Errorf("Gated(%q, %v) = %v, want %v", tt.tool, tt.gatedInGo, got, tt.want)
			}
		})
	}
	if (approval.Policy{}).Gated("anything", false) {
		t.Error("the zero Policy gates a tool not gated in Go")
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name    string
		p       approval.Policy
		wantErr string
	}{
		{name: "zero value"},
		{name: "allow", p: approval.Policy{Fallback: approval.FallbackAllow, OnTimeout: approval.Approve, Timeout: time.Minute}},
		{name: "webhook", p: approval.Policy{Fallback: approval.FallbackWebhook, Webhook: &approval.Webhook{URL: "http://127.0.0.1:1/hook"}}},
		{name: "webhook without one", p: approval.Policy{Fallback: approval.FallbackWebhook}, wantErr: "needs a webhook URL"},
		{name: "webhook without a URL", p: approval.Policy{Fallback: approval.FallbackWebhook, Webhook: &approval.Webhook{}}, wantErr: "needs a webhook URL"},
		{name: "unknown fallback", p: approval.Policy{Fallback: "maybe"}, wantErr: `unknown approval fallback "maybe"`},
		{name: "edit on timeout", p: approval.Policy{OnTimeout: approval.Edit}, wantErr: "the on-timeout decision is edit; use reject or approve"},
		{name: "out-of-range decision on timeout", p: approval.Policy{OnTimeout: 7}, wantErr: "use reject or approve"},
		{name: "negative timeout", p: approval.Policy{Timeout: -time.Second}, wantErr: "the timeout is -1s"},
		{name: "negative webhook timeout", p: approval.Policy{Webhook: &approval.Webhook{URL: "x", Timeout: -1}}, wantErr: "the webhook timeout"},
		{name: "negative webhook answer cap", p: approval.Policy{Webhook: &approval.Webhook{URL: "x", MaxAnswerBytes: -1}}, wantErr: "answer cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDenyMessage(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want []string
	}{
		{"no elicitation", approval.DenyMessage("file_write"), []string{
			"Tool 'file_write' requires approval but the connected client does not support elicitation",
			"--no-approval file_write", "--approval-fallback allow", "--approval-fallback webhook"}},
		{"legacy SSE", approval.DenySSEMessage("file_write"), []string{
			"Tool 'file_write' requires approval but the legacy SSE transport cannot carry the approval question",
			"streamable HTTP (--transport http)", "--no-approval file_write", "--approval-fallback allow", "--approval-fallback webhook"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.got, w) {
					t.Errorf("got %q, want it to contain %q", tt.got, w)
				}
			}
			if strings.Contains(tt.got, "server operator") {
				t.Errorf("got %q, want no \"server operator\" (that is often the user)", tt.got)
			}
		})
	}
	if strings.Contains(approval.DenySSEMessage("x"), "does not support elicitation") {
		t.Errorf("the SSE message blames the client's elicitation support: %q", approval.DenySSEMessage("x"))
	}
}

func TestGate(t *testing.T) {
	echo := func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		return tools.Text(string(args)), nil
	}
	tests := []struct {
		name            string
		annotations     tools.Annotations
		wantDestructive bool
	}{
		{name: "writer", annotations: tools.Annotations{}, wantDestructive: true},
		{name: "already destructive", annotations: tools.Annotations{Destructive: true}, wantDestructive: true},
		{name: "read-only", annotations: tools.Annotations{ReadOnly: true}, wantDestructive: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := tools.New(tools.Info{Name: "t", Description: "d", Annotations: tt.annotations}, echo)
			g := approval.Gate(inner)
			if !g.Info().Gated || inner.Info().Gated {
				t.Errorf("Gated(gated, inner) = %v, %v; want true, false", g.Info().Gated, inner.Info().Gated)
			}
			if w := tools.Wrap(g, func(_ tools.Info, next tools.Func) tools.Func { return next }); !w.Info().Gated {
				t.Error("tools.Wrap hid the gate")
			}
			info := g.Info()
			if info.Annotations.Destructive != tt.wantDestructive || info.Annotations.ReadOnly != tt.annotations.ReadOnly || info.Name != "t" {
				t.Errorf("gated Info = %+v, want the tool's with destructive %v", info, tt.wantDestructive)
			}
			if inner.Info().Annotations != tt.annotations {
				t.Errorf("Gate changed the inner tool's annotations to %+v", inner.Info().Annotations)
			}
			res, err := g.Call(context.Background(), json.RawMessage(`{"a":1}`))
			if err != nil || res.Text != `{"a":1}` {
				t.Errorf("gated Call = %q, %v; want the tool's own result", res.Text, err)
			}
			if again := approval.Gate(g); again != g {
				t.Error("Gate of a gated tool wrapped it again")
			}
		})
	}
}
