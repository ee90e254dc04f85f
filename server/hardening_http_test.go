package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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
	go func() { s.done <- srv.ServeHTTP(ctx, ln, transportName) }()
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
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /sse: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
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
