package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// reply is what a test webhook answers: status and body, or nothing
// until the caller gives up when hang.
type reply struct {
	status int
	body   string
	hang   bool
}

// hook is a webhook test server: it records what it received and answers
// with its reply.
type hook struct {
	reply

	mu                        sync.Mutex
	method, contentType, auth string
	got                       map[string]any
}

func (h *hook) start(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.method, h.contentType, h.auth = r.Method, r.Header.Get("Content-Type"), r.Header.Get("Authorization")
		h.got = nil
		_ = json.Unmarshal(body, &h.got)
		h.mu.Unlock()
		if h.hang {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(h.status)
		io.WriteString(w, h.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWebhookDecide(t *testing.T) {
	v := schema.MustCompile(mail.Info().InputSchema)
	tests := []struct {
		name    string
		hook    reply
		limit   int64
		want    approval.Decision
		args    map[string]any // with Edit: fields the edited args must hold
		reason  string         // with Reject: the reason
		errKind tools.Kind     // an error of this kind
		errMsg  string         // an error containing this
	}{
		{name: "approve", hook: reply{status: 200, body: `{"decision":"approve"}`}, want: approval.Approve},
		{name: "approve with another 2xx", hook: reply{status: 201, body: `{"decision":"approve","reason":"fine"}`}, want: approval.Approve},
		{name: "reject with a reason", hook: reply{status: 200, body: `{"decision":"reject","reason":"not on a Friday"}`},
			want: approval.Reject, reason: "Rejected by reviewer: not on a Friday"},
		{name: "reject without a reason", hook: reply{status: 200, body: `{"decision":"reject"}`},
			want: approval.Reject, reason: "Rejected by reviewer: " + approval.Summary(mail.Info(), mailArgs, 0)},
		{name: "edit", hook: reply{status: 200, body: `{"decision":"edit","arguments":{"to":"eve@x.io","body":"hi"}}`},
			want: approval.Edit, args: map[string]any{"to": "eve@x.io", "body": "hi", "token": "s3cret"}},
		{name: "edit echoing the hidden secret", hook: reply{status: 200, body: `{"decision":"edit","arguments":{"to":"eve@x.io","body":"hi","token":"[hidden]"}}`},
			want: approval.Edit, args: map[string]any{"to": "eve@x.io", "token": "s3cret"}},
		{name: "edit setting a new secret", hook: reply{status: 200, body: `{"decision":"edit","arguments":{"to":"eve@x.io","body":"hi","token":"fresh"}}`},
			want: approval.Edit, args: map[string]any{"token": "fresh"}},
		{name: "edit changing nothing", hook: reply{status: 200, body: `{"decision":"edit","arguments":` + string(mailArgs) + `}`}, want: approval.Approve},
		{name: "edit breaking the schema", hook: reply{status: 200, body: `{"decision":"edit","arguments":{"to":"EVE","body":"hi"}}`},
			errKind: tools.KindInvalidArguments, errMsg: `the reviewer's edit is invalid: field "to"`},
		{name: "edit without arguments", hook: reply{status: 200, body: `{"decision":"edit"}`}, errMsg: `an "edit" answer needs "arguments", a JSON object`},
		{name: "edit with arguments not an object", hook: reply{status: 200, body: `{"decision":"edit","arguments":[1]}`}, errMsg: `an "edit" answer needs "arguments", a JSON object`},
		{name: "slow", hook: reply{hang: true}, errMsg: "approval webhook: no answer within 50ms"},
		{name: "non-2xx", hook: reply{status: 503, body: `{"decision":"approve"}`}, errMsg: "approval webhook: HTTP 503, want 2xx"},
		{name: "malformed JSON", hook: reply{status: 200, body: `{"decision":`}, errMsg: "the answer is not the expected JSON"},
		{name: "unknown decision", hook: reply{status: 200, body: `{"decision":"perhaps"}`}, errMsg: `unknown decision "perhaps": want approve, reject or edit`},
		{name: "answer over the cap", limit: 20, hook: reply{status: 200, body: `{"decision":"approve","reason":"` + strings.Repeat("x", 20) + `"}`},
			errMsg: "the answer is over 20 bytes"},
		{name: "answer at the cap", limit: 22, hook: reply{status: 200, body: `{"decision":"approve"}`}, want: approval.Approve},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hook{reply: tt.hook}
			srv := h.start(t)
			w := &approval.Webhook{URL: srv.URL, Timeout: 50 * time.Millisecond, MaxAnswerBytes: tt.limit}
			if !h.hang {
				w.Timeout = 0 // the default, 30 s: the server answers at once
			}
			out, err := w.Decide(context.Background(), approval.Request{Session: "s1"}, mail.Info(), mailArgs, v)
			if tt.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMsg) {
					t.Fatalf("Decide = %+v, %v; want an error containing %q", out, err, tt.errMsg)
				}
				if tt.errKind != "" && !errors.Is(err, &tools.Error{Kind: tt.errKind}) {
					t.Errorf("Decide error %v is not of kind %s", err, tt.errKind)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if out.Decision != tt.want || out.By != "webhook" || out.Remember {
				t.Errorf("Decide = %+v, want %s by webhook", out, tt.want)
			}
			switch tt.want {
			case approval.Approve:
				if string(out.Args) != string(mailArgs) {
					t.Errorf("approved args = %s, want the model's: %s", out.Args, mailArgs)
				}
			case approval.Reject:
				if out.Reason != tt.reason {
					t.Errorf("reason = %q, want %q", out.Reason, tt.reason)
				}
			case approval.Edit:
				var got map[string]any
				if err := json.Unmarshal(out.Args, &got); err != nil {
					t.Fatal(err)
				}
				for k, want := range tt.args {
					if !reflect.DeepEqual(got[k], want) {
						t.Errorf("edited %s = %v, want %v (args %s)", k, got[k], want, out.Args)
					}
				}
			}
		})
	}
}

func TestWebhookRequest(t *testing.T) {
	h := &hook{reply: reply{status: 200, body: `{"decision":"approve"}`}}
	srv := h.start(t)
	w := &approval.Webhook{URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer abc"}}
	_, err := w.Decide(context.Background(), approval.Request{Tool: "ignored", Session: "s1", ClientName: "claude"}, mail.Info(), mailArgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.method != http.MethodPost || h.contentType != "application/json" || h.auth != "Bearer abc" {
		t.Errorf("request: %s, Content-Type %q, Authorization %q; want POST, application/json, the configured header", h.method, h.contentType, h.auth)
	}
	args, _ := h.got["arguments"].(map[string]any)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{name: "tool", got: h.got["tool"], want: "send_mail"},
		{name: "session", got: h.got["session"], want: "s1"},
		{name: "client_name", got: h.got["client_name"], want: "claude"},
		{name: "summary", got: h.got["summary"], want: approval.Summary(mail.Info(), mailArgs, 0)},
		{name: "arguments.to", got: args["to"], want: "bob@x.io"},
		{name: "arguments.meta", got: args["meta"], want: map[string]any{"k": "v"}},
		{name: "secret hidden", got: args["token"], want: "[hidden]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("webhook received %s = %v, want %v", tt.name, tt.got, tt.want)
			}
		})
	}
	if b, _ := json.Marshal(h.got); strings.Contains(string(b), "s3cret") {
		t.Errorf("webhook received the secret: %s", b)
	}
}

// TestWebhookSecretCaseVariants: a secret the model spelled in another
// case is hidden from the webhook, and an edit that echoes it back hidden
// keeps the model's value.
func TestWebhookSecretCaseVariants(t *testing.T) {
	args := json.RawMessage(`{"to":"bob@x.io","body":"hi","TOKEN":"s3cret"}`)
	h := &hook{reply: reply{status: 200, body: `{"decision":"edit","arguments":{"to":"eve@x.io","body":"hi","TOKEN":"[hidden]"}}`}}
	srv := h.start(t)
	out, err := (&approval.Webhook{URL: srv.URL}).Decide(context.Background(), approval.Request{}, mail.Info(), args, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	b, _ := json.Marshal(h.got)
	h.mu.Unlock()
	if strings.Contains(string(b), "s3cret") {
		t.Errorf("webhook received the secret: %s", b)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Args, &got); err != nil {
		t.Fatal(err)
	}
	if out.Decision != approval.Edit || got["TOKEN"] != "s3cret" || got["to"] != "eve@x.io" {
		t.Errorf("Decide = %s with %s, want edit with to eve@x.io and the model's TOKEN", out.Decision, out.Args)
	}
}

func TestWebhookCallerCancels(t *testing.T) {
	h := &hook{reply: reply{hang: true}}
	srv := h.start(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&approval.Webhook{URL: srv.URL}).Decide(ctx, approval.Request{}, mail.Info(), mailArgs, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Decide with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestWebhookNoURL(t *testing.T) {
	if _, err := (&approval.Webhook{}).Decide(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil); err == nil {
		t.Error("Decide without a URL = nil error, want one")
	}
}
