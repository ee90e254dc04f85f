package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// ledger is a gated tool that records the arguments it ran with, as text.
type ledger struct {
	mu  sync.Mutex
	ran []string
}

func (l *ledger) tool() tools.Tool {
	info := tools.Info{Name: "transfer", Description: "Move money.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"account":{"type":"integer"},"route":{"type":"object"}}}`)}
	return approval.Gate(tools.New(info, func(_ context.Context, args json.RawMessage) (tools.Result, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		var b bytes.Buffer
		_ = json.Compact(&b, args)
		l.ran = append(l.ran, b.String())
		return tools.Text("done"), nil
	}))
}

func (l *ledger) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ran...)
}

// TestApprovalEditOfALargeInteger: what runs after a person's answer is
// exactly what the answer says, or nothing, for integers past 2^53 too,
// which a float64 cannot all hold (9007199254740993 is not one).
func TestApprovalEditOfALargeInteger(t *testing.T) {
	accept := func(content map[string]any) func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		return func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return answer(mcp.ElicitationResponseActionAccept, content), nil
		}
	}
	// echo accepts the form as shown, as a client that decodes numbers
	// as float64 would send it back.
	echo := func(field string) func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		return func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return answer(mcp.ElicitationResponseActionAccept, map[string]any{field: fieldDefault(req, field)}), nil
		}
	}
	tests := []struct {
		name   string
		modern bool
		args   string
		decide func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
		ran    string // "" : the tool must not run
		reason string // when it does not run, the refusal must contain this
	}{
		{name: "edit to a large integer", modern: true, args: `{"account":1}`,
			decide: accept(map[string]any{"account": json.Number("9007199254740993")}), ran: `{"account":9007199254740993}`},
		{name: "edit of 2^53 to 2^53+1", modern: true, args: `{"account":9007199254740992}`,
			decide: accept(map[string]any{"account": "9007199254740993"}), ran: `{"account":9007199254740993}`},
		{name: "large integer left as shown", modern: true, args: `{"account":9007199254740993}`,
			decide: echo("account"), ran: `{"account":9007199254740993}`},
		{name: "large integer not sent back", modern: true, args: `{"account":9007199254740993}`,
			decide: accept(nil), ran: `{"account":9007199254740993}`},
		{name: "nested large integer edited", modern: true, args: `{"route":{"id":9007199254740992}}`,
			decide: accept(map[string]any{"route": `{"id":9007199254740993}`}), ran: `{"route":{"id":9007199254740993}}`},
		{name: "nested large integer left as shown", modern: true, args: `{"route":{"id":[9007199254740993]}}`,
			decide: echo("route"), ran: `{"route":{"id":[9007199254740993]}}`},

		// elicitation/create: mcp-go decodes the answer through float64,
		// so an edit to a number it cannot hold is refused.
		{name: "legacy: edit to a large integer", args: `{"account":1}`,
			decide: accept(map[string]any{"account": json.Number("9007199254740993")}), reason: `"account"`},
		{name: "legacy: edit of 2^53 to 2^53+1", args: `{"account":9007199254740992}`,
			decide: accept(map[string]any{"account": "9007199254740993"}), ran: `{"account":9007199254740993}`},
		{name: "legacy: edit to 2^53, which may be a rounded 2^53+1", args: `{"account":1}`,
			decide: accept(map[string]any{"account": json.Number("9007199254740992")}), reason: `"account"`},
		{name: "legacy: large integer left as shown", args: `{"account":9007199254740993}`,
			decide: echo("account"), ran: `{"account":9007199254740993}`},
		{name: "legacy: large integer not sent back", args: `{"account":9007199254740993}`,
			decide: accept(nil), ran: `{"account":9007199254740993}`},
		{name: "legacy: nested large integer edited", args: `{"route":{"id":9007199254740992}}`,
			decide: accept(map[string]any{"route": `{"id":9007199254740993}`}), ran: `{"route":{"id":9007199254740993}}`},
		{name: "legacy: nested large integer left as shown", args: `{"route":{"id":[9007199254740993]}}`,
			decide: echo("route"), ran: `{"route":{"id":[9007199254740993]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l ledger
			reg, err := tools.NewRegistry(append(testTools(), l.tool())...)
			if err != nil {
				t.Fatal(err)
			}
			url := startRegistry(t, reg, server.Options{})
			rv := &reviewer{decide: tt.decide}
			c := gatedClient(t, url, rv, tt.modern)
			res := mustCall(t, c, "transfer", json.RawMessage(tt.args))
			if rv.asked.Load() != 1 {
				t.Fatalf("the reviewer was asked %d times, want once", rv.asked.Load())
			}
			// The form shows the model's number exactly, even to a client
			// that holds numbers as float64.
			req := rv.last.Load().(mcp.ElicitationRequest)
			var sent map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.args), &sent); err != nil {
				t.Fatal(err)
			}
			for field, exact := range sent {
				if shown := fmt.Sprint(fieldDefault(req, field)); shown != string(exact) {
					t.Errorf("the form shows %s = %s, want %s", field, shown, exact)
				}
			}
			got := l.list()
			if tt.ran == "" {
				if len(got) != 0 {
					t.Errorf("ran %v, want no run", got)
				}
				if !res.IsError || errorKind(res) != "approval_denied" || !strings.Contains(resultText(res), tt.reason) || !strings.Contains(resultText(res), "did not run") {
					t.Errorf("result = %v %q kind %q, want an approval_denied error naming %s and saying the tool did not run", res.IsError, resultText(res), errorKind(res), tt.reason)
				}
				return
			}
			if res.IsError || len(got) != 1 || got[0] != tt.ran {
				t.Errorf("result %v %q, ran %v; want a run with exactly %s", res.IsError, resultText(res), got, tt.ran)
			}
		})
	}
}

// TestCallEditOfALargeInteger: Server.Call's Ask answers as a client does;
// an integer it gives exactly (json.Number, int64) runs exactly, and one
// it gives as a float64 past 2^53, which may be rounded, is refused.
func TestCallEditOfALargeInteger(t *testing.T) {
	tests := []struct {
		name    string
		account any
		ran     string
	}{
		{name: "json.Number", account: json.Number("9007199254740993"), ran: `{"account":9007199254740993}`},
		{name: "int64", account: int64(9007199254740993), ran: `{"account":9007199254740993}`},
		{name: "float64", account: float64(9007199254740993)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l ledger
			reg, err := tools.NewRegistry(l.tool())
			if err != nil {
				t.Fatal(err)
			}
			srv, err := server.New(reg, server.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := srv.Call(t.Context(), "transfer", json.RawMessage(`{"account":1}`), server.CallOptions{
				Ask: func(context.Context, server.Question) (server.Answer, error) {
					return server.Answer{Accept: true, Content: map[string]any{"account": tt.account}}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			got := l.list()
			if tt.ran == "" {
				if len(got) != 0 || res.Kind != tools.KindApprovalDenied || !strings.Contains(res.Text, `"account"`) {
					t.Errorf("ran %v, result %q (%s); want no run and a refusal naming the field", got, res.Text, res.Kind)
				}
				return
			}
			if res.IsError || len(got) != 1 || got[0] != tt.ran {
				t.Errorf("result %q, ran %v; want a run with exactly %s", res.Text, got, tt.ran)
			}
		})
	}
}
