package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestEveryBuiltinThroughTheBinary calls each built-in once through the
// real binary over stdio.
func TestEveryBuiltinThroughTheBinary(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><head><title>Local page</title></head><body><h1>Hello</h1><p>From a <a href="/x">local</a> page.</p></body></html>`)
	}))
	defer site.Close()
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"results":[{"title":"Go","url":"https://go.dev","content":"The Go language, query %s"}]}`, r.URL.Query().Get("q"))
	}))
	defer searx.Close()

	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "notes", "a.txt"), []byte("alpha"), 0o644)
	cfg := filepath.Join(dir, "tools.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`builtins:
  calculator: {}
  datetime: {}
  json_query: {}
  echo: {}
  file_read: {root: %[1]q}
  file_list: {root: %[1]q}
  file_write: {root: %[1]q, approval: false}
  web_fetch: {allow_private_network: true}
  web_search: {backend: searxng, url: %[2]q}
`, root, searx.URL)), 0o644)

	c, ctx, _ := serveClient(t, nil, nil, "serve", "--config", cfg)
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"calculator", map[string]any{"input": "(178.15 - 150) * 100"}, "2815"},
		{"datetime", map[string]any{"input": "weekday of 2024-07-04"}, "Thursday"},
		{"json_query", map[string]any{"json_path": "$.a[1]", "json": `{"a":[1,2,3]}`}, "[2]"},
		{"echo", map[string]any{"text": "ping"}, "ping"},
		{"file_write", map[string]any{"path": "notes/b.txt", "content": "beta"}, `"created":true`},
		{"file_read", map[string]any{"path": "notes/b.txt"}, `"content":"beta"`},
		{"file_list", map[string]any{"path": "notes"}, `"a.txt"`},
		{"web_fetch", map[string]any{"url": site.URL}, "# Hello"},
		{"web_search", map[string]any{"query": "golang"}, "1. Go"},
	}
	for _, tt := range tests {
		req := mcp.CallToolRequest{}
		req.Params.Name = tt.tool
		req.Params.Arguments = tt.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Errorf("%s: %v", tt.tool, err)
			continue
		}
		if res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s %v = %q (isError %v), want %q", tt.tool, tt.args, text(res), res.IsError, tt.want)
		}
	}
}

// TestWebFetchRefusesLoopbackByDefault: without --allow-private-network the
// real binary will not fetch from 127.0.0.1.
func TestWebFetchRefusesLoopbackByDefault(t *testing.T) {
	var hit atomic.Bool
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer site.Close()
	out, _, code := runBinary(t, "call", "web_fetch", fmt.Sprintf(`{"url": %q}`, site.URL))
	if code != 1 || hit.Load() {
		t.Errorf("web_fetch of %s: exit %d, server reached %v; output %s", site.URL, code, hit.Load(), out)
	}
}
