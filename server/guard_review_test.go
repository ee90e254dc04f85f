package server_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
)

// TestHTTPRebindingRefusedOnEveryRoute: a non-loopback Host on a loopback
// connection gets 403 whatever the request, also the ones the guard
// answers itself without mcp-go (a plain tools/call of a known session,
// answered by the fast path; a tasks/* request).
func TestHTTPRebindingRefusedOnEveryRoute(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{})
	id := openSession(t, url)
	rawPost(t, url+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": id})
	bodies := map[string]string{
		"tools/call": `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		"ping":       pingBody,
		"tasks/list": `{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			// The same request with the loopback Host is served.
			ok := rawPost(t, url+"/mcp", body, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
			io.Copy(io.Discard, ok.Body)
			resp := rawPost(t, url+"/mcp", body, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18", "Host": "evil.example"})
			if resp.StatusCode != http.StatusForbidden {
				b, _ := io.ReadAll(resp.Body)
				t.Errorf("Host evil.example: status %d (%s), want 403 (loopback Host: %d)", resp.StatusCode, b, ok.StatusCode)
			}
		})
	}
}

// getStream opens a GET stream on /mcp with headers and returns the
// response (its body closes when the test ends).
func getStream(t *testing.T, url string, headers map[string]string) *http.Response {
	t.Helper()
	h := map[string]string{"Accept": "text/event-stream"}
	maps.Copy(h, headers)
	return openGET(t, url+"/mcp", h)
}

// openGET sends a GET with headers and returns the response; its body
// closes when the test ends.
func openGET(t *testing.T, url string, headers map[string]string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestHTTPGetStreamSessionChecked: a GET stream on /mcp naming a session
// that does not exist gets 404, as every other method does (mcp-go opens a
// stream for any id it is given); the session's own GET is served.
func TestHTTPGetStreamSessionChecked(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{BearerTokens: []string{"tok-A", "tok-B"}})
	a := map[string]string{"Authorization": "Bearer tok-A"}
	resp := rawPost(t, url+"/mcp", initBody, a)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("no session id")
	}
	with := func(token, session string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
	}
	if r := getStream(t, url, with("tok-A", id)); r.StatusCode != http.StatusOK {
		t.Errorf("GET on its own session: status %d, want 200", r.StatusCode)
	}
	if r := getStream(t, url, with("tok-B", id)); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET on another token's session: status %d, want 404", r.StatusCode)
	}
	for _, unknown := range []string{"mcp-session-00000000000000000000000000", "chosen-by-the-client"} {
		if r := getStream(t, url, with("tok-A", unknown)); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET on unknown session %q: status %d, want 404", unknown, r.StatusCode)
		}
	}
}

// TestHTTPGetStreamWithoutSessionBounded: a GET stream on /mcp without a
// session id is a session of its own in mcp-go (it registers one): it is
// counted against MaxSessions like any other.
func TestHTTPGetStreamWithoutSessionBounded(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{MaxSessions: 2})
	openSession(t, url)
	openSession(t, url)
	if r := getStream(t, url, nil); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET without a session with the table full: status %d, want 503", r.StatusCode)
	}
}

// TestHTTPBodyNotAllocatedBeforeItArrives: a client that names a large
// Content-Length and sends (almost) nothing must not make the server hold
// that much memory while it waits for the body: a few such connections
// would otherwise hold gigabytes for the whole read timeout.
func TestHTTPBodyNotAllocatedBeforeItArrives(t *testing.T) {
	const claimed = 64 << 20
	url := startHTTP(t, server.TransportHTTP, server.Options{MaxMessageBytes: claimed})
	addr := strings.TrimPrefix(url, "http://")
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const conns = 4
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", addr, claimed)
	}
	// Give the server time to reach the bodies; fail as soon as it holds
	// half of what the clients claimed.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var now runtime.MemStats
		runtime.ReadMemStats(&now)
		if grown := int64(now.HeapAlloc) - int64(before.HeapAlloc); grown > conns*claimed/2 {
			t.Fatalf("heap grew by %d MiB for %d requests that sent 1 byte of body each", grown>>20, conns)
		}
	}
}

// TestHTTPLargeBodyServed: a body longer than what is allocated up front
// is read whole, with its length named or chunked, and one past the limit
// is still refused.
func TestHTTPLargeBodyServed(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{MaxMessageBytes: 1 << 20})
	id := openSession(t, url)
	text := strings.Repeat("x", 300<<10)
	body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
	for _, chunked := range []bool{false, true} {
		var r io.Reader = strings.NewReader(body)
		if chunked {
			r = io.MultiReader(r) // no length: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, url+"/mcp", r)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), text) {
			t.Errorf("chunked=%v: status %d, echo whole: %v", chunked, resp.StatusCode, strings.Contains(string(b), text))
		}
	}
	big := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"p":"` + strings.Repeat("x", 1<<20) + `"}}`
	if resp := rawPost(t, url+"/mcp", big, map[string]string{"Mcp-Session-Id": id}); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("over the limit: status %d, want 413", resp.StatusCode)
	}
}

// TestSSEUnknownSessionLooksLikeAnothers: on the legacy transport, a
// message to a session that does not exist is answered as one to another
// token's session (404), so that the answer does not tell a token which
// session ids exist.
func TestSSEUnknownSessionLooksLikeAnothers(t *testing.T) {
	url := startHTTP(t, server.TransportSSE, server.Options{BearerTokens: []string{"tok-A", "tok-B"}})
	_, endpoint := openSSE(t, url, map[string]string{"Authorization": "Bearer tok-A"})
	if endpoint == "" {
		t.Fatal("no SSE endpoint")
	}
	b := map[string]string{"Authorization": "Bearer tok-B"}
	another := rawPost(t, endpoint, pingBody, b)
	unknown := rawPost(t, url+"/message?sessionId=no-such-session", pingBody, b)
	ab, _ := io.ReadAll(another.Body)
	ub, _ := io.ReadAll(unknown.Body)
	if another.StatusCode != http.StatusNotFound || unknown.StatusCode != another.StatusCode || string(ub) != string(ab) {
		t.Errorf("another token's session: %d %s; unknown session: %d %s; want both 404, alike", another.StatusCode, ab, unknown.StatusCode, ub)
	}
}

// TestStreamableUnknownSessionLooksLikeAnothers: on streamable HTTP too, a
// request naming a session that does not exist is answered exactly as one
// naming another token's session, on every method.
func TestStreamableUnknownSessionLooksLikeAnothers(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{BearerTokens: []string{"tok-A", "tok-B"}})
	id := rawPost(t, url+"/mcp", initBody, map[string]string{"Authorization": "Bearer tok-A"}).Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("no session id")
	}
	answer := func(method, session string) (int, string) {
		resp := do(t, method, url+"/mcp", pingBody, map[string]string{"Authorization": "Bearer tok-B", "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"})
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		as, ab := answer(method, id)
		us, ub := answer(method, "mcp-session-NOSUCHSESSION")
		if as != http.StatusNotFound || us != as || ub != ab {
			t.Errorf("%s: another token's session: %d %s; unknown session: %d %s; want both 404, alike", method, as, ab, us, ub)
		}
	}
	// An initialize that still carries an old session's id opens a new one.
	if resp := rawPost(t, url+"/mcp", initBody, map[string]string{"Authorization": "Bearer tok-B", "Mcp-Session-Id": "mcp-session-NOSUCHSESSION"}); resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize naming an unknown session: status %d, session %q; want 200 and a new session", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
}
