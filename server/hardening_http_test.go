package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// Tests of the HTTP hardening: responses at shutdown, bounded and expiring
// sessions, strict frames, CORS, slow and idle connections, progress
// floods, result size, repeated shutdown and leaks. Every one runs over a
// real listener on 127.0.0.1.

// running is a middleware that counts the calls of one tool that reached
// the tool (so passed every limit) and those that returned.
type running struct {
	tool           string
	started, ended atomic.Int64
}

func (r *running) middleware(info tools.Info, next tools.Func) tools.Func {
	if info.Name != r.tool {
		return next
	}
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		r.started.Add(1)
		defer r.ended.Add(1)
		return next(ctx, args)
	}
}

// served is a server on a real loopback listener whose shutdown the test
// controls: stop cancels ServeHTTP's context, wait returns what it returned.
type served struct {
	url  string
	srv  *server.Server
	stop context.CancelFunc

	done     chan error
	mu       sync.Mutex
	returned bool
	err      error
}

func serveControlled(t *testing.T, transportName string, opts server.Options) *served {
	t.Helper()
	reg, err := tools.NewRegistry(testTools()...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{url: "http://" + ln.Addr().String(), srv: srv, stop: cancel, done: make(chan error, 1)}
	go func() { s.done <- serveUntil(ctx, srv, ln, transportName) }()
	t.Cleanup(func() {
		cancel()
		if returned, _ := s.wait(15 * time.Second); !returned {
			t.Error("ServeHTTP did not return after its context was cancelled")
		}
	})
	return s
}

// wait reports whether ServeHTTP has returned, waiting at most d, and
// what it returned.
func (s *served) wait(d time.Duration) (returned bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.returned {
		select {
		case s.err = <-s.done:
			s.returned = true
		case <-time.After(d):
		}
	}
	return s.returned, s.err
}

// rpcError is the JSON-RPC error in an HTTP response body.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// readRPCError reads resp's body as a JSON-RPC error response, failing the
// test if it is not one.
func readRPCError(t *testing.T, resp *http.Response) rpcError {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	var e rpcError
	if err := json.Unmarshal(b, &e); err != nil || e.JSONRPC != "2.0" || e.Error == nil {
		t.Fatalf("body %q is not a JSON-RPC error response (%v)", b, err)
	}
	return e
}

// do sends one request with a fresh connection and returns the response,
// closed when the test ends.
func do(t *testing.T, method, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// openSession initializes a streamable HTTP session and returns its id.
func openSession(t *testing.T, url string) string {
	t.Helper()
	resp := rawPost(t, url+"/mcp", initBody, nil)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("initialize: status %d, session %q, body %s; want 200 and a session", resp.StatusCode, id, b)
	}
	return id
}

const pingBody = `{"jsonrpc":"2.0","id":7,"method":"ping"}`

// pingStatus pings on session id and returns the HTTP status.
func pingStatus(t *testing.T, url, id string) int {
	t.Helper()
	resp := rawPost(t, url+"/mcp", pingBody, map[string]string{"Mcp-Session-Id": id})
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func deleteSession(t *testing.T, url, id string) int {
	t.Helper()
	resp := do(t, http.MethodDelete, url+"/mcp", "", map[string]string{"Mcp-Session-Id": id})
	return resp.StatusCode
}

// openSSE opens a legacy SSE stream and returns the response (its body is
// the stream) and the message endpoint the server announced; the stream
// closes when the test ends.
func openSSE(t *testing.T, url string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	resp := openGET(t, url+"/sse", headers)
	if resp.StatusCode != http.StatusOK {
		return resp, ""
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			return resp, url + strings.TrimSpace(d)
		}
	}
	t.Fatalf("no endpoint event on the SSE stream: %v", sc.Err())
	return nil, ""
}

// waitUntil polls cond until it holds, failing the test after d.
func waitUntil(t *testing.T, d time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", d, fmt.Sprintf(format, args...))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHTTPShutdownAnswersEveryAcceptedCall: when the grace period runs
// out, every call still running is cancelled and its client still gets a
// response, a cancelled result, on both HTTP transports.
func TestHTTPShutdownAnswersEveryAcceptedCall(t *testing.T) {
	tests := []struct {
		name      string
		transport string
		clients   int
		perClient int
	}{
		{"streamable HTTP", server.TransportHTTP, 4, 16},
		{"legacy SSE", server.TransportSSE, 2, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sleeps := &running{tool: "sleep"}
			s := serveControlled(t, tt.transport, server.Options{
				ShutdownGrace: 300 * time.Millisecond,
				Middleware:    []tools.Middleware{sleeps.middleware},
			})
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			total := tt.clients * tt.perClient
			results := make(chan outcome, total)
			for range tt.clients {
				var c *client.Client
				if tt.transport == server.TransportSSE {
					c = sseClient(t, s.url, nil)
				} else {
					c = httpClient(t, s.url, nil)
				}
				for range tt.perClient {
					go func() {
						res, err := callTool(t, c, "sleep", map[string]any{"millis": 30000})
						results <- outcome{res, err}
					}()
				}
			}
			waitUntil(t, 10*time.Second, func() bool { return sleeps.started.Load() == int64(total) },
				"%d sleep calls are running (%d are)", total, sleeps.started.Load())
			s.stop()

			cancelled := 0
			for i := range total {
				select {
				case o := <-results:
					switch {
					case o.err != nil:
						t.Errorf("call %d: transport error %v, want a cancelled result", i, o.err)
					case !o.res.IsError || errorKind(o.res) != "cancelled":
						t.Errorf("call %d: isError %v kind %q (%q), want a cancelled error result", i, o.res.IsError, errorKind(o.res), resultText(o.res))
					default:
						cancelled++
					}
				case <-time.After(15 * time.Second):
					t.Fatalf("only %d of %d calls answered", i, total)
				}
			}
			if cancelled != total {
				t.Errorf("got %d of %d calls answered with a cancelled result, want all", cancelled, total)
			}
			if got := sleeps.ended.Load(); got != int64(total) {
				t.Errorf("got %d sleep calls returned, want %d", got, total)
			}
			returned, err := s.wait(15 * time.Second)
			if !returned {
				t.Fatal("ServeHTTP did not return after the shutdown")
			}
			if err != nil {
				t.Errorf("ServeHTTP = %v, want nil", err)
			}
		})
	}
}

// TestHTTPSessionsBounded: past Options.MaxSessions a new session is
// refused with 503, a JSON-RPC error and Retry-After; a session that ends
// frees its place, and the server keeps nothing for it.
func TestHTTPSessionsBounded(t *testing.T) {
	t.Parallel()
	checkBusy := func(t *testing.T, resp *http.Response) {
		t.Helper()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", resp.StatusCode)
		}
		if resp.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After header on the 503")
		}
		e := readRPCError(t, resp)
		if e.Error.Code != -32000 || !strings.Contains(e.Error.Message, "--max-sessions") {
			t.Errorf("error = %d %q, want -32000 naming --max-sessions", e.Error.Code, e.Error.Message)
		}
	}

	t.Run("streamable HTTP", func(t *testing.T) {
		t.Parallel()
		url := startHTTP(t, server.TransportHTTP, server.Options{MaxSessions: 3})
		ids := []string{openSession(t, url), openSession(t, url), openSession(t, url)}
		checkBusy(t, rawPost(t, url+"/mcp", initBody, nil))

		if got := deleteSession(t, url, ids[0]); got != http.StatusOK {
			t.Fatalf("DELETE: status %d, want 200", got)
		}
		if got := pingStatus(t, url, ids[0]); got != http.StatusNotFound {
			t.Errorf("ping on the deleted session: status %d, want 404", got)
		}
		if got := deleteSession(t, url, ids[0]); got != http.StatusNotFound {
			t.Errorf("second DELETE of the session: status %d, want 404", got)
		}
		for _, id := range ids[1:] {
			if got := pingStatus(t, url, id); got != http.StatusOK {
				t.Errorf("ping on a live session: status %d, want 200", got)
			}
		}
		// The deleted session's place is free, and only its place.
		openSession(t, url)
		checkBusy(t, rawPost(t, url+"/mcp", initBody, nil))
	})

	t.Run("legacy SSE", func(t *testing.T) {
		t.Parallel()
		url := startHTTP(t, server.TransportSSE, server.Options{MaxSessions: 3})
		var streams []*http.Response
		for range 3 {
			resp, endpoint := openSSE(t, url, nil)
			if endpoint == "" {
				t.Fatalf("GET /sse: status %d, want 200 and an endpoint", resp.StatusCode)
			}
			streams = append(streams, resp)
		}
		resp, _ := openSSE(t, url, nil)
		checkBusy(t, resp)

		streams[0].Body.Close() // the client goes away: its session ends
		// Poll until a new stream is admitted, and keep it open (until the
		// test ends): a refused attempt holds nothing.
		waitUntil(t, 10*time.Second, func() bool {
			resp, endpoint := openSSE(t, url, nil)
			if endpoint == "" {
				resp.Body.Close()
				return false
			}
			return true
		}, "a closed SSE stream frees its place")
		resp, _ = openSSE(t, url, nil)
		checkBusy(t, resp)
	})
}

// TestHTTPIdleSessionsEnd: a session unused for longer than
// Options.SessionIdleTimeout is gone and its place is free; a session in
// use stays.
func TestHTTPIdleSessionsEnd(t *testing.T) {
	t.Parallel()
	url := startHTTP(t, server.TransportHTTP, server.Options{SessionIdleTimeout: time.Second, MaxSessions: 2})
	idle, busy := openSession(t, url), openSession(t, url)
	if resp := rawPost(t, url+"/mcp", initBody, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third initialize with two sessions open: status %d, want 503", resp.StatusCode)
	}
	// Three seconds, in which only the busy session is used.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if got := pingStatus(t, url, busy); got != http.StatusOK {
			t.Fatalf("ping on the busy session: status %d, want 200", got)
		}
	}
	if got := pingStatus(t, url, idle); got != http.StatusNotFound {
		t.Errorf("ping on the idle session after 3s: status %d, want 404", got)
	}
	if got := pingStatus(t, url, busy); got != http.StatusOK {
		t.Errorf("ping on the busy session: status %d, want 200", got)
	}
	openSession(t, url) // the idle session's place is free
}

// TestHTTPSessionIDRequired: after initialize, a request without its
// session id is a bad request (400), not an unknown session (404); a
// request of protocol 2026-07-28, which has no sessions, is served.
func TestHTTPSessionIDRequired(t *testing.T) {
	t.Parallel()
	url := startHTTP(t, server.TransportHTTP, server.Options{})
	openSession(t, url)
	for _, body := range []string{
		pingBody,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
	} {
		resp := rawPost(t, url+"/mcp", body, nil)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s without a session id: status %d, want 400", body, resp.StatusCode)
			continue
		}
		e := readRPCError(t, resp)
		if e.Error.Code != -32600 || string(e.ID) != "7" || !strings.Contains(e.Error.Message, "Mcp-Session-Id") {
			t.Errorf("error = id %s code %d %q, want id 7, -32600 naming Mcp-Session-Id", e.ID, e.Error.Code, e.Error.Message)
		}
	}
	res := modernPost(t, url, map[string]any{"name": "echo", "arguments": map[string]any{"text": "sessionless"}})
	content, _ := res["content"].([]any)
	if len(content) != 1 || res["isError"] == true {
		t.Fatalf("2026-07-28 call = %v, want one content item", res)
	}
	if text, _ := content[0].(map[string]any)["text"].(string); text != "sessionless" {
		t.Errorf("2026-07-28 call text = %q, want %q", text, "sessionless")
	}
}

// TestHTTPStrictFrames: a message that is not one unambiguous JSON-RPC
// object is refused with 400 and a JSON-RPC error before mcp-go reads it,
// on both HTTP transports, even on a valid session.
func TestHTTPStrictFrames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		code int
	}{
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600},
		{"object id", `{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`, -32600},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
		{"METHOD", `{"jsonrpc":"2.0","id":1,"METHOD":"ping"}`, -32600},
		{"Id", `{"jsonrpc":"2.0","Id":1,"method":"ping"}`, -32600},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}`, -32600},
		{"duplicate tool name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"boom","arguments":{}}}`, -32600},
		{"Name in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"echo","arguments":{}}}`, -32600},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600},
		{"not an object", `"ping"`, -32600},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600},
		{"not JSON", `{"jsonrpc":"2.0","id":1,`, -32700},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, -32700},
	}
	transports := []struct {
		name string
		// open returns where to post, the headers, and the status of a
		// valid ping there.
		open func(t *testing.T) (endpoint string, headers map[string]string, ok int)
	}{
		{"streamable HTTP", func(t *testing.T) (string, map[string]string, int) {
			url := startHTTP(t, server.TransportHTTP, server.Options{})
			return url + "/mcp", map[string]string{"Mcp-Session-Id": openSession(t, url)}, http.StatusOK
		}},
		{"legacy SSE", func(t *testing.T) (string, map[string]string, int) {
			url := startHTTP(t, server.TransportSSE, server.Options{})
			_, endpoint := openSSE(t, url, nil)
			return endpoint, nil, http.StatusAccepted
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			endpoint, headers, ok := tr.open(t)
			if got := rawPost(t, endpoint, pingBody, headers).StatusCode; got != ok {
				t.Fatalf("valid ping: status %d, want %d", got, ok)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					resp := rawPost(t, endpoint, tt.body, headers)
					if resp.StatusCode != http.StatusBadRequest {
						b, _ := io.ReadAll(resp.Body)
						t.Fatalf("status %d (%s), want 400", resp.StatusCode, b)
					}
					if e := readRPCError(t, resp); e.Error.Code != tt.code {
						t.Errorf("error code %d (%q), want %d", e.Error.Code, e.Error.Message, tt.code)
					}
				})
			}
		})
	}
}

// TestHTTPCORS: an allowed browser origin gets its preflight answered and
// its responses marked for it (the origin echoed, never a wildcard, and
// Mcp-Session-Id readable); any other origin gets 403, on every endpoint.
func TestHTTPCORS(t *testing.T) {
	t.Parallel()
	const app, evil = "https://app.example", "https://evil.example"
	opts := server.Options{AllowedOrigins: []string{app}}
	httpURL := startHTTP(t, server.TransportHTTP, opts)
	sseURL := startHTTP(t, server.TransportSSE, opts)
	_, message := openSSE(t, sseURL, nil)

	checkAllowed := func(t *testing.T, resp *http.Response) {
		t.Helper()
		if got := resp.Header.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != app {
			t.Errorf("Access-Control-Allow-Origin = %q, want exactly [%q]", got, app)
		}
	}
	hasToken := func(list, token string) bool {
		for _, v := range strings.Split(list, ",") {
			if strings.EqualFold(strings.TrimSpace(v), token) {
				return true
			}
		}
		return false
	}

	t.Run("preflight", func(t *testing.T) {
		for _, url := range []string{httpURL + "/mcp", sseURL + "/sse", message} {
			resp := do(t, http.MethodOptions, url, "", map[string]string{
				"Origin":                         app,
				"Access-Control-Request-Method":  http.MethodPost,
				"Access-Control-Request-Headers": "content-type, mcp-session-id",
			})
			if resp.StatusCode != http.StatusNoContent {
				t.Errorf("OPTIONS %s: status %d, want 204", url, resp.StatusCode)
				continue
			}
			checkAllowed(t, resp)
			if h := resp.Header.Get("Access-Control-Allow-Headers"); !hasToken(h, "Mcp-Session-Id") || !hasToken(h, "Content-Type") {
				t.Errorf("OPTIONS %s: Access-Control-Allow-Headers = %q, want Mcp-Session-Id and Content-Type", url, h)
			}
			if m := resp.Header.Get("Access-Control-Allow-Methods"); !hasToken(m, http.MethodPost) {
				t.Errorf("OPTIONS %s: Access-Control-Allow-Methods = %q, want POST", url, m)
			}
		}
	})

	t.Run("allowed origin", func(t *testing.T) {
		resp := rawPost(t, httpURL+"/mcp", initBody, map[string]string{"Origin": app})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize from %s: status %d, want 200 with a session", app, resp.StatusCode)
		}
		checkAllowed(t, resp)
		if h := resp.Header.Get("Access-Control-Expose-Headers"); !hasToken(h, "Mcp-Session-Id") {
			t.Errorf("Access-Control-Expose-Headers = %q, want Mcp-Session-Id", h)
		}

		stream, endpoint := openSSE(t, sseURL, map[string]string{"Origin": app})
		if endpoint == "" {
			t.Fatalf("GET /sse from %s: status %d, want 200", app, stream.StatusCode)
		}
		checkAllowed(t, stream)
		resp = rawPost(t, endpoint, pingBody, map[string]string{"Origin": app})
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("POST /message from %s: status %d, want 202", app, resp.StatusCode)
		}
		checkAllowed(t, resp)
	})

	t.Run("foreign origin", func(t *testing.T) {
		id := openSession(t, httpURL)
		requests := []struct {
			method, url, body string
			headers           map[string]string
		}{
			{http.MethodOptions, httpURL + "/mcp", "", map[string]string{"Access-Control-Request-Method": "POST"}},
			{http.MethodPost, httpURL + "/mcp", initBody, nil},
			{http.MethodPost, httpURL + "/mcp", pingBody, map[string]string{"Mcp-Session-Id": id}},
			{http.MethodOptions, sseURL + "/sse", "", map[string]string{"Access-Control-Request-Method": "GET"}},
			{http.MethodGet, sseURL + "/sse", "", nil},
			{http.MethodOptions, message, "", map[string]string{"Access-Control-Request-Method": "POST"}},
			{http.MethodPost, message, pingBody, nil},
		}
		for _, r := range requests {
			h := map[string]string{"Origin": evil}
			for k, v := range r.headers {
				h[k] = v
			}
			resp := do(t, r.method, r.url, r.body, h)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s from %s: status %d, want 403", r.method, r.url, evil, resp.StatusCode)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("%s %s from %s: Access-Control-Allow-Origin = %q, want none", r.method, r.url, evil, got)
			}
		}
	})
}

// TestHTTPSlowAndIdleConnections: a client that trickles its body is cut
// off after Options.HTTPReadTimeout, while a long call and an SSE stream
// are not; a keep-alive connection idle past Options.HTTPIdleTimeout is
// closed by the server.
func TestHTTPSlowAndIdleConnections(t *testing.T) {
	t.Parallel()
	const readTimeout = 500 * time.Millisecond

	t.Run("trickled body", func(t *testing.T) {
		t.Parallel()
		url := startHTTP(t, server.TransportHTTP, server.Options{HTTPReadTimeout: readTimeout})
		id := openSession(t, url)

		// A long call on another connection, running while the slow
		// client is cut off.
		c := httpClient(t, url, nil)
		long := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, err := callTool(t, c, "sleep", map[string]any{"millis": 1500})
			if err != nil {
				t.Errorf("long call: %v", err)
			}
			long <- res
		}()

		conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: 1000\r\n\r\n{",
			strings.TrimPrefix(url, "http://"), id)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for range 999 {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if _, err := conn.Write([]byte(" ")); err != nil {
					return // cut off
				}
			}
		}()
		// Bounded wait: twenty times the read timeout.
		_ = conn.SetReadDeadline(time.Now().Add(20 * readTimeout))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			t.Fatalf("the trickling client was not cut off within %s (read timeout %s)", 20*readTimeout, readTimeout)
		case err != nil:
			// The connection was closed without a response: also a cut.
		case resp.StatusCode != http.StatusRequestTimeout:
			t.Fatalf("trickled body: status %d, want 408", resp.StatusCode)
		default:
			if e := readRPCError(t, resp); e.Error.Code != -32600 {
				t.Errorf("408 error code %d (%q), want -32600", e.Error.Code, e.Error.Message)
			}
		}

		select {
		case res := <-long:
			if res == nil || res.IsError || resultText(res) != "slept" {
				t.Errorf("long call = %v, want \"slept\"", res)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the long call never answered")
		}
	})

	// A client that sends part of a body and then nothing gets its answer
	// (408 when the body is late, 413 when it is already past the limit),
	// and the connection is closed then: it is not held open for the rest
	// of a body that never comes.
	for _, c := range []struct {
		name, header, sent string
		status             int
	}{
		{"stalled body", "Content-Length: 1000", "{", http.StatusRequestTimeout},
		{"stalled oversized body", "Transfer-Encoding: chunked", fmt.Sprintf("%x\r\n%s", 2048, strings.Repeat("a", 1025)), http.StatusRequestEntityTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := startHTTP(t, server.TransportHTTP, server.Options{HTTPReadTimeout: readTimeout, MaxMessageBytes: 1024})
			id := openSession(t, url)
			conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\n%s\r\n\r\n%s",
				strings.TrimPrefix(url, "http://"), id, c.header, c.sent)
			_ = conn.SetReadDeadline(time.Now().Add(20 * readTimeout))
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%v, want a %d", err, c.status)
			}
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatalf("response body: %v", err)
			}
			resp.Body.Close()
			n, err := br.Read(make([]byte, 1))
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
				t.Fatalf("the connection is still open %s after its %d (read timeout %s)", 20*readTimeout, c.status, readTimeout)
			case n > 0 || !errors.Is(err, io.EOF):
				t.Errorf("read after the %d = %d bytes, %v; want EOF", c.status, n, err)
			}
		})
	}

	t.Run("long SSE stream", func(t *testing.T) {
		t.Parallel()
		url := startHTTP(t, server.TransportSSE, server.Options{HTTPReadTimeout: readTimeout})
		c := sseClient(t, url, nil)
		// The stream stays open three times the read timeout, and the
		// answer comes on it at the end.
		res := mustCall(t, c, "sleep", map[string]any{"millis": int(3 * readTimeout / time.Millisecond)})
		if res.IsError || resultText(res) != "slept" {
			t.Errorf("call over an SSE stream older than the read timeout = %q, want \"slept\"", resultText(res))
		}
		if res := mustCall(t, c, "echo", map[string]any{"text": "still open"}); resultText(res) != "still open" {
			t.Errorf("next call on the stream = %q, want \"still open\"", resultText(res))
		}
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		t.Parallel()
		url := startHTTP(t, server.TransportHTTP, server.Options{HTTPIdleTimeout: 500 * time.Millisecond})
		conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
			strings.TrimPrefix(url, "http://"), len(initBody), initBody)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("initialize response: %v", err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatalf("initialize body: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("initialize: status %d, close %v; want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
		}
		// Idle now: the server must close its end (a bounded wait, many
		// times the idle timeout).
		n, err := br.Read(make([]byte, 1))
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			t.Fatal("the idle keep-alive connection was not closed by the server within 10s")
		case n > 0 || !errors.Is(err, io.EOF):
			t.Errorf("read on the idle connection = %d bytes, %v; want EOF", n, err)
		}
	})
}

// TestHTTPProgressFloodCoalesced: a tool that reports progress 100000
// times costs the client a few notifications, the last of which is the
// final report, before the result.
//
// The last report is lost in about half the runs today: mcp-go's
// streamable HTTP POST handler drops a notification its forwarder
// goroutine has taken off the session's channel when the response is
// written first (see the report that came with this test).
func TestHTTPProgressFloodCoalesced(t *testing.T) {
	t.Parallel()
	const n = 100000
	url := startHTTP(t, server.TransportHTTP, server.Options{})
	c := httpClient(t, url, nil)
	var (
		mu       sync.Mutex
		progress []float64
	)
	c.OnNotification(func(note mcp.JSONRPCNotification) {
		if note.Method != "notifications/progress" {
			return
		}
		p, _ := note.Params.AdditionalFields["progress"].(float64)
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, p)
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "flood"
	req.Params.Arguments = map[string]any{"n": n}
	req.Params.Meta = &mcp.Meta{ProgressToken: "flood-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("flood: %v", err)
	}
	if res.IsError || resultText(res) != "flooded" {
		t.Fatalf("flood = %q, want \"flooded\"", resultText(res))
	}
	// Notifications come before the response on its stream: all are in.
	mu.Lock()
	got := append([]float64(nil), progress...)
	mu.Unlock()
	t.Logf("%d progress notifications for %d reports: %v", len(got), n, got)
	if len(got) == 0 || len(got) > 20 {
		t.Fatalf("got %d progress notifications, want between 1 and 20", len(got))
	}
	if last := got[len(got)-1]; last != n {
		t.Errorf("last progress = %v, want %d (all: %v)", last, n, got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Errorf("progress went from %v to %v, want increasing (all: %v)", got[i-1], got[i], got)
		}
	}
}

// TestHTTPResultSizeCap: a result over Options.MaxResultBytes is replaced
// by a short result_too_large error that names the limit.
func TestHTTPResultSizeCap(t *testing.T) {
	t.Parallel()
	url := startHTTP(t, server.TransportHTTP, server.Options{MaxResultBytes: 1000})
	c := httpClient(t, url, nil)
	tests := []struct {
		n    int
		kind string // "" for success
	}{
		{999, ""},
		{1000, ""},
		{1001, "result_too_large"},
		{5000, "result_too_large"},
		{1 << 20, "result_too_large"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			res := mustCall(t, c, "big", map[string]any{"n": tt.n})
			text := resultText(res)
			if tt.kind == "" {
				if res.IsError || len(text) != tt.n {
					t.Errorf("big %d: isError %v, %d bytes of text; want %d bytes", tt.n, res.IsError, len(text), tt.n)
				}
				return
			}
			if !res.IsError || errorKind(res) != tt.kind {
				t.Fatalf("big %d: isError %v kind %q, want %s", tt.n, res.IsError, errorKind(res), tt.kind)
			}
			if len(text) >= 400 || !strings.Contains(text, "1000") {
				t.Errorf("big %d: error text of %d chars %q, want under 400 naming the limit 1000", tt.n, len(text), text)
			}
		})
	}
}

// TestHTTPShutdownTwice: Shutdown called from two goroutines at once, with
// a call in flight, returns nil to both once the call has ended (and the
// call completes), and ServeHTTP returns.
func TestHTTPShutdownTwice(t *testing.T) {
	t.Parallel()
	sleeps := &running{tool: "sleep"}
	s := serveControlled(t, server.TransportHTTP, server.Options{Middleware: []tools.Middleware{sleeps.middleware}})
	c := httpClient(t, s.url, nil)
	result := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := callTool(t, c, "sleep", map[string]any{"millis": 800})
		if err != nil {
			t.Errorf("sleep: %v", err)
		}
		result <- res
	}()
	waitUntil(t, 10*time.Second, func() bool { return sleeps.started.Load() == 1 }, "the call is running")

	errs := make(chan error, 2)
	ended := make(chan int64, 2)
	for range 2 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := s.srv.Shutdown(ctx)
			ended <- sleeps.ended.Load()
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("Shutdown = %v, want nil", err)
		}
		if got := <-ended; got != 1 {
			t.Errorf("Shutdown returned with %d calls ended, want 1: it must wait for the call", got)
		}
	}
	select {
	case res := <-result:
		if res == nil || res.IsError || resultText(res) != "slept" {
			t.Errorf("in-flight call = %v, want \"slept\"", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight call never answered")
	}
	returned, err := s.wait(10 * time.Second)
	if !returned {
		t.Fatal("ServeHTTP did not return after Shutdown (its context is still live)")
	}
	if err != nil {
		t.Errorf("ServeHTTP = %v, want nil", err)
	}
}

// TestHTTPSessionsLeakNothing: opening and deleting 200 sessions leaves
// no goroutine behind, and every place of the session bound free.
func TestHTTPSessionsLeakNothing(t *testing.T) {
	// Not parallel: it counts the process's goroutines.
	const sessions, bound = 200, 5
	url := startHTTP(t, server.TransportHTTP, server.Options{MaxSessions: bound})
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	send := func(method, body string, headers map[string]string) *http.Response {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, url+"/mcp", r)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	openAndClose := func() {
		t.Helper()
		resp := send(http.MethodPost, initBody, nil)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: status %d, session %q", resp.StatusCode, id)
		}
		if resp := send(http.MethodPost, pingBody, map[string]string{"Mcp-Session-Id": id}); resp.StatusCode != http.StatusOK {
			t.Fatalf("ping: status %d", resp.StatusCode)
		}
		if resp := send(http.MethodDelete, "", map[string]string{"Mcp-Session-Id": id}); resp.StatusCode != http.StatusOK {
			t.Fatalf("DELETE: status %d", resp.StatusCode)
		}
	}
	openAndClose() // warm up the connection and the server's lazy parts
	hc.CloseIdleConnections()
	before := settledGoroutines()

	for range sessions {
		openAndClose()
	}
	hc.CloseIdleConnections()

	// Every place is free: the bound admits bound new sessions.
	var ids []string
	for range bound {
		resp := send(http.MethodPost, initBody, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize after %d closed sessions: status %d, want 200", sessions, resp.StatusCode)
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	if resp := send(http.MethodPost, initBody, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("initialize past the bound: status %d, want 503", resp.StatusCode)
	}
	for _, id := range ids {
		send(http.MethodDelete, "", map[string]string{"Mcp-Session-Id": id})
	}
	hc.CloseIdleConnections()

	const tolerance = 5
	var after int
	waitUntil(t, 10*time.Second, func() bool {
		after = runtime.NumGoroutine()
		return after <= before+tolerance
	}, "goroutines settle near %d (now %d)", before, runtime.NumGoroutine())
	t.Logf("goroutines: %d before %d sessions, %d after", before, sessions, after)
}

// settledGoroutines returns the goroutine count once it has stopped
// changing for a moment (or after a few seconds).
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return n
		}
		n = m
	}
	return n
}
