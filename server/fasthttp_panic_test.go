package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/tools"
)

// TestHTTPFastPathAnswersAPanicOutsideTheTool: a panic in the chain
// outside the tool's own recovery (here the whole handler panics) is
// logged at WARN with its stack, and the call is answered as an internal
// error on a connection that stays open, not left to net/http, whose log
// is discarded and which drops the connection.
func TestHTTPFastPathAnswersAPanicOutsideTheTool(t *testing.T) {
	reg, err := tools.NewRegistry(tools.NewPlain(tools.Info{Name: "shout", Description: "Upper-case the input."},
		func(_ context.Context, in string) (tools.Result, error) { return tools.Text(strings.ToUpper(in)), nil }))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s, err := New(reg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.handlers["shout"] = func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("outside the tool")
	}
	h := s.StreamableHTTPHandler()
	post := func(body, session string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		r.Host = "127.0.0.1"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set(mcp.HeaderSessionID, session)
			r.Header.Set(mcp.HeaderProtocolVersion, "2025-06-18")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	init := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	session := init.Header().Get(mcp.HeaderSessionID)
	if session == "" {
		t.Fatalf("initialize: %d %s", init.Code, init.Body)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	rec := post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"shout","arguments":{"input":"hi"}}}`, session)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"id":7`) || !strings.Contains(rec.Body.String(), `internal error in tool \"shout\"`) {
		t.Fatalf("answer %d %s, want the internal error", rec.Code, rec.Body)
	}
	if rec.Header().Get("Connection") == "close" {
		t.Error("the connection is closed after a recovered panic")
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "outside the tool") || !strings.Contains(logs.String(), "stack=") {
		t.Errorf("log %q, want the panic at WARN with its stack", logs.String())
	}
}
