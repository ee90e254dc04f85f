package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// exited reports whether pid has ended: no such process, or a zombie
// waiting for whoever inherited it.
func exited(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return !alive(pid)
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && bytes.HasPrefix(b[i+1:], []byte(" Z"))
}

// TestCommandDiesWithTheServer: a server killed by SIGKILL takes its
// running tool process with it.
func TestCommandDiesWithTheServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a parent-death signal exists only on Linux")
	}
	pidfile := filepath.Join(t.TempDir(), "tool.pid")
	server := exec.Command(os.Args[0], "-test.run=^$")
	server.Env = append(os.Environ(), helperEnv+"=server", "PIDFILE="+pidfile)
	server.Stderr = os.Stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	tool := grandchild(t, pidfile) // the tool process's pid, once it runs
	t.Cleanup(func() { syscall.Kill(tool, syscall.SIGKILL) })
	if exited(tool) {
		t.Fatal("the tool process ended before the server was killed")
	}
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	server.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for !exited(tool) {
		if time.Now().After(deadline) {
			t.Fatalf("tool process %d still runs 10s after its server was killed", tool)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCommandProgressFlood: endless progress lines are coalesced, the
// last is delivered, and they count against max_stderr.
func TestCommandProgressFlood(t *testing.T) {
	tests := []struct {
		name      string
		maxStderr int64
		wantErr   string // "" for success
	}{
		{"under a raised cap", 16 << 20, ""},
		{"over the default cap", 0, "its error output exceeds the 64 KiB limit (max_stderr)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []float64
			ctx := tools.WithProgress(context.Background(), func(p, _ float64, _ string) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, p)
			})
			c := command(t, "progressflood", func(cfg *remote.CommandConfig) { cfg.MaxStderr = tt.maxStderr })
			start := time.Now()
			r := tools.Settle(c.Call(ctx, json.RawMessage(`{"input":""}`)))
			elapsed := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			// One report at once, then at most one per interval, plus
			// the last one at the end.
			if limit := 2 + int(elapsed/remote.ProgressInterval); len(got) > limit {
				t.Errorf("got %d progress reports in %s, want at most %d", len(got), elapsed, limit)
			}
			if tt.wantErr != "" {
				if r.Err == nil || !strings.Contains(r.Err.Message, tt.wantErr) {
					t.Errorf("got %q %v, want %q", r.Text, r.Err, tt.wantErr)
				}
				return
			}
			if r.Err != nil || r.Text != "done" {
				t.Fatalf("got %q %v, want done", r.Text, r.Err)
			}
			if len(got) == 0 || got[len(got)-1] != progressLines {
				t.Errorf("got reports %v, want the last to be %d", got, progressLines)
			}
		})
	}
	// Right after, the tool still answers.
	if r := run(t, command(t, "echo", nil), `{"input":"x"}`); r.Err != nil {
		t.Errorf("got %v after the flood, want an answer", r.Err)
	}
}

// TestCommandArgvSecrets: a secret in the command, by ${NAME}, reaches the
// program but never a log line (at any level) or an error message.
func TestCommandArgvSecrets(t *testing.T) {
	const secret = "s3cr3t-token-value"
	t.Setenv("REMOTE_TEST_ARGV_SECRET", secret)
	tests := []struct {
		name    string
		command []string
		want    string // the answer, or the start of the error
	}{
		{"in an argument", []string{os.Args[0], "-test.run=^$", "--token=${REMOTE_TEST_ARGV_SECRET}"}, "--token=" + secret},
		{"in the program", []string{"/nonexistent/${REMOTE_TEST_ARGV_SECRET}"}, `tool "sub": cannot start "/nonexistent/${REMOTE_TEST_ARGV_SECRET}"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			c := command(t, "args", func(cfg *remote.CommandConfig) {
				cfg.Command = tt.command
				cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.Level(-8)}))
			})
			r := run(t, c, `{"input":""}`)
			got := r.Text
			if r.Err != nil {
				got = r.Err.Error()
				if strings.Contains(got, secret) {
					t.Errorf("got error %q, which holds the secret", got)
				}
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if !strings.Contains(logs.String(), "${REMOTE_TEST_ARGV_SECRET}") {
				t.Errorf("got log %q, want the argv as configured", logs.String())
			}
			if strings.Contains(logs.String(), secret) {
				t.Errorf("got log %q, which holds the secret", logs.String())
			}
		})
	}
	_, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "x", Description: "d"},
		Command: []string{"echo", "${REMOTE_TEST_UNSET_VARIABLE}"}})
	if want := "needs environment variable REMOTE_TEST_UNSET_VARIABLE, which is not set"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}
