package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// The subprocess benchmarks run the same tiny program with the same stdin:
// our tool against a bare os/exec run.
var benchArgv = []string{"sh", "-c", `cat >/dev/null; echo '{"output": "ok", "success": true}'`}

func BenchmarkCommand(b *testing.B) {
	c, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "b", Description: "d"}, Command: benchArgv})
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"input":"hello"}`)
	for b.Loop() {
		if r, err := c.Call(context.Background(), args); err != nil || r.Text != "ok" {
			b.Fatalf("%v %v", r, err)
		}
	}
}

func BenchmarkBareExec(b *testing.B) {
	stdin := []byte(`{"input":"hello"}`)
	for b.Loop() {
		cmd := exec.Command(benchArgv[0], benchArgv[1:]...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), "ok") {
			b.Fatal(err)
		}
	}
}

func benchServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"score": 0.9}`)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkHTTP(b *testing.B) {
	srv := benchServer(b)
	h, err := remote.NewHTTP(remote.HTTPConfig{Common: remote.Common{Name: "b", Description: "d"}, URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"input":"{\"text\":\"hello\"}"}`)
	for b.Loop() {
		if _, err := h.Call(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareHTTP(b *testing.B) {
	srv := benchServer(b)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	for b.Loop() {
		resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{"text":"hello"}`))
		if err != nil {
			b.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
}
