package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-tools/mcp-tools/cmd/mcp-tools/internal/config"
	"github.com/mcp-tools/mcp-tools/tools"
)

// TestRemoteToolHeadersExpandedOnce: the loader expands ${VAR} in header
// values; a value that then holds "${...}" (a password may) is sent as it
// is, not read as a reference again.
func TestRemoteToolHeadersExpandedOnce(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	src := "tools:\n  - name: kb\n    description: d\n    http: {url: \"" + srv.URL + "\", headers: {Authorization: \"Basic ${KB_AUTH}\"}}\n"
	const secret = "p${ss}w0rd"
	f, err := config.Parse("t.yaml", []byte(src), t.TempDir(), func(k string) (string, bool) { return secret, k == "KB_AUTH" })
	if err != nil {
		t.Fatal(err)
	}
	tl, err := remoteTool(f.Tools[0], f.Dir, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatalf("the tool is not built: %v", err)
	}
	if r := tools.Settle(tl.Call(context.Background(), json.RawMessage(`{"input":"x"}`))); r.Err != nil {
		t.Fatal(r.Err)
	}
	if h := <-got; h != "Basic "+secret {
		t.Errorf("got Authorization %q, want %q", h, "Basic "+secret)
	}
}
