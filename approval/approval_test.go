package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

type mailIn struct {
	To       string            `json:"to" jsonschema:"description=Recipient,pattern=^[a-z@.]+$"`
	Priority string            `json:"priority,omitempty" jsonschema:"enum=low,enum=high"`
	Count    int               `json:"count,omitempty"`
	Urgent   bool              `json:"urgent,omitempty"`
	Meta     map[string]string `json:"meta,omitempty"`
	Body     string            `json:"body"`
	Token    string            `json:"token,omitempty" secret:"true"`
}

var mail = typed.MustNew("send_mail", "Send mail.", func(context.Context, mailIn) (string, error) { return "sent", nil })

var args = json.RawMessage(`{"to":"bob@x.io","priority":"low","count":2,"urgent":false,"meta":{"k":"v"},"body":"` + strings.Repeat("long text ", 20) + `","token":"s3cret"}`)

func form(t *testing.T) approval.Form {
	t.Helper()
	f, err := approval.NewForm(mail.Info(), args)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestForm(t *testing.T) {
	f := form(t)
	var s struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(f.Schema, &s); err != nil {
		t.Fatal(err)
	}
	check := func(field, key string, want any) {
		t.Helper()
		if got := s.Properties[field][key]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s.%s = %v, want %v", field, key, got, want)
		}
	}
	check("to", "type", "string")
	check("to", "default", "bob@x.io")
	check("priority", "enum", []any{"low", "high"})
	check("count", "type", "integer")
	check("count", "default", 2)
	check("urgent", "type", "boolean")
	check("meta", "type", "string") // nested: shown as JSON text
	check("meta", "default", `{"k":"v"}`)
	check("remember", "type", "boolean")
	if _, ok := s.Properties["token"]["default"]; ok {
		t.Error("the secret field's value is in the form")
	}
	for _, want := range []string{`"send_mail"`, `to = "bob@x.io"`, "more characters", "token = [hidden]"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	if strings.Contains(f.Message, "s3cret") || strings.Contains(string(f.Schema), "s3cret") {
		t.Error("the secret reached the form")
	}
}

func TestRememberKeyAvoidsArguments(t *testing.T) {
	tool := tools.New(tools.Info{Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"remember":{"type":"string"}}}`)}, nil)
	f, err := approval.NewForm(tool.Info(), json.RawMessage(`{"remember":"milk"}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.RememberKey == "remember" {
		t.Fatal("the remember box took the name of an argument")
	}
	out, err := f.Decide(json.RawMessage(`{"remember":"milk"}`), approval.Answer{Action: "accept", Content: map[string]any{f.RememberKey: true}}, nil)
	if err != nil || out.Decision != approval.Approve || !out.Remember {
		t.Errorf("outcome = %+v %v", out, err)
	}
}

func TestDecide(t *testing.T) {
	v := schema.MustCompile(mail.Info().InputSchema)
	tests := []struct {
		name     string
		answer   approval.Answer
		want     approval.Decision
		reason   string
		argsHas  string
		remember bool
		errKind  tools.Kind
	}{
		{"accept unchanged", approval.Answer{Action: "accept"}, approval.Approve, "", "bob@x.io", false, ""},
		{"accept with the same values", approval.Answer{Action: "accept", Content: map[string]any{"to": "bob@x.io", "count": 2}}, approval.Approve, "", "", false, ""},
		{"edit", approval.Answer{Action: "accept", Content: map[string]any{"to": "eve@x.io", "remember": true}}, approval.Edit, "", `"to":"eve@x.io"`, true, ""},
		{"edit nested JSON", approval.Answer{Action: "accept", Content: map[string]any{"meta": `{"k":"w"}`}}, approval.Edit, "", `"meta":{"k":"w"}`, false, ""},
		{"secret left empty keeps the value", approval.Answer{Action: "accept", Content: map[string]any{"token": ""}}, approval.Approve, "", "", false, ""},
		{"edit breaking the tool's schema", approval.Answer{Action: "accept", Content: map[string]any{"to": "BOB"}}, 0, "", "", false, tools.KindInvalidArguments},
		{"answer not fitting the form", approval.Answer{Action: "accept", Content: map[string]any{"count": "two"}}, approval.Reject, "did not fit the form", "", false, ""},
		{"unknown field", approval.Answer{Action: "accept", Content: map[string]any{"cc": "x"}}, approval.Approve, "", "", false, ""},
		{"nested JSON broken", approval.Answer{Action: "accept", Content: map[string]any{"meta": `{"k":`}}, approval.Reject, "not valid JSON", "", false, ""},
		{"decline", approval.Answer{Action: "decline"}, approval.Reject, "Rejected by reviewer: ", "", false, ""},
		{"cancel", approval.Answer{Action: "cancel"}, approval.Reject, "cancelled by the user", "", false, ""},
		{"nonsense", approval.Answer{Action: "maybe"}, approval.Reject, "not accept, decline or cancel", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := form(t).Decide(args, tt.answer, v)
			if tt.errKind != "" {
				var te *tools.Error
				if !errors.As(err, &te) || te.Kind != tt.errKind {
					t.Fatalf("err = %v, want kind %s", err, tt.errKind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Decision != tt.want || !strings.Contains(out.Reason, tt.reason) || !strings.Contains(string(out.Args), tt.argsHas) || out.Remember != tt.remember {
				t.Errorf("outcome = %+v", out)
			}
			if strings.Contains(out.Reason, "s3cret") {
				t.Error("the secret is in the reason")
			}
		})
	}
}

func TestSigner(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := approval.NewSigner(time.Minute)
	approval.SetClock(s, func() time.Time { return now })
	b := approval.Binding{Session: "s1", Tool: "send_mail", Args: json.RawMessage(`{"a":1,"b":2}`)}
	state := s.Sign(b)

	if err := s.Verify(state, approval.Binding{Session: "s2", Tool: b.Tool, Args: b.Args}); !errors.Is(err, approval.ErrMismatch) {
		t.Errorf("other session: %v", err)
	}
	if err := s.Verify(state, approval.Binding{Session: "s1", Tool: "other", Args: b.Args}); !errors.Is(err, approval.ErrMismatch) {
		t.Errorf("other tool: %v", err)
	}
	if err := s.Verify(state, approval.Binding{Session: "s1", Tool: b.Tool, Args: json.RawMessage(`{"a":1,"b":3}`)}); !errors.Is(err, approval.ErrMismatch) {
		t.Errorf("other args: %v", err)
	}
	for _, bad := range []string{"", "garbage", state + "x", "x" + state, strings.Replace(state, ".", ".A", 1)} {
		if err := s.Verify(bad, b); !errors.Is(err, approval.ErrForged) {
			t.Errorf("Verify(%q) = %v, want ErrForged", bad, err)
		}
	}
	if err := approval.NewSigner(time.Minute).Verify(state, b); !errors.Is(err, approval.ErrForged) {
		t.Errorf("another process's key: %v", err)
	}
	// Same arguments in another order and spacing: still this call.
	if err := s.Verify(state, approval.Binding{Session: "s1", Tool: b.Tool, Args: json.RawMessage(`{ "b": 2, "a": 1 }`)}); err != nil {
		t.Fatalf("genuine state: %v", err)
	}
	if err := s.Verify(state, b); !errors.Is(err, approval.ErrReplayed) {
		t.Errorf("replay: %v", err)
	}
	late := s.Sign(b)
	now = now.Add(2 * time.Minute)
	if err := s.Verify(late, b); !errors.Is(err, approval.ErrExpired) {
		t.Errorf("expired: %v", err)
	}
}

func TestMemory(t *testing.T) {
	var m approval.Memory
	m.Remember("s1", "send")
	if !m.Remembered("s1", "send") || m.Remembered("s2", "send") || m.Remembered("s1", "other") {
		t.Error("memory crosses sessions or tools")
	}
	m.Forget("s1")
	if m.Remembered("s1", "send") {
		t.Error("Forget did not forget")
	}
}

func TestPolicy(t *testing.T) {
	p := approval.Policy{Require: []string{"a"}, Exempt: []string{"b"}}
	for _, tt := range []struct {
		name string
		inGo bool
		want bool
	}{{"a", false, true}, {"b", true, false}, {"c", true, true}, {"c", false, false}} {
		if got := p.Gated(tt.name, tt.inGo); got != tt.want {
			t.Errorf("Gated(%s, %v) = %v", tt.name, tt.inGo, got)
		}
	}
	if err := (approval.Policy{Fallback: approval.FallbackWebhook}).Validate(); err == nil {
		t.Error("a webhook fallback without a webhook validated")
	}
	if _, err := approval.ParseFallback("maybe"); err == nil {
		t.Error("ParseFallback accepted nonsense")
	}
}

func TestWebhook(t *testing.T) {
	v := schema.MustCompile(mail.Info().InputSchema)
	tests := []struct {
		name    string
		reply   string
		status  int
		delay   time.Duration
		want    approval.Decision
		wantErr string
	}{
		{"approve", `{"decision":"approve"}`, 200, 0, approval.Approve, ""},
		{"reject with reason", `{"decision":"reject","reason":"not now"}`, 200, 0, approval.Reject, ""},
		{"edit", `{"decision":"edit","arguments":{"to":"eve@x.io","body":"hi"}}`, 200, 0, approval.Edit, ""},
		{"invalid edit", `{"decision":"edit","arguments":{"to":"EVE","body":"hi"}}`, 200, 0, 0, "edit is invalid"},
		{"slow", `{"decision":"approve"}`, 200, 2 * time.Second, 0, "deadline"},
		{"non-2xx", `{}`, 500, 0, 0, "HTTP 500"},
		{"malformed", `{"decision":`, 200, 0, 0, "not the expected JSON"},
		{"unknown decision", `{"decision":"perhaps"}`, 200, 0, 0, "unknown decision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got = string(b)
				select {
				case <-time.After(tt.delay):
				case <-r.Context().Done():
					return
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.reply)
			}))
			defer srv.Close()
			w := &approval.Webhook{URL: srv.URL, Timeout: 300 * time.Millisecond}
			out, err := w.Decide(context.Background(), approval.Request{Session: "s1"}, mail.Info(), args, v)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || out.Decision != tt.want {
				t.Fatalf("outcome = %+v %v", out, err)
			}
			if strings.Contains(got, "s3cret") || !strings.Contains(got, `"send_mail"`) {
				t.Errorf("webhook got %s: want the tool named and the secret hidden", got)
			}
		})
	}
}

func ExampleGate() {
	type sendIn struct {
		To   string `json:"to"`
		Body string `json:"body"`
	}
	send := approval.Gate(typed.MustNew("send_email", "Send an email.",
		func(_ context.Context, in sendIn) (string, error) { return "sent to " + in.To, nil }))
	fmt.Println(approval.IsGated(send), send.Info().Annotations.Destructive)
	// Output: true true
}

func TestWebhookEditKeepsHiddenSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req approval.Request
		json.NewDecoder(r.Body).Decode(&req)
		var m map[string]any
		json.Unmarshal(req.Arguments, &m)
		m["to"] = "eve@x.io" // edit one field, echo the rest as received
		b, _ := json.Marshal(map[string]any{"decision": "edit", "arguments": m})
		w.Write(b)
	}))
	defer srv.Close()
	out, err := (&approval.Webhook{URL: srv.URL}).Decide(context.Background(), approval.Request{}, mail.Info(), args, schema.MustCompile(mail.Info().InputSchema))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.Args), `"token":"s3cret"`) || !strings.Contains(string(out.Args), "eve@x.io") {
		t.Errorf("edited args = %s, want the edit with the model's secret back", out.Args)
	}
}
