package remote_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// fault misbehaves as its input says (the "fault" helper).
func fault(how string, reply func(any)) int {
	switch how {
	case "ok":
		reply(map[string]any{"success": true, "output": "ok"})
	case "exit":
		fmt.Fprintln(os.Stderr, "boom")
		return 3
	case "garbage":
		fmt.Println("<html>not JSON</html>")
	case "50MB":
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range 50 {
			os.Stdout.Write(chunk)
		}
	case "endless stderr":
		line := []byte(strings.Repeat("e", 100) + "\n")
		for {
			if _, err := os.Stderr.Write(line); err != nil {
				return 1
			}
		}
	case "ignores SIGTERM":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
	case "leaves a child":
		cmd := exec.Command("sleep", "300")
		cmd.Start()
		os.WriteFile(os.Getenv("PIDFILE"), []byte(fmt.Sprint(cmd.Process.Pid)), 0o644)
		reply(map[string]any{"success": true, "output": "ok"})
	case "hangs":
		time.Sleep(time.Hour)
	}
	return 0
}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(entries)
}

// settle waits (bounded) for the goroutine count to come down to at most
// want, and returns the last count.
func settle(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFaultMatrix: each misbehaviour gives a clear error of the right kind
// within the tool's timeout, leaks no goroutine or open file, and the tool
// answers a normal call right after.
func TestFaultMatrix(t *testing.T) {
	pidfile := t.TempDir() + "/child.pid"
	// The timeout leaves room for a race-enabled helper, which lingers
	// about a second at exit.
	sub := command(t, "fault", func(cfg *remote.CommandConfig) {
		cfg.Timeout = 3 * time.Second
		cfg.KillGrace = 200 * time.Millisecond
		cfg.Env["PIDFILE"] = pidfile
	})
	srv, _ := recordingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("input") {
		case "redirect loop":
			http.Redirect(w, r, r.URL.String(), http.StatusFound)
		case "closes mid-body":
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, "only part")
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "hangs":
			<-r.Context().Done()
		case "503":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, "ok")
		}
	})
	web := httpTool(t, remote.HTTPConfig{URL: srv.URL, Method: "GET", Common: remote.Common{Name: "svc", Description: "d", Timeout: 3 * time.Second}})

	tests := []struct {
		name string
		tool tools.Tool
		kind tools.Kind // "" for success
		want string     // in the message (or the answer)
	}{
		{"exit", sub, tools.KindExecutionFailed, "boom"},
		{"garbage", sub, tools.KindExecutionFailed, `invalid response from tool "sub"`},
		{"50MB", sub, tools.KindExecutionFailed, "exceeds the 1 MiB limit (max_stdout)"},
		{"endless stderr", sub, tools.KindExecutionFailed, "exceeds the 64 KiB limit (max_stderr)"},
		{"ignores SIGTERM", sub, tools.KindTimeout, `tool "sub" ran out of time`},
		{"leaves a child", sub, "", "ok"},
		{"hangs", sub, tools.KindTimeout, `tool "sub" ran out of time`},
		{"redirect loop", web, tools.KindExecutionFailed, "more than 5 redirects"},
		{"closes mid-body", web, tools.KindExecutionFailed, "reading the response"},
		{"hangs", web, tools.KindTimeout, `tool "svc" ran out of time`},
		{"503", web, tools.KindExecutionFailed, "HTTP 503"},
	}
	for _, tt := range tests {
		t.Run(tt.tool.Info().Name+" "+tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"input": tt.name})
			if r := healthy(t, tt.tool); r.Err != nil { // warm up: keep-alive conns, lazy goroutines
				t.Fatalf("warm-up call: %v", r.Err)
			}
			fds, goroutines := openFDs(t), runtime.NumGoroutine()
			done := make(chan tools.Outcome, 1)
			go func() { done <- run(t, tt.tool, string(args)) }()
			var r tools.Outcome
			select {
			case r = <-done:
			case <-time.After(30 * time.Second): // far past timeout plus grace
				t.Fatal("the call did not end")
			}
			switch {
			case tt.kind == "" && (r.Err != nil || r.Text != tt.want):
				t.Errorf("got %q %v, want %q", r.Text, r.Err, tt.want)
			case tt.kind != "" && (r.Err == nil || r.Err.Kind != tt.kind || !strings.Contains(r.Err.Message, tt.want)):
				t.Errorf("got %q %+v, want a %s error with %q", r.Text, r.Err, tt.kind, tt.want)
			}
			if tt.name == "leaves a child" {
				waitGone(t, grandchild(t, pidfile))
			}
			if r := healthy(t, tt.tool); r.Err != nil || r.Text != "ok" {
				t.Errorf("got %q %v right after, want ok: the tool is not healthy", r.Text, r.Err)
			}
			// A few of each may come and go (keep-alive connections).
			const slack = 4
			if n := settle(goroutines + slack); n > goroutines+slack {
				t.Errorf("got %d goroutines, want at most %d", n, goroutines+slack)
			}
			if n := openFDs(t); n > fds+slack {
				t.Errorf("got %d open files, want at most %d", n, fds+slack)
			}
		})
	}
}

// healthy makes a normal call, trying up to three times when one times
// out: on a loaded 2-core machine the race-built helper alone can take
// seconds to start, which says nothing about the tool's health. A tool left
// broken by a fault fails every try.
func healthy(t *testing.T, tool tools.Tool) tools.Outcome {
	t.Helper()
	var r tools.Outcome
	for range 3 {
		if r = run(t, tool, `{"input":"ok"}`); r.Err == nil || r.Err.Kind != tools.KindTimeout {
			return r
		}
	}
	return r
}
