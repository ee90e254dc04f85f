package server_test

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStdioFrameRules: every message is read strictly before mcp-go sees
// it, and a refused one gets a JSON-RPC error at once, naming its id when
// it has a readable one; the session goes on.
func TestStdioFrameRules(t *testing.T) {
	r := startRaw(t)
	tests := []struct {
		name   string
		line   string
		wantID any // nil: the error names no id
		code   int
		msg    string
	}{
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, -32600, "not null"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, nil, -32600, "not an object"},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, nil, -32600, "not a boolean"},
		{"upper-case member", `{"jsonrpc":"2.0","id":3,"METHOD":"tools/list"}`, float64(3), -32600, `"METHOD"`},
		{"duplicate member", `{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/list"}`, float64(4), -32600, "duplicate member name /method"},
		{"duplicate in arguments", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}`, float64(5), -32600, "duplicate member name"},
		{"case variant in params", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"NAME":"echo","arguments":{"text":"a"}}}`, float64(6), -32600, `"NAME"`},
		{"case variant in _meta", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},"_meta":{"PROGRESSTOKEN":1}}}`, float64(7), -32600, `"PROGRESSTOKEN"`},
		{"params not an object", `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1]}`, float64(8), -32600, "params must be an object"},
		{"wrong version", `{"jsonrpc":"1.0","id":9,"method":"ping"}`, float64(9), -32600, `"2.0"`},
		{"batch", `[{"jsonrpc":"2.0","id":10,"method":"ping"}]`, nil, -32600, "batches are not supported"},
		{"not JSON", `{"jsonrpc":"2.0","id":11,`, float64(11), -32700, "parse error"},
		{"not JSON at all", `hello`, nil, -32700, "parse error"},
		{"two values", `{"jsonrpc":"2.0","id":12,"method":"ping"} {}`, float64(12), -32700, "more than one"},
		// The TypeScript SDK writes the id last: a refusal found before it
		// must still name it, or the client waits for its timeout.
		{"lone surrogate, id last", `{"method":"tools/call","params":{"name":"echo","arguments":{"text":"a \ud800"}},"jsonrpc":"2.0","id":13}`, float64(13), -32700, "invalid UTF-8"},
		{"duplicate in arguments, id last", `{"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}},"jsonrpc":"2.0","id":14}`, float64(14), -32600, "duplicate member name"},
		{"case variant in params, id last", `{"method":"tools/call","params":{"NAME":"echo"},"jsonrpc":"2.0","id":"s15"}`, "s15", -32600, `"NAME"`},
		{"two ids, one a case variant", `{"method":"ping","ID":16,"jsonrpc":"2.0","id":17}`, nil, -32600, `"ID"`},
		{"syntax error, id last", `{"method":"ping","params":{"a":tru},"jsonrpc":"2.0","id":18}`, nil, -32700, "parse error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.send(t, tt.line)
			m := r.read(t)
			if m.Error == nil {
				t.Fatalf("got %+v, want error %d", m, tt.code)
			}
			if m.Error.Code != tt.code || !strings.Contains(m.Error.Message, tt.msg) {
				t.Errorf("got error %d %q, want %d containing %q", m.Error.Code, m.Error.Message, tt.code, tt.msg)
			}
			if m.ID != tt.wantID {
				t.Errorf("got id %v, want %v", m.ID, tt.wantID)
			}
		})
	}
	// The session is unharmed.
	r.send(t, `{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	if m := r.read(t); m.ID != "after" || !strings.Contains(string(m.Result), "still here") {
		t.Errorf("call after refusals = %+v", m)
	}
}

// TestStdioRequestsBeforeInitialize: only initialize and ping are served
// before initialize.
func TestStdioRequestsBeforeInitialize(t *testing.T) {
	r := startRawUninitialized(t)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"early"}}}`)
	m := r.read(t)
	if m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "send initialize") {
		t.Fatalf("tools/call before initialize = %+v, want a -32600 error asking for initialize", m)
	}
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := r.read(t); m.ID != float64(2) || m.Error != nil {
		t.Fatalf("ping before initialize = %+v, want a reply", m)
	}
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := r.read(t); m.ID != float64(3) || m.Error != nil {
		t.Fatalf("initialize = %+v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"now"}}}`)
	if m := r.read(t); m.ID != float64(4) || !strings.Contains(string(m.Result), "now") {
		t.Fatalf("tools/call after initialize = %+v", m)
	}
}

// TestStdioFloodGetsBusyAndPingsStillAnswered: past the bound on
// outstanding calls, a call is refused at once with "server busy", and
// pings and cancellations are still read and answered; a cancelled call
// frees its place.
func TestStdioFloodGetsBusyAndPingsStillAnswered(t *testing.T) {
	const bound, flood = 8, 40
	r := startRaw(t, fmt.Sprintf("MCP_TOOLS_TEST_MAX_QUEUED=%d", bound), "MCP_TOOLS_TEST_MAX_IN_FLIGHT=2")
	for i := range flood {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`, i))
	}
	r.send(t, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	busy := 0
	for pinged := false; !pinged || busy < flood-bound; {
		m := r.read(t)
		switch {
		case m.ID == "ping":
			pinged = true
		case m.Error != nil && m.Error.Code == -32000 && strings.Contains(m.Error.Message, "server busy"):
			busy++
		default:
			t.Fatalf("unexpected message %+v", m)
		}
	}
	if busy != flood-bound {
		t.Errorf("got %d busy refusals, want %d", busy, flood-bound)
	}
	// Cancelling one outstanding call frees its place once the call has
	// ended (it stops at once: the tool honours cancellation): then a new
	// call is accepted (it waits for a worker), not refused; the next one
	// is refused again.
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`)
	accepted := false
	for k := 0; k < 200 && !accepted; k++ {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"new-%d","method":"tools/call","params":{"name":"echo","arguments":{"text":"room again"}}}`, k))
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, k))
		accepted = true
		for {
			m := r.read(t)
			if m.ID == fmt.Sprintf("ping-%d", k) {
				break
			}
			if m.ID == fmt.Sprintf("new-%d", k) && m.Error != nil {
				accepted = false
			}
		}
		if !accepted {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !accepted {
		t.Fatal("no call was accepted after a cancellation freed a place")
	}
	r.send(t, `{"jsonrpc":"2.0","id":"one-too-many","method":"tools/call","params":{"name":"echo","arguments":{"text":"no room"}}}`)
	if m := r.read(t); m.ID != "one-too-many" || m.Error == nil || m.Error.Code != -32000 {
		t.Errorf("the call after that = %+v, want server busy", m)
	}
}

// TestStdioBoundHolds: the bound on outstanding calls cannot be dodged: a
// ping or a refused duplicate that reuses a running call's id frees
// nothing, and a numeric id spelled another way (1.0 for 1) is the same id.
func TestStdioBoundHolds(t *testing.T) {
	r := startRaw(t, "MCP_TOOLS_TEST_MAX_QUEUED=2", "MCP_TOOLS_TEST_MAX_IN_FLIGHT=2")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`)
	r.send(t, `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	r.send(t, `{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`)
	r.send(t, `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`)
	r.send(t, `{"jsonrpc":"2.0","id":"end","method":"ping"}`)
	// Both pings are answered on goroutines of mcp-go's, so "end" may come
	// before the first one: read until both came (read fails the test if an
	// answer never comes).
	var got []string
	for pings := 0; pings < 2; {
		m := r.read(t)
		if m.Error == nil && m.Result != nil && (m.ID == "end" || m.ID == float64(1)) {
			pings++
		}
		if m.ID == "end" {
			continue
		}
		code := 0
		if m.Error != nil {
			code = m.Error.Code
		}
		got = append(got, fmt.Sprintf("%v:%d", m.ID, code))
	}
	sort.Strings(got) // the pings are answered on mcp-go's goroutines, the refusals at once
	if want := "1:-32600,1:0,c:-32000"; strings.Join(got, ",") != want {
		t.Errorf("answers %v, want %s (the ping answered; 1.0 refused as a duplicate; c refused: the bound holds)", got, want)
	}
}

// TestStdioHugeNumberIDRefused: a call on mcp-go's path whose id is a
// number past float64's range is refused, naming its id, and holds no
// place among the outstanding calls. mcp-go cannot read such an id: it
// answered "parse error" with a null id, and the call's place was never
// freed (so the next call past the bound was refused as busy, and the end
// of the input waited the whole grace period for its answer).
func TestStdioHugeNumberIDRefused(t *testing.T) {
	r := startRaw(t, "MCP_TOOLS_TEST_MAX_QUEUED=1")
	r.send(t, `{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"x-slow":true}}`)
	// The answer is read raw: 1e400 does not fit the test's float64 either.
	got := make(chan string, 1)
	go func() { line, _ := r.out.ReadString('\n'); got <- line }()
	select {
	case line := <-got:
		if !strings.Contains(line, `"id":1e400,"error":{"code":-32600,`) || !strings.Contains(line, "too large") {
			t.Errorf("call with id 1e400 answered %q, want a -32600 error naming it", line)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no answer to the call with id 1e400 (stderr: %s)", r.stderr.String())
	}
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"next"},"x-slow":true}}`)
	if m := r.read(t); m.ID != float64(2) || !strings.Contains(string(m.Result), "next") {
		t.Errorf("the next call = %+v %s, want it run (its place is free)", m, m.Result)
	}
}

// TestStdioEOFLetsMCPGoCallsFinish: when stdin ends, the calls mcp-go
// runs (here made to go its way by an extra parameter) finish as the fast
// path's do, each answered with its result. mcp-go cancels every call it
// runs when it sees the end of its input, and they were answered
// "cancelled" at once.
func TestStdioEOFLetsMCPGoCallsFinish(t *testing.T) {
	r := startRaw(t)
	for i := range 3 {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":2000},"x-slow":true}}`, i))
	}
	r.send(t, `{"jsonrpc":"2.0","id":"fast","method":"tools/call","params":{"name":"sleep","arguments":{"millis":2000}}}`)
	// Running, not waiting for a worker (idle workers take a call in well
	// under this, even on a loaded 2-core machine); they sleep on past it.
	time.Sleep(800 * time.Millisecond)
	r.in.Close()
	for range 4 {
		if m := r.read(t); !strings.Contains(string(m.Result), "slept") {
			t.Errorf("call %v = %s %+v, want slept", m.ID, m.Result, m.Error)
		}
	}
}

// TestStdioEOFRunsQueuedMCPGoCalls: when stdin ends with more calls on
// mcp-go's path than MaxInFlight, the ones still waiting in mcp-go's
// pool for a worker run too, each answered once with its result. They
// were answered "the server is shutting down; the call was not run", or
// cancelled, since the end of the input began the shutdown before they
// had a worker.
func TestStdioEOFRunsQueuedMCPGoCalls(t *testing.T) {
	const n = 6
	for name, offFast := range map[string]string{
		"other parameter": `"x-slow":true`,
		"protocol 2026-07-28": `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := startRaw(t, "MCP_TOOLS_TEST_MAX_IN_FLIGHT=2")
			for i := range n {
				r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":300},%s}}`, i, offFast))
			}
			r.in.Close()
			answered := map[any]int{}
			for range n {
				m := r.read(t)
				if !strings.Contains(string(m.Result), "slept") {
					t.Errorf("call %v = %s %+v, want slept", m.ID, m.Result, m.Error)
				}
				answered[m.ID]++
			}
			if len(answered) != n {
				t.Errorf("answered %v, want each of %d calls once", answered, n)
			}
			// Nothing more: no call is answered twice, and the server exits.
			if line, err := r.out.ReadString('\n'); err == nil {
				t.Errorf("after every answer, the server wrote %q", line)
			}
			if err := r.cmd.Wait(); err != nil {
				t.Errorf("server exit = %v (stderr: %s)", err, r.stderr.String())
			}
		})
	}
}

// TestStdioShutdownAnswersQueuedMCPGoCalls: at a shutdown (SIGTERM, or
// the end of the input past the grace period) the calls on mcp-go's path
// still waiting for a worker are answered, as not run, and the one running
// as cancelled; each once. mcp-go's workers stop when its context ends and
// dropped what was left in its queue: those calls were never answered.
func TestStdioShutdownAnswersQueuedMCPGoCalls(t *testing.T) {
	const queued = 8
	for _, how := range []string{"SIGTERM", "end of input"} {
		t.Run(how, func(t *testing.T) {
			r := startRaw(t, "MCP_TOOLS_TEST_MAX_IN_FLIGHT=1", "MCP_TOOLS_TEST_GRACE=1s")
			for i := range queued + 1 { // the first runs a minute; the rest wait for it
				r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000},"x-slow":true}}`, i))
			}
			r.send(t, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
			if m := r.read(t); m.ID != "ping" { // every call was read
				t.Fatalf("got %+v, want the ping's answer", m)
			}
			if how == "SIGTERM" {
				if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			} else {
				r.in.Close()
			}
			answered := map[any]int{}
			for range queued + 1 {
				m := r.read(t)
				if !strings.Contains(string(m.Result), `"cancelled"`) {
					t.Errorf("call %v = %s %+v, want a cancelled result", m.ID, m.Result, m.Error)
				}
				answered[m.ID]++
			}
			if len(answered) != queued+1 {
				t.Errorf("answered %v, want each of %d calls once", answered, queued+1)
			}
			if line, err := r.out.ReadString('\n'); err == nil {
				t.Errorf("after every answer, the server wrote %q", line)
			}
		})
	}
}

// TestStdioEOFRunsLastLineWithoutNewline: a last call not ended by a
// newline (printf '...' | mcp-tools serve) is run on mcp-go's path as on
// the fast path. mcp-go drops a last line without its newline: the call
// was never run, and the end of the input waited the whole grace period
// for its answer.
func TestStdioEOFRunsLastLineWithoutNewline(t *testing.T) {
	for name, params := range map[string]string{
		"fast path":   `{"name":"echo","arguments":{"text":"last"}}`,
		"mcp-go path": `{"name":"echo","arguments":{"text":"last"},"x-slow":true}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := startRaw(t, "MCP_TOOLS_TEST_GRACE=60s")
			if _, err := io.WriteString(r.in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`); err != nil {
				t.Fatal(err)
			}
			r.in.Close()
			if m := r.read(t); m.ID != float64(1) || !strings.Contains(string(m.Result), "last") {
				t.Errorf("last call = %+v %s, want it run", m, m.Result)
			}
		})
	}
}

// TestStdioEOFAnswersEveryCall: when stdin ends with calls still queued,
// each is answered (they finish within the grace period) before the server
// exits; none is dropped because the input closed first.
func TestStdioEOFAnswersEveryCall(t *testing.T) {
	r := startRaw(t, "MCP_TOOLS_TEST_MAX_IN_FLIGHT=1")
	for i := range 6 {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":100}}}`, i))
	}
	r.in.Close()
	answered := map[any]bool{}
	for range 6 {
		m := r.read(t)
		if !strings.Contains(string(m.Result), "slept") {
			t.Errorf("call %v = %s %+v, want slept", m.ID, m.Result, m.Error)
		}
		answered[m.ID] = true
	}
	if len(answered) != 6 {
		t.Errorf("answered %v, want 6 calls", answered)
	}
}

// TestStdioClosedStdoutEndsTheSession: when the client closes its end of
// stdout, the next write fails (no SIGPIPE death): calls are cancelled and
// the server exits 0.
func TestStdioClosedStdoutEndsTheSession(t *testing.T) {
	r := startRaw(t)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`)
	r.outRaw.Close()
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("server exit = %v, want status 0 (stderr: %s)", err, r.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("server still running 20s after its stdout closed (stderr: %s)", r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "stdout is closed") {
		t.Errorf("stderr does not say why the session ended: %s", r.stderr.String())
	}
}

// TestStdioSIGTERMExitsAfterGrace: with a 1s grace, SIGTERM ends a server
// whose call would run a minute long after the grace, not after the call.
func TestStdioSIGTERMExitsAfterGrace(t *testing.T) {
	r := startRaw(t, "MCP_TOOLS_TEST_GRACE=1s")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}}}`)
	time.Sleep(100 * time.Millisecond)
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	m := r.read(t)
	if m.ID != float64(1) || !strings.Contains(string(m.Result), `"cancelled"`) {
		t.Errorf("call at shutdown = %+v, want a cancelled result", m)
	}
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 0) {
			t.Fatalf("exit = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server still running 20s after SIGTERM with a 1s grace")
	}
}
