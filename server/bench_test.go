package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
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
	benchHandle(b, s)
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
