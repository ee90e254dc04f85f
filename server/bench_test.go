package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

var echoCall = json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)

func benchHandle(b *testing.B, s *mcpserver.MCPServer) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp := s.HandleMessage(ctx, echoCall)
		if r, ok := resp.(mcp.JSONRPCResponse); !ok || !strings.Contains(toJSON(r.Result), "hello") {
			b.Fatalf("unexpected response %#v", resp)
		}
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// BenchmarkCallBareMCPGo is the floor: the same echo tool as a bare mcp-go
// handler, as in ../shared/bench/mcpgo-echo.
func BenchmarkCallBareMCPGo(b *testing.B) {
	benchHandle(b, bareEcho())
}

// bareEcho is the echo tool as a bare mcp-go server.
func bareEcho() *mcpserver.MCPServer {
	s := mcpserver.NewMCPServer("bare", "1", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Return the given text"),
		mcp.WithString("text", mcp.Required(), mcp.Description("text to echo"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, err := req.RequireString("text")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(text), nil
		})
	return s
}

// BenchmarkCallMCPTools is one tools/call through the full mcp-tools stack:
// validation, logging at INFO into io.Discard, recovery, limits.
func BenchmarkCallMCPTools(b *testing.B) {
	reg, err := tools.NewRegistry(testTools()...)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(reg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	benchHandle(b, server.MCPOf(srv))
}

// benchHTTP posts tools/call echo to h over a real 127.0.0.1 listener,
// from 8 sessions at once (one per goroutine of RunParallel).
func benchHTTP(b *testing.B, h http.Handler) {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/mcp"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(session string, body []byte) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(mcp.HeaderSessionID, session)
			req.Header.Set(mcp.HeaderProtocolVersion, "2025-06-18")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, out
	}
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	b.ReportAllocs()
	b.SetParallelism(4) // 8 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		resp, _ := post("", init)
		session := resp.Header.Get(mcp.HeaderSessionID)
		post(session, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		for pb.Next() {
			if _, out := post(session, echoCall); !bytes.Contains(out, []byte("hello")) {
				b.Fatalf("unexpected response %s", out)
			}
		}
	})
}

// BenchmarkHTTPBareMCPGo is streamable HTTP's floor: the echo tool on a
// bare mcp-go server (stateful sessions, as mcp-tools has).
func BenchmarkHTTPBareMCPGo(b *testing.B) {
	benchHTTP(b, mcpserver.NewStreamableHTTPServer(bareEcho(), mcpserver.WithStateLess(false)))
}

// BenchmarkHTTPMCPTools is one tools/call through the full stack over
// streamable HTTP.
func BenchmarkHTTPMCPTools(b *testing.B) {
	reg, err := tools.NewRegistry(testTools()...)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(reg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	benchHTTP(b, srv.StreamableHTTPHandler())
}
