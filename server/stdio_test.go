package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestStdioEndToEnd(t *testing.T) {
	c, stderr := startStdio(t)

	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	byName := map[string]mcp.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
	}
	if len(byName) != len(testTools())+1 {
		t.Errorf("tools/list has %d tools, want %d", len(byName), len(testTools())+1)
	}
	echo := byName["echo"]
	if a := echo.Annotations; a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Errorf("echo annotations = %+v, want explicit readOnly true, destructive false", a)
	}
	if add := byName["add"]; add.OutputSchema.Type != "object" {
		t.Errorf("add output schema type = %q, want object", add.OutputSchema.Type)
	}

	t.Run("success", func(t *testing.T) {
		res := mustCall(t, c, "add", map[string]any{"a": 2, "b": 40})
		if res.IsError {
			t.Fatalf("add: isError: %s", resultText(res))
		}
		if got := structured(t, res)["sum"]; got != float64(42) {
			t.Errorf("structured sum = %v, want 42", got)
		}
		if got := resultText(res); got != `{"sum":42}` {
			t.Errorf("text = %q, want the JSON rendering", got)
		}
	})
	t.Run("execution failure", func(t *testing.T) {
		res := mustCall(t, c, "fail", map[string]any{})
		if !res.IsError || resultText(res) != "Error: the disk is full" {
			t.Errorf("fail = %v %q, want isError and the message", res.IsError, resultText(res))
		}
		if k := errorKind(res); k != "execution_failed" {
			t.Errorf("kind = %q, want execution_failed", k)
		}
		if code := res.Meta.AdditionalFields["mcp-tools/errorCode"]; code != float64(28) {
			t.Errorf("code = %v, want 28", code)
		}
	})
	t.Run("invalid arguments name every field", func(t *testing.T) {
		res := mustCall(t, c, "add", map[string]any{})
		text := resultText(res)
		if !res.IsError || errorKind(res) != "invalid_arguments" {
			t.Fatalf("add {} = %v %q kind %q, want an invalid_arguments error", res.IsError, text, errorKind(res))
		}
		for _, want := range []string{`"a"`, `"b"`} {
			if !strings.Contains(text, want) {
				t.Errorf("message %q does not name %s", text, want)
			}
		}
		res = mustCall(t, c, "add", map[string]any{"a": "two", "b": 5000})
		text = resultText(res)
		for _, want := range []string{"a", "integer", "b", "1000"} {
			if !strings.Contains(text, want) {
				t.Errorf("message %q does not mention %q", text, want)
			}
		}
	})
	t.Run("unknown tool is a JSON-RPC error", func(t *testing.T) {
		_, err := callTool(t, c, "nope", map[string]any{})
		if err == nil {
			t.Fatal("calling an unknown tool succeeded")
		}
	})
	t.Run("panic is contained", func(t *testing.T) {
		res := mustCall(t, c, "boom", map[string]any{})
		if !res.IsError || resultText(res) != `Error: internal error in tool "boom"` || errorKind(res) != "internal_error" {
			t.Errorf("boom = %v %q %q", res.IsError, resultText(res), errorKind(res))
		}
		if strings.Contains(resultText(res), "secret panic detail") {
			t.Error("the panic value reached the client")
		}
		if res := mustCall(t, c, "echo", map[string]any{"text": "still here"}); resultText(res) != "still here" {
			t.Errorf("after the panic echo = %q", resultText(res))
		}
		waitFor(t, func() bool { return strings.Contains(stderr.String(), "secret panic detail") }, "the panic in the log")
	})
	t.Run("runtime.Goexit in a tool is answered", func(t *testing.T) {
		// It cannot be stopped, as a panic can: the goroutine ends. The
		// call still gets an answer (it used to get none, ever).
		for range 3 {
			res := mustCall(t, c, "goexit", map[string]any{})
			if !res.IsError || errorKind(res) != "internal_error" {
				t.Errorf("goexit = %v %q %q", res.IsError, resultText(res), errorKind(res))
			}
		}
		if res := mustCall(t, c, "echo", map[string]any{"text": "still here"}); resultText(res) != "still here" {
			t.Errorf("after goexit echo = %q", resultText(res))
		}
		waitFor(t, func() bool { return strings.Contains(stderr.String(), "runtime.Goexit") }, "the Goexit in the log")
	})
	t.Run("plain tool and audience", func(t *testing.T) {
		res := mustCall(t, c, "shout", map[string]any{"input": "hi"})
		if resultText(res) != "hi!" {
			t.Fatalf("shout = %q", resultText(res))
		}
		tc, _ := mcp.AsTextContent(res.Content[0])
		if tc.Annotations == nil || len(tc.Annotations.Audience) != 1 || tc.Annotations.Audience[0] != mcp.RoleUser {
			t.Errorf("annotations = %+v, want audience [user]", tc.Annotations)
		}
	})
	t.Run("session reaches the tool", func(t *testing.T) {
		res := mustCall(t, c, "whoami", map[string]any{})
		if got := resultText(res); !strings.HasSuffix(got, "|e2e-client") || strings.HasPrefix(got, "|") {
			t.Errorf("whoami = %q, want <session id>|e2e-client", got)
		}
	})
	t.Run("logs", func(t *testing.T) {
		mustCall(t, c, "login", map[string]any{"user": "ann", "password": "hunter2"})
		waitFor(t, func() bool { return strings.Contains(stderr.String(), "welcome ann") }, "the login call in the log")
		logs := stderr.String()
		if strings.Contains(logs, "hunter2") {
			t.Error("a secret field reached the log")
		}
		if !strings.Contains(logs, `echo({\"text\":\"still here\"}) -> still here`) {
			t.Errorf("no INFO line in the name(input) -> output form in:\n%s", logs)
		}
		if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "fail({}) -> Error: the disk is full") {
			t.Errorf("no WARN line for the failed call in:\n%s", logs)
		}
	})
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rawChild starts the stdio child with bare pipes, for tests that need to
// see every byte on the wire.
type rawChild struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	outRaw io.ReadCloser
	stderr *syncBuffer
}

func startRaw(t *testing.T, env ...string) *rawChild {
	t.Helper()
	r := startRawUninitialized(t, env...)
	r.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.read(t)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

// startRawUninitialized starts the stdio child and sends nothing.
func startRawUninitialized(t *testing.T, env ...string) *rawChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"=1", "MCP_TOOLS_TEST_LOG_LEVEL=warn"), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &rawChild{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), outRaw: out, stderr: &syncBuffer{}}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return r
}

func (r *rawChild) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
}

type wireMessage struct {
	ID     any             `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *rawChild) read(t *testing.T) wireMessage {
	t.Helper()
	type lineErr struct {
		line string
		err  error
	}
	ch := make(chan lineErr, 1)
	go func() {
		line, err := r.out.ReadString('\n')
		ch <- lineErr{line, err}
	}()
	select {
	case le := <-ch:
		if le.err != nil {
			t.Fatalf("read: %v (stderr: %s)", le.err, r.stderr.String())
		}
		var m wireMessage
		if err := json.Unmarshal([]byte(le.line), &m); err != nil {
			t.Fatalf("stdout line is not JSON-RPC: %q", le.line)
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatalf("no message from the server (stderr: %s)", r.stderr.String())
	}
	return wireMessage{}
}

func TestStdioOversizeLineRefusedAndNextServed(t *testing.T) {
	r := startRaw(t, "MCP_TOOLS_TEST_MAX_MESSAGE=65536")
	big := strings.Repeat("x", 200_000)
	r.send(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+big+`"}}}`)
	m := r.read(t)
	if m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "too large") {
		t.Fatalf("over-long line answered with %+v, want a -32600 'too large' error", m)
	}
	if m.ID != float64(7) {
		t.Errorf("error id = %v, want 7 (read from the start of the line)", m.ID)
	}
	r.send(t, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"small"}}}`)
	m = r.read(t)
	if m.ID != float64(8) || !strings.Contains(string(m.Result), `"small"`) {
		t.Fatalf("next request answered with %+v %s", m, m.Result)
	}
}

// TestStdioOversizeLineIDLast: the TypeScript SDK writes the id last; an
// over-long line still gets an error naming it (not an id nested in
// params), or the client waits for its timeout.
func TestStdioOversizeLineIDLast(t *testing.T) {
	r := startRaw(t, "MCP_TOOLS_TEST_MAX_MESSAGE=65536")
	big := strings.Repeat("x", 200_000)
	for _, tt := range []struct {
		line string
		want any
	}{
		{`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `","id":99}},"jsonrpc":"2.0","id":7}`, float64(7)},
		{`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}},"jsonrpc":"2.0","id":"s\"8"}`, `s"8`},
		{`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}},"jsonrpc":"2.0","id":9,"id":10}`, nil},
		{`{"method":"tools/call","params":{"name":"echo","arguments":{"id":11,"text":"` + big + `"}},"jsonrpc":"2.0"}`, nil},
	} {
		r.send(t, tt.line)
		m := r.read(t)
		if m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "too large") {
			t.Fatalf("over-long line answered with %+v, want a -32600 'too large' error", m)
		}
		if m.ID != tt.want {
			t.Errorf("%.40s…%s: error id = %v, want %v", tt.line, tt.line[len(tt.line)-30:], m.ID, tt.want)
		}
	}
	r.send(t, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"small"}}}`)
	if m := r.read(t); m.ID != float64(12) || !strings.Contains(string(m.Result), `"small"`) {
		t.Fatalf("next request answered with %+v %s", m, m.Result)
	}
}

func TestStdioHundredParallelCallsAnsweredOnce(t *testing.T) {
	r := startRaw(t)
	const n = 100
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"call-%d"}}}`, i, i)
			if _, err := io.WriteString(r.in, line+"\n"); err != nil {
				t.Errorf("write: %v", err)
				return
			}
		}
	}()
	seen := map[int]int{}
	for range n {
		m := r.read(t)
		id, ok := m.ID.(float64)
		if !ok {
			t.Fatalf("response without a numeric id: %+v", m)
		}
		seen[int(id)]++
		if want := fmt.Sprintf(`"call-%d"`, int(id)); !strings.Contains(string(m.Result), want) {
			t.Errorf("id %d answered with %s, want %s", int(id), m.Result, want)
		}
	}
	wg.Wait()
	for i := range n {
		if seen[i] != 1 {
			t.Errorf("id %d answered %d times, want once", i, seen[i])
		}
	}
	// Nothing more may arrive: a ping must be the very next message.
	r.send(t, `{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	if m := r.read(t); m.ID != "last" {
		t.Errorf("after %d answers the next message was %+v, want the ping reply", n, m)
	}
}

func TestStdioCancelledCallStopsTool(t *testing.T) {
	r := startRaw(t)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`)
	time.Sleep(500 * time.Millisecond)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"after"}}}`)
	if m := r.read(t); m.ID != float64(2) {
		t.Fatalf("first message after the cancel = %+v, want the reply to id 2", m)
	}
	// The sleep must have stopped (its log line says so), and no result may
	// be sent for the cancelled request: the next message is the ping reply.
	waitFor(t, func() bool { return strings.Contains(r.stderr.String(), "sleep(") }, "the cancelled call to end; stderr: "+r.stderr.String())
	r.send(t, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := r.read(t); m.ID != "p" {
		t.Errorf("after the cancel the server sent %+v; want no response for the cancelled request", m)
	}
}

func TestStdioShutdownLetsInFlightCallsFinish(t *testing.T) {
	r := startRaw(t, "MCP_TOOLS_TEST_GRACE=10s")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":500}}}`)
	time.Sleep(100 * time.Millisecond)
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	m := r.read(t)
	if m.ID != float64(1) || !strings.Contains(string(m.Result), "slept") {
		t.Fatalf("in-flight call answered with %+v %s, want it to finish", m, m.Result)
	}
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v, want status 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit after the shutdown")
	}
}

func TestStdioShutdownCancelsAfterGrace(t *testing.T) {
	r := startRaw(t, "MCP_TOOLS_TEST_GRACE=200ms")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`)
	time.Sleep(100 * time.Millisecond)
	if err := r.cmd.Process.Signal(syscallTERM()); err != nil {
		t.Fatal(err)
	}
	m := r.read(t)
	if m.ID != float64(1) || !strings.Contains(string(m.Result), `"isError":true`) {
		t.Fatalf("call answered with %+v %s, want an error after the grace period", m, m.Result)
	}
}
