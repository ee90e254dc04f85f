package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/remote"
	"github.com/mcp-tools/mcp-tools/tools/toolstest"
)

// The test binary plays the subprocess when this variable names a mode.
const helperEnv = "REMOTE_TEST_HELPER"

// progressLines is how many progress lines the progressflood helper writes.
const progressLines = 100_000

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	in, _ := io.ReadAll(os.Stdin)
	reply := func(v any) { json.NewEncoder(os.Stdout).Encode(v) }
	switch mode {
	case "echo":
		reply(map[string]any{"success": true, "output": "got " + string(in)})
	case "structured":
		reply(map[string]any{"success": true, "output": "42", "structured": map[string]any{"answer": 42}})
	case "fail":
		reply(map[string]any{"success": false, "error": "the model is not loaded"})
	case "exit":
		fmt.Fprintln(os.Stderr, "  boom: disk full  ")
		return 3
	case "garbage":
		fmt.Println("this is not JSON")
	case "twice":
		// Two answers: which one is meant cannot be told.
		reply(map[string]any{"success": true, "output": "first"})
		reply(map[string]any{"success": false, "error": "second"})
	case "trailing":
		reply(map[string]any{"success": true, "output": "half"})
		fmt.Println("and then some text")
	case "wrongtype":
		fmt.Println(`{"success": true, "output": 42}`)
	case "flood":
		os.Stdout.Write([]byte(strings.Repeat("x", 2<<20)))
	case "errflood":
		os.Stderr.Write([]byte(strings.Repeat("e\n", 100<<10)))
		return 1
	case "progress":
		fmt.Fprintln(os.Stderr, `{"progress": 0.5, "total": 1, "message": "half"}`)
		fmt.Fprintln(os.Stderr, "an ordinary warning")
		fmt.Fprintln(os.Stderr, `{"progress": 1, "total": 1}`)
		reply(map[string]any{"success": true, "output": "done"})
	case "env":
		reply(map[string]any{"success": true, "output": os.Getenv("MODEL") + "|" + os.Getenv("REMOTE_TEST_SECRET") + "|" + os.Getenv(helperEnv)})
	case "big":
		n, _ := strconv.Atoi(os.Getenv("SIZE"))
		reply(map[string]any{"success": true, "output": strings.Repeat("b", n)})
	case "errlong":
		for i := range 1000 {
			fmt.Fprintf(os.Stderr, "line %d of the error output\n", i)
		}
		fmt.Fprint(os.Stderr, "the real reason\n")
		return 2
	case "progressfail":
		fmt.Fprintln(os.Stderr, `{"progress": 0.1, "total": 1, "message": "starting"}`)
		fmt.Fprintln(os.Stderr, "cannot open model.bin")
		return 1
	case "progressflood":
		// 100,000 progress lines as fast as the pipe takes them.
		w := bufio.NewWriter(os.Stderr)
		for i := range progressLines {
			fmt.Fprintf(w, "{\"progress\": %d, \"total\": %d}\n", i+1, progressLines)
		}
		w.Flush()
		reply(map[string]any{"success": true, "output": "done"})
	case "args":
		reply(map[string]any{"success": true, "output": strings.Join(os.Args[2:], " ")})
	case "server":
		// A server with a long-running tool call, until it is killed.
		c, err := remote.NewCommand(remote.CommandConfig{
			Common:  remote.Common{Name: "long", Description: "d", Timeout: time.Hour},
			Command: []string{"sh", "-c", `echo $$ > "$PIDFILE"; exec sleep 300`},
			Env:     map[string]string{"PIDFILE": os.Getenv("PIDFILE")},
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c.Call(context.Background(), json.RawMessage(`{"input":""}`))
		return 1
	case "fault":
		var req struct{ Input string }
		json.Unmarshal(in, &req)
		return fault(req.Input, reply)
	case "pwd":
		wd, _ := os.Getwd()
		reply(map[string]any{"success": true, "output": wd})
	case "slow":
		dir := os.Getenv("COUNT_DIR")
		f := filepath.Join(dir, strconv.Itoa(os.Getpid()))
		os.WriteFile(f, nil, 0o644)
		entries, _ := os.ReadDir(dir)
		time.Sleep(100 * time.Millisecond)
		os.Remove(f)
		reply(map[string]any{"success": true, "output": strconv.Itoa(len(entries))})
	}
	return 0
}

func command(t *testing.T, mode string, mod func(*remote.CommandConfig)) *remote.Command {
	t.Helper()
	cfg := remote.CommandConfig{
		Common:  remote.Common{Name: "sub", Description: "A subprocess tool."},
		Command: []string{os.Args[0], "-test.run=^$"},
		Env:     map[string]string{helperEnv: mode},
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := remote.NewCommand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// run calls tl as a server would as far as time goes: with a deadline of
// its descriptor's timeout (the server owns limits; the tool honours its
// context).
func run(t *testing.T, tl tools.Tool, args string) tools.Outcome {
	t.Helper()
	ctx := context.Background()
	if d := tl.Info().Limits.Timeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return tools.Settle(tl.Call(ctx, json.RawMessage(args)))
}

func TestCommandProtocol(t *testing.T) {
	tests := []struct {
		name, mode, want string
		kind             tools.Kind
		code             int
	}{
		{"success gets the input as JSON", "echo", `got {"input":"hello"}`, "", 0},
		{"structured", "structured", "42", "", 0},
		{"logical failure", "fail", "the model is not loaded", tools.KindExecutionFailed, 0},
		{"non-zero exit gives stderr", "exit", "boom: disk full", tools.KindExecutionFailed, 3},
		{"invalid JSON", "garbage", `invalid response from tool "sub": it is not JSON with a "success" field: "this is not JSON\n"`, tools.KindExecutionFailed, 0},
		{"two JSON values", "twice", `invalid response from tool "sub": it printed more after its JSON answer: "{\"error\":\"second\",\"success\":false}"`, tools.KindExecutionFailed, 0},
		{"text after the JSON", "trailing", `invalid response from tool "sub": it printed more after its JSON answer: "and then some text"`, tools.KindExecutionFailed, 0},
		{"a field of the wrong type", "wrongtype", `invalid response from tool "sub": its "output" is a number, not a string: "{\"success\": true, \"output\": 42}\n"`, tools.KindExecutionFailed, 0},
		{"stdout over the cap", "flood", "its output exceeds the 1 MiB limit", tools.KindExecutionFailed, 0},
		{"stderr over the cap", "errflood", "its error output exceeds the 64 KiB limit", tools.KindExecutionFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, command(t, tt.mode, nil), `{"input":"hello"}`)
			got := r.Text
			if r.Err != nil {
				got = r.Err.Message
				if r.Err.Kind != tt.kind || r.Err.Code != tt.code {
					t.Errorf("kind %s code %d, want %s %d", r.Err.Kind, r.Err.Code, tt.kind, tt.code)
				}
			} else if tt.kind != "" {
				t.Errorf("succeeded with %q, want a %s failure", r.Text, tt.kind)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	r := run(t, command(t, "structured", nil), `{"input":""}`)
	if m, _ := r.Structured.(map[string]any); m["answer"] != float64(42) {
		t.Errorf("structured = %v", r.Structured)
	}
}

func TestCommandTypedSchema(t *testing.T) {
	c := command(t, "echo", func(cfg *remote.CommandConfig) {
		cfg.InputSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	})
	r := run(t, c, `{"text":"hi"}`)
	var got struct {
		Input     string         `json:"input"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(r.Text, "got ")), &got); err != nil {
		t.Fatalf("%q: %v", r.Text, err)
	}
	if got.Input != `{"text":"hi"}` || got.Arguments["text"] != "hi" {
		t.Errorf("stdin = %+v, want input as JSON text plus the arguments object", got)
	}
	if string(c.Info().InputSchema) == string(tools.PlainSchema()) {
		t.Error("a typed subprocess tool publishes the plain schema")
	}
}

func TestCommandIgnoringStdin(t *testing.T) {
	c, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "e", Description: "d"},
		Command: []string{"echo", `{"output": "hi", "success": true}`}})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, c, `{"input":"`+strings.Repeat("x", 1<<20)+`"}`); r.Text != "hi" {
		t.Errorf("echo = %q %v", r.Text, r.Err)
	}
}

// TestCommandStdinIsALine: the request is a line of text, newline ended,
// so a program reading it as a line gets it whole and without failing: in
// sh, read returns 1 for text without one (set -e then ends the script),
// and a while-read loop never sees it.
func TestCommandStdinIsALine(t *testing.T) {
	for _, script := range []string{
		`set -e; read -r req; printf '{"success": true, "output": "%d"}' "${#req}"`,
		`while read -r req; do printf '{"success": true, "output": "%d"}' "${#req}"; done`,
	} {
		c, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "line", Description: "d"},
			Command: []string{"/bin/sh", "-c", script}})
		if err != nil {
			t.Fatal(err)
		}
		if r := run(t, c, `{"input":"hi"}`); r.Err != nil || r.Text != "14" {
			t.Errorf("%s: got %q %v, want the request read as a line", script, r.Text, r.Err)
		}
	}
}

func TestCommandEnvironment(t *testing.T) {
	t.Setenv("REMOTE_TEST_SECRET", "do-not-leak")
	c := command(t, "env", func(cfg *remote.CommandConfig) { cfg.Env["MODEL"] = "small" })
	if r := run(t, c, `{"input":""}`); r.Text != "small||env" {
		t.Errorf("child saw %q, want the declared MODEL and not the server's secret", r.Text)
	}
	dir := t.TempDir()
	c = command(t, "pwd", func(cfg *remote.CommandConfig) { cfg.Dir = dir })
	if r := run(t, c, `{"input":""}`); r.Text != dir {
		t.Errorf("working directory = %q, want %q", r.Text, dir)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sleepy(t *testing.T, timeout time.Duration) (*remote.Command, string) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "grandchild.pid")
	c, err := remote.NewCommand(remote.CommandConfig{
		Common:    remote.Common{Name: "sleepy", Description: "d", Timeout: timeout},
		Command:   []string{"sh", filepath.Join("testdata", "sleepy.sh")},
		Env:       map[string]string{"PIDFILE": pidfile},
		KillGrace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, pidfile
}

func grandchild(t *testing.T, pidfile string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(pidfile)
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatal("the script never wrote its grandchild's pid")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCommandTimeoutKillsTheGroup(t *testing.T) {
	c, pidfile := sleepy(t, 300*time.Millisecond)
	r := run(t, c, `{"input":""}`)
	if r.Err == nil || r.Err.Kind != tools.KindTimeout || r.Err.Message != `tool "sleepy" ran out of time` {
		t.Fatalf("result = %+v", r.Err)
	}
	waitGone(t, grandchild(t, pidfile))
}

func TestCommandCancellationKillsTheGroup(t *testing.T) {
	c, pidfile := sleepy(t, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Outcome, 1)
	go func() { done <- tools.Settle(c.Call(ctx, json.RawMessage(`{"input":""}`))) }()
	pid := grandchild(t, pidfile)
	cancel()
	select {
	case r := <-done:
		if r.Err == nil || r.Err.Kind != tools.KindCancelled {
			t.Errorf("result = %+v, want cancelled", r.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end after cancellation")
	}
	waitGone(t, pid)
}

func TestCommandProgress(t *testing.T) {
	var mu sync.Mutex
	var got []string
	ctx := tools.WithProgress(context.Background(), func(p, total float64, msg string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%g/%g %s", p, total, msg))
	})
	r := tools.Settle(command(t, "progress", nil).Call(ctx, json.RawMessage(`{"input":""}`)))
	if r.Err != nil || r.Text != "done" {
		t.Fatalf("result = %q %v", r.Text, r.Err)
	}
	if strings.Join(got, ",") != "0.5/1 half,1/1 " {
		t.Errorf("progress = %q", got)
	}
}

// TestLimitsInTheDescriptor: a remote tool's timeout and concurrency are
// published as its descriptor's limits, for the server to apply (the
// server's tests show it does); the tool does not apply them twice.
func TestLimitsInTheDescriptor(t *testing.T) {
	c := command(t, "slow", func(cfg *remote.CommandConfig) {
		cfg.MaxConcurrency = 2
		cfg.Timeout = 7 * time.Second
	})
	if got, want := c.Info().Limits, (tools.Limits{Timeout: 7 * time.Second, MaxConcurrency: 2}); got != want {
		t.Errorf("Limits = %+v, want %+v", got, want)
	}
	h := httpTool(t, remote.HTTPConfig{URL: "http://127.0.0.1:1", Common: remote.Common{Name: "h", Description: "d", MaxConcurrency: 3}})
	if got := h.Info().Limits.MaxConcurrency; got != 3 {
		t.Errorf("HTTP MaxConcurrency = %d, want 3", got)
	}
}

func TestNewCommandRefusesBadConfig(t *testing.T) {
	common := remote.Common{Name: "x", Description: "d"}
	tests := []struct {
		name string
		cfg  remote.CommandConfig
		want string
	}{
		{"empty command", remote.CommandConfig{Common: common}, "the command is empty"},
		{"empty program", remote.CommandConfig{Common: common, Command: []string{""}}, "the command is empty"},
		{"bad name", remote.CommandConfig{Common: remote.Common{Name: "bad name", Description: "d"}, Command: []string{"true"}}, "only letters"},
		{"no description", remote.CommandConfig{Common: remote.Common{Name: "x"}, Command: []string{"true"}}, "a description is required"},
		{"negative timeout", remote.CommandConfig{Common: remote.Common{Name: "x", Description: "d", Timeout: -1}, Command: []string{"true"}}, "timeout must not be negative"},
		{"negative concurrency", remote.CommandConfig{Common: remote.Common{Name: "x", Description: "d", MaxConcurrency: -1}, Command: []string{"true"}}, "max_concurrency must not be negative"},
		{"negative max_stdout", remote.CommandConfig{Common: common, Command: []string{"true"}, MaxStdout: -1}, "must not be negative"},
		{"negative max_stderr", remote.CommandConfig{Common: common, Command: []string{"true"}, MaxStderr: -1}, "must not be negative"},
		{"negative kill_grace", remote.CommandConfig{Common: common, Command: []string{"true"}, KillGrace: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := remote.NewCommand(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestCommandConformance(t *testing.T) { toolstest.Check(t, command(t, "echo", nil)) }

// TestCommandGrandchildHoldingPipes: a grandchild that left the process
// group, or a background child, keeps the pipes open; the call still ends,
// bounded by the timeout and the kill grace.
func TestCommandGrandchildHoldingPipes(t *testing.T) {
	mk := func(script string, timeout time.Duration) *remote.Command {
		c, err := remote.NewCommand(remote.CommandConfig{
			Common:    remote.Common{Name: "held", Description: "d", Timeout: timeout},
			Command:   []string{"sh", filepath.Join("testdata", script)},
			KillGrace: 200 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	done := make(chan tools.Outcome, 1)
	go func() { done <- run(t, mk("daemon.sh", 300*time.Millisecond), `{"input":""}`) }()
	select {
	case r := <-done:
		if r.Err == nil || r.Err.Kind != tools.KindTimeout {
			t.Errorf("daemon.sh = %+v, want a timeout", r.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call hung on a grandchild that left the group")
	}
	r := run(t, mk("background.sh", 10*time.Second), `{"input":""}`)
	if r.Err != nil || r.Text != "ok" {
		t.Errorf("background.sh = %q %v, want its answer", r.Text, r.Err)
	}
}
