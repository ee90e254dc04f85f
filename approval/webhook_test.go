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
	"testing/synctest"
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

// TestAskWebhookTimeout: a webhook that never answers gets the policy's
// on-timeout decision once the approval timeout (or the webhook's own,
// shorter, timeout) runs out, not a webhook error.
func TestAskWebhookTimeout(t *testing.T) {
	h := &hook{reply: reply{hang: true}}
	srv := h.start(t)
	tests := []struct {
		name           string
		policyTimeout  time.Duration
		webhookTimeout time.Duration
		onTimeout      approval.Decision
		wantReason     string
	}{
		{name: "approve, the webhook's timeout unset", policyTimeout: 100 * time.Millisecond, onTimeout: approval.Approve},
		{name: "approve, the webhook's timeout longer", policyTimeout: 100 * time.Millisecond, webhookTimeout: 30 * time.Second, onTimeout: approval.Approve},
		{name: "approve, the webhook's timeout shorter", policyTimeout: time.Minute, webhookTimeout: 100 * time.Millisecond, onTimeout: approval.Approve},
		{name: "reject", policyTimeout: 100 * time.Millisecond, onTimeout: approval.Reject,
			wantReason: "Rejected: no approval decision within 100ms; the tool did not run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := approval.Policy{Timeout: tt.policyTimeout, OnTimeout: tt.onTimeout, Fallback: approval.FallbackWebhook,
				Webhook: &approval.Webhook{URL: srv.URL, Timeout: tt.webhookTimeout}}
			out, err := p.AskWebhook(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil)
			if err != nil {
				t.Fatalf("AskWebhook = %v, want the on-timeout decision", err)
			}
			if out.Decision != tt.onTimeout || out.By != "timeout" {
				t.Fatalf("AskWebhook = %+v, want %s by timeout", out, tt.onTimeout)
			}
			if tt.onTimeout == approval.Approve && string(out.Args) != string(mailArgs) {
				t.Errorf("approved args = %s, want the model's: %s", out.Args, mailArgs)
			}
			if out.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", out.Reason, tt.wantReason)
			}
		})
	}
}

// TestAskWebhookOtherOutcomes: an answer is the answer, a failure is an
// error (not a timeout), and a caller that gives up gets its own error.
func TestAskWebhookOtherOutcomes(t *testing.T) {
	answer := (&hook{reply: reply{status: 200, body: `{"decision":"reject","reason":"no"}`}}).start(t)
	broken := (&hook{reply: reply{status: 503}}).start(t)
	hang := (&hook{reply: reply{hang: true}}).start(t)
	policy := func(url string) approval.Policy {
		return approval.Policy{Timeout: time.Minute, OnTimeout: approval.Approve, Fallback: approval.FallbackWebhook, Webhook: &approval.Webhook{URL: url}}
	}

	out, err := policy(answer.URL).AskWebhook(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil)
	if err != nil || out.Decision != approval.Reject || out.By != "webhook" || out.Reason != "Rejected by reviewer: no" {
		t.Errorf("AskWebhook with an answer = %+v, %v; want the webhook's rejection", out, err)
	}
	out, err = policy(broken.URL).AskWebhook(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil)
	if err == nil || errors.Is(err, approval.ErrNoAnswer) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("AskWebhook with a failing webhook = %+v, %v; want the HTTP 503 error", out, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	out, err = policy(hang.URL).AskWebhook(ctx, approval.Request{}, mail.Info(), mailArgs, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AskWebhook after the caller's deadline = %+v, %v; want the caller's context error, not the on-timeout decision", out, err)
	}
	if _, err := (approval.Policy{}).AskWebhook(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil); err == nil {
		t.Error("AskWebhook without a webhook = nil error, want one")
	}
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWebhookFollowsTheApprovalTimeout is the reported case, with the
// default timeouts on a fake clock: the approval waits 5 minutes and says
// approve on timeout; a webhook with no timeout of its own must wait those
// 5 minutes, not give up after DefaultWebhookTimeout (30 s).
func TestWebhookFollowsTheApprovalTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		silent := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})}
		p := approval.Policy{OnTimeout: approval.Approve, Fallback: approval.FallbackWebhook,
			Webhook: &approval.Webhook{URL: "http://hook.invalid/decide", Client: silent}}
		start := time.Now()
		out, err := p.AskWebhook(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil)
		if err != nil || out.Decision != approval.Approve || out.By != "timeout" {
			t.Fatalf("AskWebhook = %+v, %v; want approve by timeout", out, err)
		}
		if waited := time.Since(start); waited != approval.DefaultTimeout {
			t.Errorf("waited %s for the webhook, want the approval timeout, %s", waited, approval.DefaultTimeout)
		}

		// Decide alone, under the approval's deadline, reports no answer
		// at that deadline, as ErrNoAnswer.
		ctx, cancel := context.WithTimeout(context.Background(), approval.DefaultTimeout)
		defer cancel()
		start = time.Now()
		_, err = p.Webhook.Decide(ctx, approval.Request{}, mail.Info(), mailArgs, nil)
		if !errors.Is(err, approval.ErrNoAnswer) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Decide = %v, want ErrNoAnswer and context.DeadlineExceeded", err)
		}
		if waited := time.Since(start); waited != approval.DefaultTimeout {
			t.Errorf("Decide waited %s, want the caller's deadline, %s", waited, approval.DefaultTimeout)
		}

		// Without a deadline from the caller, the webhook's default bounds it.
		start = time.Now()
		_, err = p.Webhook.Decide(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil)
		if !errors.Is(err, approval.ErrNoAnswer) {
			t.Errorf("Decide = %v, want ErrNoAnswer", err)
		}
		if waited := time.Since(start); waited != approval.DefaultWebhookTimeout {
			t.Errorf("Decide waited %s, want DefaultWebhookTimeout, %s", waited, approval.DefaultWebhookTimeout)
		}
	})
}

// TestWebhookEditOfALargeInteger: a reviewer who corrects an integer past
// 2^53 gets the correction run, even though both round to one float64.
func TestWebhookEditOfALargeInteger(t *testing.T) {
	info := tools.Info{Name: "transfer", InputSchema: json.RawMessage(`{"type":"object","properties":{"account":{"type":"integer"}}}`)}
	args := json.RawMessage(`{"account":12345678901234567}`)
	h := &hook{reply: reply{status: 200, body: `{"decision":"edit","arguments":{"account":12345678901234569}}`}}
	srv := h.start(t)
	w := &approval.Webhook{URL: srv.URL}
	out, err := w.Decide(context.Background(), approval.Request{Session: "s1"}, info, args, schema.MustCompile(info.InputSchema))
	if err != nil {
		t.Fatal(err)
	}
	if out.Decision != approval.Edit || !strings.Contains(string(out.Args), "12345678901234569") {
		t.Errorf("Decide = %s %s, want edit with the account 12345678901234569", out.Decision, out.Args)
	}
}

// TestWebhookFollowsNoRedirect: a webhook that redirects does not get its
// question, its configured headers (a token) or its decision taken from
// wherever it points; the redirect is a failure, and so a denial.
func TestWebhookFollowsNoRedirect(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			var reached sync.Mutex
			var got []string
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached.Lock()
				got = append(got, r.Method+" X-Api-Key="+r.Header.Get("X-Api-Key"))
				reached.Unlock()
				io.WriteString(w, `{"decision":"approve"}`)
			}))
			t.Cleanup(elsewhere.Close)
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+"/decide", code)
			}))
			t.Cleanup(hook.Close)
			w := &approval.Webhook{URL: hook.URL, Headers: map[string]string{"X-Api-Key": "k3y"}}
			out, err := w.Decide(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil)
			if err == nil || !strings.Contains(err.Error(), "want 2xx") {
				t.Errorf("Decide after a %d redirect = %+v, %v; want an HTTP %d error", code, out.Decision, err, code)
			}
			reached.Lock()
			defer reached.Unlock()
			if len(got) != 0 {
				t.Errorf("the redirect was followed: the other server received %v", got)
			}
		})
	}
}

// TestWebhookErrorsHideTheURL: the URL may carry a token; an error, which
// the model reads in the rejection, never shows it, and a policy whose URL
// cannot work is refused at start-up, without the URL either.
func TestWebhookErrorsHideTheURL(t *testing.T) {
	for _, u := range []string{
		"https://hooks.example/abc%zz?token=SECRET",
		"https://hooks.example/abc?token=SECRET\n",
		"ftp://hooks.example/abc?token=SECRET",
		"hooks.example/abc?token=SECRET",
		"https://user:SECRET@/abc",
	} {
		t.Run(u, func(t *testing.T) {
			w := &approval.Webhook{URL: u}
			_, err := w.Decide(context.Background(), approval.Request{}, mail.Info(), mailArgs, nil)
			if err == nil || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("Decide = %v, want an error that does not show the URL", err)
			}
			err = approval.Policy{Fallback: approval.FallbackWebhook, Webhook: w}.Validate()
			if err == nil || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("Validate = %v, want an error that does not show the URL", err)
			}
		})
	}
	if err := (approval.Policy{Fallback: approval.FallbackWebhook, Webhook: &approval.Webhook{URL: "https://hooks.example/decide?token=SECRET"}}).Validate(); err != nil {
		t.Errorf("Validate of a good webhook URL = %v", err)
	}
}
