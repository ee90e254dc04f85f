package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// startHTTP serves the test tools on a real listener on 127.0.0.1 and
// returns the base URL. The server shuts down when the test ends.
func startHTTP(t *testing.T, transportName string, opts server.Options) string {
	t.Helper()
	reg, err := tools.NewRegistry(testTools()...)
	if err != nil {
		t.Fatal(err)
	}
	return serveRegistry(t, reg, transportName, opts)
}

// startRegistry serves reg over streamable HTTP.
func startRegistry(t *testing.T, reg *tools.Registry, opts server.Options) string {
	t.Helper()
	return serveRegistry(t, reg, server.TransportHTTP, opts)
}

func serveRegistry(t *testing.T, reg *tools.Registry, transportName string, opts server.Options) string {
	t.Helper()
	_, url, stop, _ := launch(t, reg, transportName, opts)
	t.Cleanup(stop)
	return url
}

// launch serves reg on a real 127.0.0.1 listener. stop shuts the server
// down and waits (at most 15s) for serving to return, failing the test if
// it does not or returns an error; done delivers what serving returned.
func launch(t *testing.T, reg *tools.Registry, transportName string, opts server.Options) (srv *server.Server, url string, stop func(), done <-chan error) {
	t.Helper()
	srv, err := server.New(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	served := make(chan error, 1)
	go func() { err := serveUntil(ctx, srv, ln, transportName); result <- err; served <- err }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-result:
				if err != nil {
					t.Errorf("serving: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Error("serving did not return within 15s of shutdown")
			}
		})
	}
	return srv, "http://" + ln.Addr().String(), stop, served
}

func httpClient(t *testing.T, url string, headers map[string]string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url+"/mcp", transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initialize(t, c)
	return c
}

func sseClient(t *testing.T, url string, headers map[string]string) *client.Client {
	t.Helper()
	c, err := client.NewSSEMCPClient(url+"/sse", transport.WithHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initialize(t, c)
	return c
}

func TestStreamableHTTPEndToEnd(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{})
	c := httpClient(t, url, nil)
	if res := mustCall(t, c, "add", map[string]any{"a": 1, "b": 2}); structured(t, res)["sum"] != float64(3) {
		t.Errorf("add over HTTP = %s", resultText(res))
	}
	if res := mustCall(t, c, "add", map[string]any{"a": 1}); !res.IsError || errorKind(res) != "invalid_arguments" {
		t.Errorf("invalid call over HTTP = %v %s", res.IsError, resultText(res))
	}
	if res := mustCall(t, c, "boom", map[string]any{}); !res.IsError || errorKind(res) != "internal_error" {
		t.Errorf("panic over HTTP = %v %s", res.IsError, resultText(res))
	}

	t.Run("100 parallel calls on one session", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				want := fmt.Sprintf("call-%d", i)
				res, err := callTool(t, c, "echo", map[string]any{"text": want})
				if err != nil {
					t.Errorf("call %d: %v", i, err)
					return
				}
				if got := resultText(res); got != want {
					t.Errorf("call %d = %q, want %q", i, got, want)
				}
			})
		}
		wg.Wait()
	})
}

func TestSSEEndToEnd(t *testing.T) {
	url := startHTTP(t, server.TransportSSE, server.Options{})
	c := sseClient(t, url, nil)
	if res := mustCall(t, c, "echo", map[string]any{"text": "over sse"}); resultText(res) != "over sse" {
		t.Errorf("echo over SSE = %q", resultText(res))
	}
	if res := mustCall(t, c, "fail", map[string]any{}); !res.IsError {
		t.Errorf("fail over SSE = %s", resultText(res))
	}
}

// rawPost sends one JSON-RPC message to path with the given headers.
func rawPost(t *testing.T, url string, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestHTTPRefusals(t *testing.T) {
	const token = "s3cret-token"
	for _, tr := range []string{server.TransportHTTP, server.TransportSSE} {
		t.Run(tr, func(t *testing.T) {
			url := startHTTP(t, tr, server.Options{BearerTokens: []string{token}, MaxMessageBytes: 1024, AllowedOrigins: []string{"https://app.example.com"}})
			endpoint := url + "/mcp"
			if tr == server.TransportSSE {
				endpoint = url + "/message?sessionId=x"
			}
			auth := map[string]string{"Authorization": "Bearer " + token}
			with := func(extra map[string]string) map[string]string {
				m := map[string]string{"Authorization": "Bearer " + token}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}
			tests := []struct {
				name    string
				headers map[string]string
				body    string
				want    int
			}{
				{"no token", nil, initBody, http.StatusUnauthorized},
				{"wrong token", map[string]string{"Authorization": "Bearer nope"}, initBody, http.StatusUnauthorized},
				{"foreign origin", with(map[string]string{"Origin": "https://evil.example"}), initBody, http.StatusForbidden},
				{"non-loopback host", with(map[string]string{"Host": "evil.example:80"}), initBody, http.StatusForbidden},
				{"over-size body", auth, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`, http.StatusRequestEntityTooLarge},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					resp := rawPost(t, endpoint, tt.body, tt.headers)
					if resp.StatusCode != tt.want {
						b, _ := io.ReadAll(resp.Body)
						t.Errorf("status = %d (%s), want %d", resp.StatusCode, b, tt.want)
					}
				})
			}
			t.Run("allowed origins pass", func(t *testing.T) {
				for _, origin := range []string{"https://app.example.com", "http://localhost:5173", "http://127.0.0.1:3000"} {
					resp := rawPost(t, url+"/mcp", initBody, with(map[string]string{"Origin": origin}))
					if tr == server.TransportHTTP && resp.StatusCode != http.StatusOK {
						t.Errorf("origin %s: status %d, want 200", origin, resp.StatusCode)
					}
				}
			})
		})
	}
}

func TestStreamableHTTPSessions(t *testing.T) {
	const token = "tok-A"
	url := startHTTP(t, server.TransportHTTP, server.Options{BearerTokens: []string{token}})
	auth := map[string]string{"Authorization": "Bearer " + token}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`

	t.Run("forged session id", func(t *testing.T) {
		resp := rawPost(t, url+"/mcp", ping, map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": "mcp-session-00000000-0000-4000-8000-000000000000"})
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("forged session: status %d, want 404", resp.StatusCode)
		}
	})

	resp := rawPost(t, url+"/mcp", initBody, auth)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: status %d session %q", resp.StatusCode, id)
	}
	t.Run("session works with its token", func(t *testing.T) {
		resp := rawPost(t, url+"/mcp", ping, map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": id})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("ping on own session: status %d", resp.StatusCode)
		}
	})
	t.Run("delete ends the session", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodDelete, url+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("DELETE: status %d", resp.StatusCode)
		}
		after := rawPost(t, url+"/mcp", ping, map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": id})
		if after.StatusCode != http.StatusNotFound {
			t.Errorf("ping after DELETE: status %d, want 404", after.StatusCode)
		}
	})
}

func TestStreamableHTTPSessionBoundToToken(t *testing.T) {
	// One server, and a session opened with token A: a request that
	// carries the same session id but is not token A's must get 404.
	url := startHTTP(t, server.TransportHTTP, server.Options{BearerTokens: []string{"tok-A", "tok-B"}})
	resp := rawPost(t, url+"/mcp", initBody, map[string]string{"Authorization": "Bearer tok-A"})
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("no session id")
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if r := rawPost(t, url+"/mcp", ping, map[string]string{"Authorization": "Bearer tok-A", "Mcp-Session-Id": id}); r.StatusCode != http.StatusOK {
		t.Fatalf("own session: status %d", r.StatusCode)
	}
	if r := rawPost(t, url+"/mcp", ping, map[string]string{"Authorization": "Bearer tok-B", "Mcp-Session-Id": id}); r.StatusCode != http.StatusNotFound {
		t.Errorf("another valid token on the session: status %d, want 404", r.StatusCode)
	}
	if r := rawPost(t, url+"/mcp", ping, map[string]string{"Authorization": "Bearer tok-C", "Mcp-Session-Id": id}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown token: status %d, want 401", r.StatusCode)
	}
}

func TestHTTPGracefulShutdown(t *testing.T) {
	reg, _ := tools.NewRegistry(testTools()...)
	srv, err := server.New(reg, server.Options{ShutdownGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveUntil(ctx, srv, ln, server.TransportHTTP) }()
	c := httpClient(t, "http://"+ln.Addr().String(), nil)
	result := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := callTool(t, c, "sleep", map[string]any{"millis": 500})
		if err != nil {
			t.Errorf("sleep: %v", err)
		}
		result <- res
	}()
	time.Sleep(150 * time.Millisecond)
	cancel()
	select {
	case res := <-result:
		if res == nil || resultText(res) != "slept" {
			t.Errorf("in-flight call during shutdown = %v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight call never answered")
	}
	if err := <-done; err != nil {
		t.Errorf("ServeHTTP = %v, want nil after a clean shutdown", err)
	}
}

// TestSessionsStayWithTheirToken: no other token may attach to a session's
// stream, post to it or delete it, on either HTTP transport.
func TestSessionsStayWithTheirToken(t *testing.T) {
	tokens := []string{"tok-A", "tok-B"}
	a := map[string]string{"Authorization": "Bearer tok-A"}
	b := map[string]string{"Authorization": "Bearer tok-B"}
	do := func(method, url string, headers map[string]string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	with := func(h map[string]string, k, v string) map[string]string {
		m := map[string]string{k: v}
		for hk, hv := range h {
			m[hk] = hv
		}
		return m
	}

	t.Run("streamable HTTP", func(t *testing.T) {
		url := startHTTP(t, server.TransportHTTP, server.Options{BearerTokens: tokens})
		id := rawPost(t, url+"/mcp", initBody, a).Header.Get("Mcp-Session-Id")
		if id == "" {
			t.Fatal("no session")
		}
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			if code := do(method, url+"/mcp", with(b, "Mcp-Session-Id", id)); code != http.StatusNotFound {
				t.Errorf("%s with another token: %d, want 404", method, code)
			}
		}
		if code := do(http.MethodPost, url+"/mcp", with(a, "Mcp-Session-Id", id)); code != http.StatusOK {
			t.Errorf("the owner's POST: %d", code)
		}
	})

	t.Run("SSE", func(t *testing.T) {
		url := startHTTP(t, server.TransportSSE, server.Options{BearerTokens: tokens})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/sse", nil)
		req.Header.Set("Authorization", "Bearer tok-A")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		buf := make([]byte, 512)
		n, _ := resp.Body.Read(buf)
		_, endpoint, ok := strings.Cut(string(buf[:n]), "data: ")
		if !ok {
			t.Fatalf("no endpoint event in %q", buf[:n])
		}
		endpoint = url + strings.TrimSpace(strings.SplitN(endpoint, "\n", 2)[0])
		if code := do(http.MethodPost, endpoint, b); code != http.StatusNotFound {
			t.Errorf("another token posting to the session: %d, want 404", code)
		}
		if code := do(http.MethodPost, endpoint, a); code != http.StatusAccepted {
			t.Errorf("the owner posting: %d, want 202", code)
		}
	})
}

// TestEmptyBearerTokenAdmitsNoOne: an embedder whose token came out empty
// (BearerTokens: []string{os.Getenv("UNSET")}) must not let in a request
// whose bearer token is blank: Go trims spaces and tabs off a header, but
// not a no-break space, which TrimSpace took away, leaving an empty token.
func TestEmptyBearerTokenAdmitsNoOne(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{BearerTokens: []string{"", "tok"}})
	for _, h := range []string{"Bearer \u00a0", "Bearer \u00a0\u00a0"} {
		resp := rawPost(t, url+"/mcp", initBody, map[string]string{"Authorization": h})
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", h, resp.StatusCode)
		}
	}
	resp := rawPost(t, url+"/mcp", initBody, map[string]string{"Authorization": "Bearer tok"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the real token: %d, want 200", resp.StatusCode)
	}
}
