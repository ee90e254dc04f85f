package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/internal/testredis"
	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/state/redisstore"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

// sharedMemory is a Memory store that is not a *state.Memory, so servers
// given it behave as replicas of one fleet: two servers in one test
// process, sharing it, are two replicas.
type sharedMemory struct{ *state.Memory }

// fleetStores are the shared stores every fleet test runs against: the
// in-process stand-in, and a real redis-server.
var fleetStores = []struct {
	name string
	open func(t *testing.T) state.Store
}{
	{"memory", func(t *testing.T) state.Store {
		m := state.NewMemory()
		t.Cleanup(func() { m.Close() })
		return sharedMemory{m}
	}},
	{"redis", func(t *testing.T) state.Store {
		rs := testredis.Start(t)
		st, err := redisstore.Open(rs.URL(), redisstore.Options{Prefix: "fleet-test:"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
}

var fleetKey = []byte("a fleet's state key, 32 bytes or more")

// fleet is n replicas sharing one store and key, and a round-robin proxy in
// front of them with no stickiness, as nginx is configured in production.
type fleet struct {
	front    string
	replicas []string
	servers  []*server.Server
	stops    []func()
	outbox   *outbox
	// ran counts, per replica, the whoami calls it ran.
	ran []atomic.Int64
}

func startFleet(t *testing.T, n int, st state.Store, opts server.Options) *fleet {
	t.Helper()
	f := &fleet{outbox: &outbox{}, ran: make([]atomic.Int64, n)}
	opts.State = st
	if opts.Logger == nil && testing.Verbose() {
		opts.Logger = testLogger(os.Stderr, "debug", "text")
	}
	opts.StateKeys = server.StateKeys{Current: fleetKey}
	for i := range n {
		i := i
		here := typed.MustNew("here", "Say which replica ran the call.", func(context.Context, struct{}) (string, error) {
			f.ran[i].Add(1)
			return fmt.Sprintf("replica %d", i), nil
		})
		reg, err := tools.NewRegistry(append(testTools(), f.outbox.tool(), here)...)
		if err != nil {
			t.Fatal(err)
		}
		srv, u, stop, _ := launch(t, reg, server.TransportHTTP, opts)
		t.Cleanup(stop)
		f.servers, f.replicas, f.stops = append(f.servers, srv), append(f.replicas, u), append(f.stops, stop)
	}
	f.front = balancer(t, f.replicas, nil)
	return f
}

// balancer starts a round-robin proxy in front of replicas, with no
// stickiness, and returns its URL. outBody, when not nil, wraps the body
// of each request on its way to a replica.
func balancer(t *testing.T, replicas []string, outBody func(io.ReadCloser) io.ReadCloser) string {
	t.Helper()
	targets := make([]*url.URL, len(replicas))
	for i, r := range replicas {
		targets[i], _ = url.Parse(r)
	}
	var next atomic.Int64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[int(next.Add(1)-1)%len(targets)])
			if outBody != nil && r.Out.Body != nil {
				r.Out.Body = outBody(r.Out.Body)
			}
		},
		FlushInterval: -1,
	}
	// The body is read whole before it goes on, as nginx does
	// (proxy_request_buffering on): net/http's server closes a request's
	// body once the handler starts its response, and a replica may answer
	// before the proxy's transport is done reading it; that transport then
	// fails the request and closes the connection the answer streams on
	// (TestFleetBalancerKeepsAnEarlyStream).
	buffered := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		proxy.ServeHTTP(w, r)
	})
	ln := listen(t)
	hs := &http.Server{Handler: buffered}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

// lateReader holds back the read that follows the end of a body until
// release is closed, as a busy proxy's transport may (net/http reads a
// request body once more, after its Content-Length, to check that it
// ends there), and records that read's error in err before closing done.
type lateReader struct {
	io.ReadCloser
	size    int64 // the body's length
	read    int64
	release <-chan struct{}
	done    chan struct{}
	err     error
}

func (r *lateReader) Read(p []byte) (int, error) {
	if r.read >= r.size {
		<-r.release
		n, err := r.ReadCloser.Read(p)
		if err != io.EOF {
			r.err = err
		}
		close(r.done)
		return n, err
	}
	n, err := r.ReadCloser.Read(p)
	r.read += int64(n)
	return n, err
}

// The balancer must carry a replica's stream to the end even when the
// replica answers before the balancer's transport is done with the
// request's body: a replica answers a tools/call that asks for approval
// with an SSE stream at once. Go's HTTP/1 server drains and closes a
// request's body when the handler starts its response (golang/go#15527,
// #40747); a transport still reading it then fails the write of the
// request and closes the connection the replica's answer comes on, and
// the client reads "unexpected EOF" ("transport error: unexpected nil
// response" in mcp-go's client).
func TestFleetBalancerKeepsAnEarlyStream(t *testing.T) {
	headersOut := make(chan struct{})
	var release sync.Once
	defer release.Do(func() { close(headersOut) })
	var late atomic.Pointer[lateReader]
	replica := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		// The rest of the stream, once the balancer is done with the body.
		select {
		case <-late.Load().done:
		case <-time.After(10 * time.Second):
		}
		fmt.Fprint(w, "data: last\n\n")
	})}
	ln := listen(t)
	go replica.Serve(ln)
	t.Cleanup(func() { replica.Close() })
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send"}}`
	front := balancer(t, []string{"http://" + ln.Addr().String()}, func(b io.ReadCloser) io.ReadCloser {
		lr := &lateReader{ReadCloser: b, size: int64(len(body)), release: headersOut, done: make(chan struct{})}
		late.Store(lr)
		return lr
	})
	req, _ := http.NewRequest(http.MethodPost, front+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	release.Do(func() { close(headersOut) }) // the client has the response's head: the balancer wrote it
	got, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(got), "data: last") {
		why := "never made"
		select {
		case <-late.Load().done:
			why = fmt.Sprint(late.Load().err)
		case <-time.After(10 * time.Second):
		}
		t.Errorf("stream through the balancer = %q, %v (the balancer's late read of the request body: %s); want it whole", got, err, why)
	}
}

// session is a raw 2025-06-18 streamable HTTP session, to address each
// replica directly.
type session struct {
	t  *testing.T
	id string
}

func openFleetSession(t *testing.T, base string, elicit bool) *session {
	t.Helper()
	caps := map[string]any{}
	if elicit {
		caps["elicitation"] = map[string]any{}
	}
	resp, _ := post(t, base, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": caps, "clientInfo": map[string]any{"name": "fleet-test", "version": "1"}}})
	id := resp.Header.Get(mcp.HeaderSessionID)
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, id)
	}
	s := &session{t: t, id: id}
	if resp, _ := post(t, base, id, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d", resp.StatusCode)
	}
	return s
}

// post sends one JSON-RPC message and returns the response and the last
// JSON-RPC message it carried (SSE or JSON).
func post(t *testing.T, base, session string, msg any) (*http.Response, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(mcp.HeaderSessionID, session)
		req.Header.Set(mcp.HeaderProtocolVersion, "2025-06-18")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("POST %s: %v", base, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, lastMessage(raw)
}

func lastMessage(raw []byte) map[string]any {
	data := raw
	for _, line := range strings.Split(string(raw), "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = []byte(strings.TrimSpace(d))
		}
	}
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return m
}

// call makes a tools/call in the session on base and returns the result
// (nil for a JSON-RPC error) and the HTTP status.
func (s *session) call(base, name string, args map[string]any) (map[string]any, int) {
	s.t.Helper()
	resp, m := post(s.t, base, s.id, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	res, _ := m["result"].(map[string]any)
	return res, resp.StatusCode
}

func text(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	c, _ := content[0].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

func kind(res map[string]any) string {
	meta, _ := res["_meta"].(map[string]any)
	k, _ := meta[server.MetaErrorKind].(string)
	return k
}

func TestFleetSessionsAcrossReplicas(t *testing.T) {
	for _, st := range fleetStores {
		t.Run(st.name, func(t *testing.T) {
			f := startFleet(t, 3, st.open(t), server.Options{})
			s := openFleetSession(t, f.front, false)
			for i := range 30 {
				res, status := s.call(f.front, "here", nil)
				if status != http.StatusOK || res["isError"] == true {
					t.Fatalf("call %d through the balancer: HTTP %d, %v", i, status, res)
				}
			}
			for i := range f.ran {
				if n := f.ran[i].Load(); n == 0 {
					t.Errorf("replica %d ran no call of 30 spread round-robin", i)
				}
			}
			// Each replica knows the client: its name reaches the tool.
			for i, r := range f.replicas {
				if res, _ := s.call(r, "whoami", nil); text(res) != s.id+"|fleet-test" {
					t.Errorf("replica %d: whoami = %q, want %q", i, text(res), s.id+"|fleet-test")
				}
			}
			// DELETE on one replica ends the session on every replica.
			req, _ := http.NewRequest(http.MethodDelete, f.replicas[1]+"/mcp", nil)
			req.Header.Set(mcp.HeaderSessionID, s.id)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("DELETE: %v, %v", resp, err)
			}
			resp.Body.Close()
			for i, r := range f.replicas {
				if _, status := s.call(r, "echo", map[string]any{"text": "x"}); status != http.StatusNotFound {
					t.Errorf("replica %d after DELETE: HTTP %d, want 404", i, status)
				}
			}
		})
	}
}

func TestFleetRollingRestartKeepsSessions(t *testing.T) {
	f := startFleet(t, 2, fleetStores[0].open(t), server.Options{})
	s := openFleetSession(t, f.replicas[0], false)
	if res, _ := s.call(f.replicas[0], "echo", map[string]any{"text": "before"}); text(res) != "before" {
		t.Fatalf("before: %v", res)
	}
	f.stops[0]() // replica 0, which opened the session, shuts down
	if res, status := s.call(f.replicas[1], "echo", map[string]any{"text": "after"}); text(res) != "after" {
		t.Fatalf("on the other replica after the first shut down: HTTP %d, %v", status, res)
	}
}

func TestFleetLegacyApprovalAnsweredOnAnotherReplica(t *testing.T) {
	for _, st := range fleetStores {
		t.Run(st.name, func(t *testing.T) {
			f := startFleet(t, 2, st.open(t), server.Options{})
			rv := &reviewer{decide: func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				return answer(mcp.ElicitationResponseActionAccept, map[string]any{"remember": true}), nil
			}}
			// Through the balancer, the call goes to one replica and the
			// client's answer, its next request, to the other.
			c := gatedClient(t, f.front, rv, false)
			res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": "hi"})
			if res.IsError || rv.asked.Load() != 1 {
				t.Fatalf("send = %v (asked %d), want sent after one question", resultText(res), rv.asked.Load())
			}
			// Remembered on every replica: no more questions.
			for i := range 4 {
				if res := mustCall(t, c, "send", map[string]any{"to": "bob", "body": fmt.Sprint(i)}); res.IsError {
					t.Fatalf("call %d after remember: %v", i, resultText(res))
				}
			}
			if n := rv.asked.Load(); n != 1 {
				t.Errorf("asked %d times, want 1: the remembered approval holds on every replica", n)
			}
			if got := len(f.outbox.list()); got != 5 {
				t.Errorf("sent %d messages, want 5", got)
			}
		})
	}
}

func TestFleetBudgetIsExactAcrossReplicas(t *testing.T) {
	for _, st := range fleetStores {
		t.Run(st.name, func(t *testing.T) {
			f := startFleet(t, 3, st.open(t), server.Options{MaxCallsPerSession: 7})
			s := openFleetSession(t, f.front, false)
			var ok, spent atomic.Int64
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 3 {
						res, _ := s.call(f.front, "echo", map[string]any{"text": "x"})
						switch {
						case res["isError"] != true:
							ok.Add(1)
						case kind(res) == string(tools.KindBudgetExhausted):
							spent.Add(1)
						default:
							t.Errorf("unexpected result %v", res)
						}
					}
				})
			}
			wg.Wait()
			if ok.Load() != 7 || spent.Load() != 5 {
				t.Errorf("12 calls on 3 replicas with a budget of 7: %d ran, %d refused; want 7 and 5", ok.Load(), spent.Load())
			}
		})
	}
}

func TestFleetModernRetryOnAnotherReplica(t *testing.T) {
	for _, st := range fleetStores {
		t.Run(st.name, func(t *testing.T) {
			f := startFleet(t, 3, st.open(t), server.Options{})
			args := map[string]any{"to": "bob", "body": "hi"}
			first := modernPost(t, f.replicas[0], map[string]any{"name": "send", "arguments": args})
			state, _ := first["requestState"].(string)
			if first["resultType"] != "input_required" || state == "" {
				t.Fatalf("first leg = %v, want input_required", first)
			}
			retry := map[string]any{"name": "send", "arguments": args, "requestState": state, "inputResponses": acceptResponse(t)}
			if r := modernPost(t, f.replicas[1], retry); r["isError"] == true {
				t.Fatalf("retry on another replica refused: %v", r)
			}
			r := modernPost(t, f.replicas[2], retry)
			if r["isError"] != true || !strings.Contains(text(r), "already used") {
				t.Errorf("replay on a third replica = %v, want refused as already used", r)
			}
			if got := f.outbox.list(); len(got) != 1 {
				t.Errorf("sent %v, want exactly one", got)
			}
		})
	}
}

// downStore is a shared store that can be made unreachable.
type downStore struct {
	sharedMemory
	down atomic.Bool
}

var errDown = fmt.Errorf("%w: connection refused", state.ErrUnavailable)

func (d *downStore) Get(ctx context.Context, key string, refresh time.Duration) ([]byte, error) {
	if d.down.Load() {
		return nil, errDown
	}
	return d.sharedMemory.Get(ctx, key, refresh)
}

func (d *downStore) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if d.down.Load() {
		return errDown
	}
	return d.sharedMemory.Set(ctx, key, v, ttl)
}

func (d *downStore) SetNX(ctx context.Context, key string, v []byte, ttl time.Duration) (bool, error) {
	if d.down.Load() {
		return false, errDown
	}
	return d.sharedMemory.SetNX(ctx, key, v, ttl)
}

func (d *downStore) Take(ctx context.Context, key string, limit int64, ttl time.Duration) (bool, error) {
	if d.down.Load() {
		return false, errDown
	}
	return d.sharedMemory.Take(ctx, key, limit, ttl)
}

func (d *downStore) Ping(ctx context.Context) error {
	if d.down.Load() {
		return errDown
	}
	return nil
}

func TestFleetStoreDown(t *testing.T) {
	st := &downStore{sharedMemory: sharedMemory{state.NewMemory()}}
	f := startFleet(t, 2, st, server.Options{MaxCallsPerSession: 100})
	s := openFleetSession(t, f.front, false)
	if res, _ := s.call(f.front, "echo", map[string]any{"text": "x"}); text(res) != "x" {
		t.Fatalf("before: %v", res)
	}
	st.down.Store(true)
	// A session's request: 503, to retry, naming the cause.
	resp, m := post(t, f.replicas[0], s.id, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}})
	if msg, _ := m["error"].(map[string]any)["message"].(string); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(msg, "state store") {
		t.Errorf("session request with the store down: HTTP %d, %v; want 503 with Retry-After naming the state store", resp.StatusCode, m)
	}
	// A sessionless (2026-07-28) call that needs the budget: an
	// unavailable result, and the tool does not run.
	r := modernPost(t, f.replicas[1], map[string]any{"name": "here"})
	if r["isError"] != true || kind(r) != string(tools.KindUnavailable) {
		t.Errorf("modern call with the store down = %v, want an %q error", r, tools.KindUnavailable)
	}
	if n := f.ran[1].Load(); n != 0 {
		t.Errorf("the tool ran %d times with the store down, want 0", n)
	}
	waitReady(t, f.replicas[0], http.StatusServiceUnavailable)
	st.down.Store(false)
	waitReady(t, f.replicas[0], http.StatusOK)
	if res, _ := s.call(f.front, "echo", map[string]any{"text": "back"}); text(res) != "back" {
		t.Errorf("after the store came back: %v", res)
	}
}

func waitReady(t *testing.T, base string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + server.PathReadyz)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not answer %d within 10s (last: %v %v)", want, resp, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestFleetStateKeys(t *testing.T) {
	reg := func() *tools.Registry {
		r, _ := tools.NewRegistry(testTools()...)
		return r
	}
	for _, tt := range []struct {
		name string
		keys server.StateKeys
	}{
		{"short key", server.StateKeys{Current: []byte("short")}},
		{"short previous", server.StateKeys{Current: fleetKey, Previous: []byte("short")}},
		{"previous alone", server.StateKeys{Previous: fleetKey}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := server.New(reg(), server.Options{StateKeys: tt.keys}); err == nil {
				t.Error("New = nil error, want the key refused")
			}
		})
	}
	// A key rotated out still verifies the states it signed.
	st := fleetStores[0].open(t)
	var o outbox
	r, _ := tools.NewRegistry(append(testTools(), o.tool())...)
	old := []byte("the key before the rotation, 32+ bytes")
	before := serveRegistry(t, r, server.TransportHTTP, server.Options{State: st, StateKeys: server.StateKeys{Current: old}})
	r2, _ := tools.NewRegistry(append(testTools(), o.tool())...)
	after := serveRegistry(t, r2, server.TransportHTTP, server.Options{State: st, StateKeys: server.StateKeys{Current: fleetKey, Previous: old}})
	args := map[string]any{"to": "bob", "body": "hi"}
	first := modernPost(t, before, map[string]any{"name": "send", "arguments": args})
	retry := map[string]any{"name": "send", "arguments": args, "requestState": first["requestState"], "inputResponses": acceptResponse(t)}
	if res := modernPost(t, after, retry); res["isError"] == true {
		t.Errorf("a state of the previous key on a rotated replica: %v", res)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
