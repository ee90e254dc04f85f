package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// serveUntil serves transport (server.TransportHTTP or server.TransportSSE)
// on ln with srv until ctx is done, then shuts the server down, as
// cmd/mcp-tools does on SIGTERM, and returns Serve's error.
func serveUntil(ctx context.Context, srv *server.Server, ln net.Listener, transport string) error {
	h := srv.StreamableHTTPHandler()
	if transport == server.TransportSSE {
		h = srv.SSEHandler()
	}
	stop := context.AfterFunc(ctx, func() { _ = srv.Shutdown(context.Background()) })
	defer stop()
	return srv.Serve(ln, h)
}

func newServer(t testing.TB, opts server.Options) *server.Server {
	t.Helper()
	reg, err := tools.NewRegistry(testTools()...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestServeReturnsAfterShutdown: Shutdown alone, with no context, ends
// Serve on every handler the server makes, Serve returns nil, and the
// listener no longer accepts.
func TestServeReturnsAfterShutdown(t *testing.T) {
	tests := []struct {
		name    string
		handler func(*server.Server) http.Handler
		path    string
	}{
		{name: "streamable HTTP", handler: (*server.Server).StreamableHTTPHandler, path: server.PathHealthz},
		{name: "SSE", handler: (*server.Server).SSEHandler, path: server.PathHealthz},
		{name: "ops", handler: func(s *server.Server) http.Handler { return s.OpsHandler(nil) }, path: server.PathReadyz},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, server.Options{})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln, tt.handler(srv)) }()
			url := "http://" + ln.Addr().String() + tt.path
			resp, err := http.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: got %d, want 200", tt.path, resp.StatusCode)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve: got %v, want nil after a clean shutdown", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return after Shutdown")
			}
			if _, err := http.Get(url); err == nil {
				t.Error("the listener still accepts after Serve returned")
			}
		})
	}
}

// TestServeAfterShutdown: a Serve that starts once the server is shut down
// serves nothing, closes its listener and says why.
func TestServeAfterShutdown(t *testing.T) {
	srv := newServer(t, server.Options{})
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(ln, srv.StreamableHTTPHandler()); !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve after Shutdown: got %v, want http.ErrServerClosed", err)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + server.PathHealthz); err == nil {
		t.Error("the listener accepts after Serve refused to serve")
	}
}

// TestServeStdioReturnsAfterShutdown: a stdio session whose input never
// ends (the client keeps its pipe open) still ends when Shutdown is
// called, and ServeStdio returns nil.
func TestServeStdioReturnsAfterShutdown(t *testing.T) {
	srv := newServer(t, server.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(context.Background(), inR, outW) }()
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(line, `"serverInfo"`) {
		t.Fatalf("initialize: got %q (%v), want the server's reply", line, err)
	}
	go io.Copy(io.Discard, outR)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeStdio: got %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after Shutdown")
	}
}

// TestToolsAsPublished: each Descriptor encodes to exactly the tool object
// a client reads from tools/list, and Tools hands out copies.
func TestToolsAsPublished(t *testing.T) {
	srv := newServer(t, server.Options{Strict: true, Approval: approval.Policy{Require: []string{"add"}}})
	// The bytes a client reads: the JSON-RPC response to tools/list.
	resp := server.MCPOf(srv).HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, raw := range wire.Result.Tools {
		var named struct{ Name string }
		json.Unmarshal(raw, &named)
		listed[named.Name] = string(raw)
	}
	descs := srv.Tools()
	if len(descs) != len(listed) || len(descs) != len(testTools()) {
		t.Fatalf("Tools: got %d descriptors, want %d (tools/list: %d)", len(descs), len(testTools()), len(listed))
	}
	for i, d := range descs {
		if want := testTools()[i].Info().Name; d.Name != want {
			t.Errorf("descriptor %d: got %q, want %q (the registry's order)", i, d.Name, want)
		}
		got, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != listed[d.Name] {
			t.Errorf("descriptor %q:\ngot  %s\nwant %s", d.Name, got, listed[d.Name])
		}
	}
	byName := map[string]server.Descriptor{}
	for _, d := range descs {
		byName[d.Name] = d
	}
	if a := byName["add"].Annotations; !a.Destructive {
		t.Errorf("gated add: got annotations %+v, want Destructive (the server marks gated tools)", a)
	}
	if !strings.Contains(string(byName["echo"].InputSchema), `"additionalProperties":false`) {
		t.Errorf("Strict: echo's input schema is %s, want additionalProperties false", byName["echo"].InputSchema)
	}
	for i := range descs[0].InputSchema {
		descs[0].InputSchema[i] = ' '
	}
	if again := srv.Tools()[0].InputSchema; !json.Valid(again) {
		t.Errorf("Tools()[0].InputSchema = %q after a caller changed its copy, want the schema", again)
	}
}

// TestCall runs calls through Call: results, error kinds and codes,
// invalid arguments, approval asked through Ask, and progress.
func TestCall(t *testing.T) {
	srv := newServer(t, server.Options{Approval: approval.Policy{Require: []string{"login"}}})
	errAway := errors.New("nobody at the terminal")
	tests := []struct {
		name           string
		tool, args     string
		ask            func(context.Context, server.Question) (server.Answer, error)
		wantText       string
		wantSuffix     string
		wantStructured string
		wantError      bool
		wantKind       tools.Kind
		wantCode       int
		wantErr        error
	}{
		{name: "text", tool: "echo", args: `{"text":"hi"}`, wantText: "hi"},
		{name: "structured", tool: "add", args: `{"a":2,"b":3}`, wantStructured: `{"sum":5}`},
		{name: "nil arguments are {}, the client is named", tool: "whoami", wantSuffix: "|mcp-tools"},
		{name: "tool error with a code", tool: "fail", args: `{}`, wantText: "Error: the disk is full", wantError: true, wantKind: tools.KindExecutionFailed, wantCode: 28},
		{name: "invalid arguments", tool: "echo", args: `{}`, wantError: true, wantKind: tools.KindInvalidArguments},
		{name: "gated, approved", tool: "login", args: `{"user":"ada","password":"pw"}`, wantText: "welcome ada",
			ask: func(context.Context, server.Question) (server.Answer, error) { return server.Answer{Accept: true}, nil }},
		{name: "gated, declined", tool: "login", args: `{"user":"ada","password":"pw"}`, wantError: true, wantKind: tools.KindApprovalDenied,
			ask: func(context.Context, server.Question) (server.Answer, error) { return server.Answer{}, nil }},
		{name: "gated, no one to ask", tool: "login", args: `{"user":"ada","password":"pw"}`, wantError: true, wantKind: tools.KindApprovalDenied},
		{name: "gated, ask fails", tool: "login", args: `{"user":"ada","password":"pw"}`, wantErr: errAway,
			ask: func(context.Context, server.Question) (server.Answer, error) { return server.Answer{}, errAway }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args json.RawMessage
			if tt.args != "" {
				args = json.RawMessage(tt.args)
			}
			var asked []server.Question
			opt := server.CallOptions{}
			if tt.ask != nil {
				opt.Ask = func(ctx context.Context, q server.Question) (server.Answer, error) {
					asked = append(asked, q)
					return tt.ask(ctx, q)
				}
			}
			res, err := srv.Call(context.Background(), tt.tool, args, opt)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Call: got error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res.IsError != tt.wantError || res.Kind != tt.wantKind || res.Code != tt.wantCode {
				t.Errorf("got IsError %v, kind %q, code %d (%q), want %v, %q, %d", res.IsError, res.Kind, res.Code, res.Text, tt.wantError, tt.wantKind, tt.wantCode)
			}
			if tt.wantText != "" && res.Text != tt.wantText {
				t.Errorf("text: got %q, want %q", res.Text, tt.wantText)
			}
			if !strings.HasSuffix(res.Text, tt.wantSuffix) {
				t.Errorf("text: got %q, want it to end with %q", res.Text, tt.wantSuffix)
			}
			if tt.wantStructured != "" && string(res.Structured) != tt.wantStructured {
				t.Errorf("structured: got %s, want %s", res.Structured, tt.wantStructured)
			}
			var wire mcp.CallToolResult
			if err := json.Unmarshal(res.JSON, &wire); err != nil || wire.IsError != res.IsError {
				t.Errorf("JSON: got %s (%v), want a CallToolResult with isError %v", res.JSON, err, res.IsError)
			}
			if tt.ask != nil && (len(asked) != 1 || !strings.Contains(asked[0].Message, tt.tool)) {
				t.Errorf("asked %+v, want one question naming %q", asked, tt.tool)
			}
		})
	}
}

// TestCallProgress: progress reports reach CallOptions.Progress, the last
// one before Call returns.
func TestCallProgress(t *testing.T) {
	srv := newServer(t, server.Options{})
	var mu sync.Mutex
	var got []string
	res, err := srv.Call(context.Background(), "progress", nil, server.CallOptions{Progress: func(progress, total float64, message string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, message)
		if total != 2 {
			t.Errorf("total: got %v, want 2", total)
		}
	}})
	if err != nil || res.Text != "ok" {
		t.Fatalf("Call: got %q, %v, want ok", res.Text, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[len(got)-1] != "done" {
		t.Errorf("progress messages: got %q, want them to end with %q", got, "done")
	}
}
