package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleeperConfig writes a config with one subprocess tool that writes its
// pid to a file, then sleeps a minute, and returns its path and the pid
// file's.
func sleeperConfig(t *testing.T) (cfg, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "pid")
	cfg = filepath.Join(dir, "tools.yaml")
	body := fmt.Sprintf(`tools:
  - name: sleeper
    description: Sleeps a minute.
    process:
      command: ["sh", "-c", "echo $$ > %s; exec sleep 60"]
      timeout: 120s
`, pidFile)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, pidFile
}

// startStdioBinary starts the real binary over bare pipes, initializes it
// and starts one sleeper call; it returns when the tool process is running,
// with its pid.
func startStdioBinary(t *testing.T, extra ...string) (*exec.Cmd, *os.File, *bufio.Reader, *os.File, int) {
	t.Helper()
	cfg, pidFile := sleeperConfig(t)
	cmd := exec.Command(binary, append([]string{"serve", "--config", cfg, "--builtins", "echo"}, extra...)...)
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	cmd.Stdin, cmd.Stdout = inR, outW
	stderr := &lockedBuffer{b: &bytes.Buffer{}}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() { cmd.Process.Kill(); inW.Close(); outR.Close() })
	out := bufio.NewReader(outR)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatalf("initialize: %v (stderr: %s)", err, stderr.String())
	}
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleeper","arguments":{"input":"x"}}}`)
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool never started (stderr: %s)", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, inW, out, outR, pid
}

// gone reports whether pid has exited (or is a zombie no one waited for yet).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("the server died of %v", ws.Signal())
			}
			return ee.ExitCode()
		}
		return 0
	case <-time.After(within):
		t.Fatalf("the server still runs after %s", within)
	}
	return -1
}

// TestClosedStdoutEndsServeCleanly: a client that closes its end of stdout
// ends the session as closing stdin would: the running tool process is
// killed, and the server exits 0 (not killed by SIGPIPE).
func TestClosedStdoutEndsServeCleanly(t *testing.T) {
	cmd, in, _, outR, pid := startStdioBinary(t)
	outR.Close()
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if code := waitExit(t, cmd, 20*time.Second); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tool process %d still running after the server exited", pid)
		}
	}
}

// TestClosedStdoutEndsServeAtOnce: a client that closes its end of stdout
// while a call runs and writes nothing more (nor closes stdin) ends the
// session at once, as the README says: the tool process is killed and the
// server exits 0 long before the call (a minute) would end. Nothing is
// written that could fail, so the server must notice the hang-up itself.
func TestClosedStdoutEndsServeAtOnce(t *testing.T) {
	cmd, _, _, outR, pid := startStdioBinary(t)
	outR.Close()
	if code := waitExit(t, cmd, 10*time.Second); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tool process %d still running after the server exited", pid)
		}
	}
}

// TestSIGTERMCancelsAndAnswers: SIGTERM with a 1s grace answers the running
// call with a cancelled result, kills its process, and exits 0, long
// before the call would have ended.
func TestSIGTERMCancelsAndAnswers(t *testing.T) {
	cmd, _, out, _, pid := startStdioBinary(t, "--shutdown-grace", "1s")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	line, err := out.ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":2`) || !strings.Contains(line, `"cancelled"`) {
		t.Errorf("the call's answer = %q, %v; want a cancelled result for id 2", line, err)
	}
	if code := waitExit(t, cmd, 30*time.Second); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if !gone(pid) {
		t.Errorf("tool process %d still running after the server exited", pid)
	}
}
