package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

type sendIn struct {
	To   string `json:"to" jsonschema:"pattern=^[a-z]+$"`
	Body string `json:"body" jsonschema:"maxLength=40"`
}

// outbox records what the gated send tool really sent.
type outbox struct {
	mu   sync.Mutex
	sent []string
}

func (o *outbox) tool() tools.Tool {
	return approval.Gate(typed.MustNew("send", "Send a message.", func(_ context.Context, in sendIn) (string, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.sent = append(o.sent, in.To+":"+in.Body)
		return "sent " + in.Body + " to " + in.To, nil
	}))
}

func (o *outbox) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.sent...)
}

// reviewer answers elicitations with decide, and records what it was asked.
type reviewer struct {
	decide func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
	asked  atomic.Int64
	last   atomic.Value // mcp.ElicitationRequest
}

func (r *reviewer) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	r.asked.Add(1)
	r.last.Store(req)
	return r.decide(req)
}

func answer(action mcp.ElicitationResponseAction, content map[string]any) *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: content}}
}

// fieldDefault reads the default a form shows for field.
func fieldDefault(req mcp.ElicitationRequest, field string) any {
	b, _ := json.Marshal(req.Params.RequestedSchema)
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(b, &s)
	return s.Properties[field].Default
}

// gatedClient connects a legacy (initialize-handshake) client over
// streamable HTTP, declaring elicitation when rv is not nil.
func gatedClient(t *testing.T, url string, rv *reviewer, modern bool) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var opts []client.ClientOption
	if rv != nil {
		opts = append(opts, client.WithElicitationHandler(rv))
	}
	c := client.NewClient(tr, opts...)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "approval-test", Version: "1"}
	if !modern {
		req.Params.ProtocolVersion = "2025-06-18"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

func startGated(t *testing.T, o *outbox, policy approval.Policy) string {
	t.Helper()
	reg, err := tools.NewRegistry(append(testTools(), o.tool())...)
	if err != nil {
		t.Fatal(err)
	}
	return startRegistry(t, reg, server.Options{Approval: policy})
}

func TestApprovalDecisions(t *testing.T) {
	for _, era := range []struct {
		name   string
		modern bool
	}{{"legacy elicitation/create", false}, {"multi round-trip", true}} {
		t.Run(era.name, func(t *testing.T) {
			tests := []struct {
				name     string
				decide   func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
				wantErr  string // substring of an error result; "" means success
				wantKind string
				wantSent []string
			}{
				{"approve", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					return answer(mcp.ElicitationResponseActionAccept, nil), nil
				}, "", "", []string{"bob:hello"}},
				{"reject", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					return answer(mcp.ElicitationResponseActionDecline, nil), nil
				}, "Rejected by reviewer: ", "approval_denied", nil},
				{"cancel", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					return answer(mcp.ElicitationResponseActionCancel, nil), nil
				}, "cancelled by the user", "approval_denied", nil},
				{"edit", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					return answer(mcp.ElicitationResponseActionAccept, map[string]any{"body": "edited"}), nil
				}, "", "", []string{"bob:edited"}},
				{"edit that breaks the tool's schema", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					return answer(mcp.ElicitationResponseActionAccept, map[string]any{"to": "Bob!"}), nil
				}, "the reviewer's edit is invalid", "invalid_arguments", nil},
				{"edit that breaks the form's limits", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					return answer(mcp.ElicitationResponseActionAccept, map[string]any{"body": strings.Repeat("x", 100)}), nil
				}, "maxLength 40", "approval_denied", nil},
				{"answer that does not fit the form", func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					return answer(mcp.ElicitationResponseActionAccept, map[string]any{"body": 42}), nil
				}, "did not fit the form", "approval_denied", nil},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					var o outbox
					url := startGated(t, &o, approval.Policy{})
					rv := &reviewer{decide: tt.decide}
					c := gatedClient(t, url, rv, era.modern)
					res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "hello"})
					if rv.asked.Load() != 1 {
						t.Errorf("the reviewer was asked %d times, want once", rv.asked.Load())
					}
					switch {
					case tt.wantKind != "":
						if !res.IsError || errorKind(res) != tt.wantKind || !strings.Contains(resultText(res), tt.wantErr) {
							t.Errorf("result = %v %q kind %q, want a %s error containing %q", res.IsError, resultText(res), errorKind(res), tt.wantKind, tt.wantErr)
						}
					case res.IsError:
						t.Errorf("result = %q, want success", resultText(res))
					}
					if got := o.list(); fmt.Sprint(got) != fmt.Sprint(tt.wantSent) {
						t.Errorf("sent %v, want %v", got, tt.wantSent)
					}
				})
			}
		})
	}
}

func TestApprovalForm(t *testing.T) {
	var o outbox
	url := startGated(t, &o, approval.Policy{})
	rv := &reviewer{decide: func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		return answer(mcp.ElicitationResponseActionDecline, nil), nil
	}}
	c := gatedClient(t, url, rv, false)
	mustCall(t, c, "send", map[string]any{"to": "bob", "body": "hello"})
	req := rv.last.Load().(mcp.ElicitationRequest)
	if !strings.Contains(req.Params.Message, "send") || !strings.Contains(req.Params.Message, "hello") {
		t.Errorf("message %q does not say which tool wants to run with what", req.Params.Message)
	}
	if got := fieldDefault(req, "body"); got != "hello" {
		t.Errorf("body default = %v, want the model's value", got)
	}
	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == "send" && (tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
			t.Error("a gated tool is not published as destructive")
		}
	}
}

func TestApprovalRememberForSession(t *testing.T) {
	var o outbox
	url := startGated(t, &o, approval.Policy{})
	rv := &reviewer{decide: func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		return answer(mcp.ElicitationResponseActionAccept, map[string]any{"remember": true}), nil
	}}
	c := gatedClient(t, url, rv, false)
	mustCall(t, c, "send", map[string]any{"to": "a", "body": "1"})
	mustCall(t, c, "send", map[string]any{"to": "b", "body": "2"})
	if n := rv.asked.Load(); n != 1 {
		t.Errorf("asked %d times in one session after 'remember', want 1", n)
	}
	other := gatedClient(t, url, rv, false)
	mustCall(t, other, "send", map[string]any{"to": "c", "body": "3"})
	if n := rv.asked.Load(); n != 2 {
		t.Errorf("a new session was not asked again (asked %d times)", n)
	}
	if got := len(o.list()); got != 3 {
		t.Errorf("sent %d, want 3", got)
	}
}

func TestApprovalTimeout(t *testing.T) {
	var o outbox
	url := startGated(t, &o, approval.Policy{Timeout: 300 * time.Millisecond})
	rv := &reviewer{decide: func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		time.Sleep(2 * time.Second)
		return answer(mcp.ElicitationResponseActionAccept, nil), nil
	}}
	c := gatedClient(t, url, rv, false)
	res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "late"})
	if !res.IsError || !strings.Contains(resultText(res), "no approval decision within 300ms") {
		t.Errorf("timed-out approval = %v %q", res.IsError, resultText(res))
	}
	if len(o.list()) != 0 {
		t.Errorf("sent %v after a timeout", o.list())
	}
}

func TestApprovalWithoutElicitation(t *testing.T) {
	t.Run("deny by default", func(t *testing.T) {
		var o outbox
		url := startGated(t, &o, approval.Policy{})
		c := gatedClient(t, url, nil, false)
		res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "x"})
		if !res.IsError || !strings.Contains(resultText(res), "Tool 'send' requires approval but the connected client does not support elicitation") {
			t.Errorf("result = %q", resultText(res))
		}
		if len(o.list()) != 0 {
			t.Error("the gated tool ran without approval")
		}
	})
	t.Run("allow", func(t *testing.T) {
		var o outbox
		url := startGated(t, &o, approval.Policy{Fallback: approval.FallbackAllow})
		c := gatedClient(t, url, nil, false)
		if res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "x"}); res.IsError {
			t.Errorf("allow fallback = %q", resultText(res))
		}
		if len(o.list()) != 1 {
			t.Error("the allow fallback did not run the tool")
		}
	})
	t.Run("sse sessions get the fallback", func(t *testing.T) {
		var o outbox
		reg, _ := tools.NewRegistry(append(testTools(), o.tool())...)
		url := serveRegistry(t, reg, server.TransportSSE, server.Options{})
		c := sseClient(t, url, nil)
		res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "x"})
		if !res.IsError || errorKind(res) != "approval_denied" {
			t.Errorf("gated call over SSE = %q", resultText(res))
		}
		// The message blames the transport, not the client, and names the
		// way out.
		if text := resultText(res); !strings.Contains(text, "SSE transport cannot carry") || !strings.Contains(text, "--transport http") {
			t.Errorf("gated call over SSE says %q; want it to name the transport and suggest streamable HTTP", text)
		}
	})
}

func TestApprovalWebhook(t *testing.T) {
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		wantSent []string
		wantText string
	}{
		{"approve", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"decision":"approve"}`) }, []string{"bob:x"}, "sent x"},
		{"reject", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"decision":"reject","reason":"not today"}`)
		}, nil, "not today"},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
			io.WriteString(w, `{"decision":"approve"}`)
		}, nil, "no approval decision within"},
		{"malformed", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"decision":`) }, nil, "Rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got atomic.Value
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got.Store(string(b))
				r.Body = io.NopCloser(bytes.NewReader(b))
				tt.handler(w, r)
			}))
			defer hook.Close()
			var o outbox
			url := startGated(t, &o, approval.Policy{Fallback: approval.FallbackWebhook, Timeout: 500 * time.Millisecond, Webhook: &approval.Webhook{URL: hook.URL}})
			c := gatedClient(t, url, nil, false)
			res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "x"})
			if !strings.Contains(resultText(res), tt.wantText) {
				t.Errorf("result = %q, want it to contain %q", resultText(res), tt.wantText)
			}
			if fmt.Sprint(o.list()) != fmt.Sprint(tt.wantSent) {
				t.Errorf("sent %v, want %v", o.list(), tt.wantSent)
			}
			if body, _ := got.Load().(string); !strings.Contains(body, `"send"`) {
				t.Errorf("webhook got %q, want the tool named", body)
			}
		})
	}
}

func TestApprovalConcurrentCallsGetTheirOwnAnswers(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprintf("modern=%v", modern), func(t *testing.T) {
			var o outbox
			url := startGated(t, &o, approval.Policy{})
			rv := &reviewer{decide: func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				body, _ := fieldDefault(req, "body").(string)
				var i int
				fmt.Sscanf(body, "call-%d", &i)
				time.Sleep(time.Duration(20-i) * time.Millisecond) // answer out of order
				switch i % 3 {
				case 0:
					return answer(mcp.ElicitationResponseActionAccept, nil), nil
				case 1:
					return answer(mcp.ElicitationResponseActionDecline, nil), nil
				default:
					return answer(mcp.ElicitationResponseActionAccept, map[string]any{"body": fmt.Sprintf("edited-%d", i)}), nil
				}
			}}
			c := gatedClient(t, url, rv, modern)
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Go(func() {
					res, err := callTool(t, c, "send", map[string]any{"to": "x", "body": fmt.Sprintf("call-%d", i)})
					if err != nil {
						t.Errorf("call %d: %v", i, err)
						return
					}
					var want string
					switch i % 3 {
					case 0:
						want = fmt.Sprintf("sent call-%d to x", i)
					case 1:
						want = "Error: Rejected by reviewer"
					default:
						want = fmt.Sprintf("sent edited-%d to x", i)
					}
					if !strings.HasPrefix(resultText(res), want) {
						t.Errorf("call %d = %q, want %q", i, resultText(res), want)
					}
				})
			}
			wg.Wait()
			if n := len(o.list()); n != 13 {
				t.Errorf("sent %d messages, want 13 (7 approved, 6 edited)", n)
			}
		})
	}
}

// TestApprovalOverStdio asks a person through a real stdio pipe, on both
// paths: elicitation/create for a legacy client, input_required for a
// modern one.
func TestApprovalOverStdio(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprintf("modern=%v", modern), func(t *testing.T) {
			rv := &reviewer{}
			rv.decide = func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				if fieldDefault(req, "body") == "no" {
					return answer(mcp.ElicitationResponseActionDecline, nil), nil
				}
				return answer(mcp.ElicitationResponseActionAccept, nil), nil
			}
			tr := transport.NewStdioWithOptions(os.Args[0], []string{childEnv + "=1"}, []string{"-test.run=^$"})
			c := client.NewClient(tr, client.WithElicitationHandler(rv))
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			req := mcp.InitializeRequest{}
			req.Params.ClientInfo = mcp.Implementation{Name: "stdio-approval", Version: "1"}
			if !modern {
				req.Params.ProtocolVersion = "2025-06-18"
			}
			if _, err := c.Initialize(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			if res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "yes"}); resultText(res) != "sent yes to bob" {
				t.Errorf("approved call = %q", resultText(res))
			}
			if res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "no"}); errorKind(res) != "approval_denied" {
				t.Errorf("rejected call = %q", resultText(res))
			}
			if rv.asked.Load() != 2 {
				t.Errorf("asked %d times, want 2", rv.asked.Load())
			}
		})
	}
}

// modernPost sends one 2026-07-28 request over raw HTTP and returns the
// JSON-RPC result.
func modernPost(t *testing.T, url string, params map[string]any) map[string]any {
	t.Helper()
	meta := map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
		mcp.MetaKeyClientInfo:         map[string]any{"name": "raw-modern", "version": "1"},
	}
	params["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, fmt.Sprint(params["name"]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	data := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				data = []byte(strings.TrimSpace(d))
			}
		}
	}
	var msg struct {
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil || msg.Result == nil {
		t.Fatalf("status %d, response %s: no result (%v, %v)", resp.StatusCode, raw, err, msg.Error)
	}
	return msg.Result
}

func acceptResponse(t *testing.T) map[string]any {
	t.Helper()
	b, _ := json.Marshal(mcp.NewElicitationInputResponse(*answer(mcp.ElicitationResponseActionAccept, nil)))
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return map[string]any{"approval": m}
}

func TestApprovalStateIntegrity(t *testing.T) {
	var o outbox
	url := startGated(t, &o, approval.Policy{})
	args := map[string]any{"to": "bob", "body": "hi"}
	first := modernPost(t, url, map[string]any{"name": "send", "arguments": args})
	state, _ := first["requestState"].(string)
	if first["resultType"] != "input_required" || state == "" {
		t.Fatalf("first leg = %v, want input_required with a state", first)
	}
	if len(o.list()) != 0 {
		t.Fatal("the tool ran before the answer")
	}
	retry := func(name string, args map[string]any, state string) map[string]any {
		return modernPost(t, url, map[string]any{"name": name, "arguments": args, "requestState": state, "inputResponses": acceptResponse(t)})
	}
	refused := func(r map[string]any) bool { return r["isError"] == true }

	tampered := state[:len(state)-2] + "AA"
	if r := retry("send", args, tampered); !refused(r) {
		t.Errorf("tampered state accepted: %v", r)
	}
	if r := retry("send", map[string]any{"to": "eve", "body": "hi"}, state); !refused(r) {
		t.Errorf("state for other arguments accepted: %v", r)
	}
	if r := retry("send", args, "forged-state"); !refused(r) {
		t.Errorf("forged state accepted: %v", r)
	}
	if len(o.list()) != 0 {
		t.Fatalf("sent %v on a bad state", o.list())
	}
	if r := retry("send", args, state); refused(r) {
		t.Fatalf("the genuine answer was refused: %v", r)
	}
	if r := retry("send", args, state); !refused(r) {
		t.Errorf("replayed state accepted: %v", r)
	}
	if got := o.list(); len(got) != 1 {
		t.Errorf("sent %v, want exactly one message", got)
	}
}

// TestMoreWaitingCallsThanWorkers: with two stdio workers, six gated calls
// wait for a person at once; the transport stays free: pings are answered
// and every call gets its own answer.
func TestMoreWaitingCallsThanWorkers(t *testing.T) {
	rv := &reviewer{decide: func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		time.Sleep(200 * time.Millisecond)
		return answer(mcp.ElicitationResponseActionAccept, nil), nil
	}}
	tr := transport.NewStdioWithOptions(os.Args[0], []string{childEnv + "=1", "MCP_TOOLS_TEST_MAX_IN_FLIGHT=2"}, []string{"-test.run=^$"})
	c := client.NewClient(tr, client.WithElicitationHandler(rv))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcp.Implementation{Name: "waiting", Version: "1"}
	if _, err := c.Initialize(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			body := fmt.Sprintf("m%d", i)
			res, err := callTool(t, c, "send", map[string]any{"to": "bob", "body": body})
			if err != nil || resultText(res) != "sent "+body+" to bob" {
				t.Errorf("call %d = %v %q", i, err, resultText(res))
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	// This client speaks 2025-06-18, where ping is still a request.
	if err := c.Ping(t.Context()); err != nil { //nolint:staticcheck // legacy session
		t.Errorf("ping while calls wait for a person: %v", err)
	}
	wg.Wait()
	if n := rv.asked.Load(); n != 6 {
		t.Errorf("asked %d times, want 6", n)
	}
}

// TestMadeUpStateDoesNotDodgeTheBudget: a retry spares the budget only
// with a state this server issued for that very call; anything else is
// refused before it runs, and the budget still holds.
func TestMadeUpStateDoesNotDodgeTheBudget(t *testing.T) {
	var o outbox
	reg, _ := tools.NewRegistry(append(testTools(), o.tool())...)
	url := startRegistry(t, reg, server.Options{MaxCallsPerSession: 1})
	args := map[string]any{"to": "bob", "body": "hi"}
	for range 3 {
		r := modernPost(t, url, map[string]any{"name": "send", "arguments": args, "requestState": "made-up", "inputResponses": acceptResponse(t)})
		if r["isError"] != true {
			t.Fatalf("a made-up state was accepted: %v", r)
		}
	}
	if len(o.list()) != 0 {
		t.Fatalf("sent %v with made-up states", o.list())
	}
	first := modernPost(t, url, map[string]any{"name": "send", "arguments": args})
	if first["resultType"] != "input_required" {
		t.Fatalf("a genuine first leg = %v", first)
	}
	if r := modernPost(t, url, map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}); r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "budget") {
		t.Errorf("the next call = %v, want the budget of 1 spent by the first leg", r)
	}
}

type deployIn struct {
	Service string `json:"service"`
	Env     string `json:"env,omitempty" jsonschema:"enum=staging,enum=production,default=production"`
}

// TestApprovalFormShowsDefaults: a typed tool applies its defaults after
// the approval, so the person must see them: a call that leaves env out
// deploys to production, and the form says so. Sent back as shown (what a
// client that pre-fills the form sends), it runs as the model made it.
func TestApprovalFormShowsDefaults(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprintf("modern=%v", modern), func(t *testing.T) {
			var mu sync.Mutex
			var ran []string
			deploy := approval.Gate(typed.MustNew("deploy", "Deploy a service.", func(_ context.Context, in deployIn) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, in.Service+"@"+in.Env)
				return "deployed " + in.Service + " to " + in.Env, nil
			}))
			reg, err := tools.NewRegistry(deploy)
			if err != nil {
				t.Fatal(err)
			}
			url := startRegistry(t, reg, server.Options{})
			rv := &reviewer{decide: func(req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				content := map[string]any{}
				for _, f := range []string{"service", "env", "remember"} {
					if d := fieldDefault(req, f); d != nil {
						content[f] = d
					}
				}
				return answer(mcp.ElicitationResponseActionAccept, content), nil
			}}
			c := gatedClient(t, url, rv, modern)
			res := mustCall(t, c, "deploy", map[string]any{"service": "api"})
			if res.IsError {
				t.Fatalf("call = %q", resultText(res))
			}
			req := rv.last.Load().(mcp.ElicitationRequest)
			if got := fieldDefault(req, "env"); got != "production" {
				t.Errorf("env on the form = %v, want production, which the tool runs with", got)
			}
			if !strings.Contains(req.Params.Message, `env = "production"`) {
				t.Errorf("message %q does not say the call runs with env = \"production\"", req.Params.Message)
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(ran) != "[api@production]" {
				t.Errorf("ran %v, want [api@production]", ran)
			}
		})
	}
}
