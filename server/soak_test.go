package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// soakEnv turns TestSoak on. bench/soak.sh sets it.
const soakEnv = "MCP_TOOLS_SOAK"

// The soak's sizes, as the hardening issue asks for them.
const (
	soakHTTPSessions    = 1000
	soakHTTPCalls       = 100 // per session
	soakHTTPConcurrency = 128 // sessions at a time
	// soakHTTPProgressEvery: every so many sessions start with one call
	// that reports progress, so that its answer, and the session's later
	// ones, come as SSE streams rather than application/json.
	soakHTTPProgressEvery = 10

	soakSSESessions    = 200
	soakSSECalls       = 100
	soakSSEConcurrency = 64

	soakStdioCalls    = 50_000
	soakStdioInFlight = 64
	// soakStdioFDCheckAt is the call count at which the child's open fds
	// are first counted; at the end they may exceed it by soakTolerance.
	soakStdioFDCheckAt = 1000
)

// soakTolerance is how many goroutines or fds a subtest may leave over
// its starting count once everything is closed (runtime and net/http
// keep a few of their own, started lazily).
const soakTolerance = 5

// soakSettle bounds the wait for goroutines and fds to come back.
const soakSettle = 10 * time.Second

// soakCallTimeout bounds one call of the soak; a call without an answer
// by then is lost. On stdio, the run gives up when no answer at all has
// come for this long.
const soakCallTimeout = 30 * time.Second

// TestSoak is the soak/load test of the hardening issue: many sessions
// and calls over each transport, with nothing lost, duplicated or wrong,
// and every goroutine and fd given back at the end. It takes tens of
// seconds (minutes with -race), so it runs only with MCP_TOOLS_SOAK=1
// (see bench/soak.sh).
func TestSoak(t *testing.T) {
	if os.Getenv(soakEnv) != "1" {
		t.Skipf("soak test: set %s=1 to run it (bench/soak.sh does; it takes tens of seconds)", soakEnv)
	}
	t.Run("http", soakHTTP)
	t.Run("sse", soakSSE)
	t.Run("stdio", soakStdio)
}

// soakTally counts the calls that went wrong, and keeps the first few
// stories for the failure message.
type soakTally struct {
	ok, lost, duplicated, wrong, failed atomic.Int64

	mu       sync.Mutex
	examples []string
}

func (s *soakTally) note(counter *atomic.Int64, n int64, format string, args ...any) {
	counter.Add(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.examples) < 8 {
		s.examples = append(s.examples, fmt.Sprintf(format, args...))
	}
}

// check fails t unless every one of want calls was answered once and
// right, and nothing else (initialize, DELETE) failed.
func (s *soakTally) check(t *testing.T, want int) {
	t.Helper()
	ok, lost, dup, wrong, failed := s.ok.Load(), s.lost.Load(), s.duplicated.Load(), s.wrong.Load(), s.failed.Load()
	if ok != int64(want) || lost != 0 || dup != 0 || wrong != 0 || failed != 0 {
		t.Errorf("got %d right, %d lost, %d duplicated, %d wrong, %d other failures; want %d right and no others; first problems:\n%s",
			ok, lost, dup, wrong, failed, want, strings.Join(s.examples, "\n"))
	}
}

// soakResources is what a subtest must give back.
type soakResources struct{ goroutines, fds int }

func soakSnapshot(t *testing.T) soakResources {
	t.Helper()
	return soakResources{goroutines: runtime.NumGoroutine(), fds: countFDs(t, "self")}
}

// countFDs counts the open file descriptors of a process (pid or "self").
func countFDs(t *testing.T, pid string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		t.Fatalf("count fds: %v", err)
	}
	return len(entries)
}

// checkGivenBack waits, at most soakSettle, until the goroutines and fds
// are back within soakTolerance of before, and fails with the numbers
// (and a goroutine dump) if they are not.
func checkGivenBack(t *testing.T, before soakResources) {
	t.Helper()
	deadline := time.Now().Add(soakSettle)
	for {
		now := soakSnapshot(t)
		if now.goroutines <= before.goroutines+soakTolerance && now.fds <= before.fds+soakTolerance {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			if len(buf) > 8<<10 {
				buf = buf[:8<<10]
			}
			t.Errorf("after %s: got %d goroutines and %d fds, want at most %d and %d (before: %d and %d); goroutines:\n%s",
				soakSettle, now.goroutines, now.fds, before.goroutines+soakTolerance, before.fds+soakTolerance,
				before.goroutines, before.fds, buf)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// soakServe serves the test tools on transportName on a real 127.0.0.1
// listener, and returns the base URL and a stop function that shuts the
// server down and waits (boundedly) for ServeHTTP to return.
func soakServe(t *testing.T, transportName string) (string, func()) {
	t.Helper()
	reg, err := tools.NewRegistry(testTools()...)
	if err != nil {
		t.Fatal(err)
	}
	_, url, stop, _ := launch(t, reg, transportName, server.Options{})
	return url, stop
}

// soakClientTransport keeps enough idle connections for every concurrent
// session, so that the soak does not churn through ephemeral ports.
func soakClientTransport(conns int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        2 * conns,
		MaxIdleConnsPerHost: 2 * conns,
		IdleConnTimeout:     time.Minute,
	}
}

// runSessions runs session(i) for i in [0, n), at most conc at a time.
func runSessions(n, conc int, session func(i int)) {
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			session(i)
		})
	}
	wg.Wait()
}

func soakSummary(t *testing.T, name string, calls int, elapsed time.Duration) {
	t.Helper()
	t.Logf("soak %s: %d calls in %.1fs, %.0f calls/s", name, calls, elapsed.Seconds(), float64(calls)/elapsed.Seconds())
}

// soakMessage is one JSON-RPC message as the soak clients read it.
type soakMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// echoText returns the text of an echo result, or why it is not one.
func (m soakMessage) echoText() (string, error) {
	switch {
	case m.Error != nil:
		return "", fmt.Errorf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message)
	case m.Result == nil:
		return "", errors.New("no result")
	case m.Result.IsError:
		return "", fmt.Errorf("isError result %+v", m.Result.Content)
	case len(m.Result.Content) != 1 || m.Result.Content[0].Type != "text":
		return "", fmt.Errorf("content %+v, want one text", m.Result.Content)
	}
	return m.Result.Content[0].Text, nil
}

// soakHTTPClient is a lean streamable HTTP client: raw JSON-RPC over
// net/http, one session.
type soakHTTPClient struct {
	hc      *http.Client
	url     string
	session string
	streams *atomic.Int64 // counts the responses that came as SSE streams
}

// post sends body and returns the JSON-RPC messages of the response,
// whether it came as application/json or as an SSE stream, and the HTTP
// status.
func (c *soakHTTPClient) post(body string) ([]soakMessage, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), soakCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && c.session == "" {
		c.session = id
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("read response: %w", err)
	}
	var datas [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		c.streams.Add(1)
		datas = sseData(raw)
	} else if len(bytes.TrimSpace(raw)) > 0 {
		datas = [][]byte{raw}
	}
	msgs := make([]soakMessage, 0, len(datas))
	for _, d := range datas {
		var m soakMessage
		if err := json.Unmarshal(d, &m); err != nil {
			return nil, resp.StatusCode, fmt.Errorf("response %q is not JSON-RPC: %w", d, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, resp.StatusCode, nil
}

// sseData returns the data of each event of an SSE stream (data lines of
// one event joined by newlines).
func sseData(stream []byte) [][]byte {
	var events [][]byte
	var cur []byte
	have := false
	for line := range strings.Lines(string(stream)) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if have {
				events = append(events, cur)
			}
			cur, have = nil, false
			continue
		}
		if data, ok := strings.CutPrefix(line, "data:"); ok {
			data = strings.TrimPrefix(data, " ")
			if have {
				cur = append(cur, '\n')
			}
			cur = append(cur, data...)
			have = true
		}
	}
	if have {
		events = append(events, cur)
	}
	return events
}

func (c *soakHTTPClient) delete() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), soakCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Mcp-Session-Id", c.session)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func soakHTTP(t *testing.T) {
	before := soakSnapshot(t)
	url, stop := soakServe(t, server.TransportHTTP)
	tr := soakClientTransport(soakHTTPConcurrency)
	hc := &http.Client{Transport: tr}
	var tally soakTally
	var streams atomic.Int64

	start := time.Now()
	runSessions(soakHTTPSessions, soakHTTPConcurrency, func(s int) {
		c := &soakHTTPClient{hc: hc, url: url + server.PathMCP, streams: &streams}
		msgs, status, err := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak-%d","version":"1"}}}`, s))
		if err != nil || status != http.StatusOK || len(msgs) != 1 || msgs[0].Error != nil || c.session == "" {
			lost := int64(soakHTTPCalls)
			if s%soakHTTPProgressEvery == 0 {
				lost++
			}
			tally.note(&tally.lost, lost, "session %d: initialize: status %d, %d messages, session %q, err %v", s, status, len(msgs), c.session, err)
			return
		}
		if _, status, err := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || status != http.StatusAccepted {
			tally.note(&tally.failed, 1, "session %d: notifications/initialized: status %d, err %v, want 202", s, status, err)
		}
		// call sends one tools/call and checks that exactly one response,
		// with its id and the text want, comes back.
		call := func(what string, id int, params, want string) {
			msgs, status, err := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params))
			if err != nil {
				tally.note(&tally.lost, 1, "session %d %s: status %d: %v", s, what, status, err)
				return
			}
			answers := 0
			for _, m := range msgs {
				if m.Method != "" && len(m.ID) == 0 {
					continue // a notification
				}
				if string(m.ID) != strconv.Itoa(id) {
					tally.note(&tally.wrong, 1, "session %d %s: a response with id %s, want %d", s, what, m.ID, id)
					continue
				}
				answers++
				if answers > 1 {
					tally.note(&tally.duplicated, 1, "session %d %s: answered %d times", s, what, answers)
					continue
				}
				if got, err := m.echoText(); err != nil || got != want {
					tally.note(&tally.wrong, 1, "session %d %s: got %q (%v), want %q", s, what, got, err, want)
					continue
				}
				tally.ok.Add(1)
			}
			if answers == 0 {
				tally.note(&tally.lost, 1, "session %d %s: status %d and no response among %d messages", s, what, status, len(msgs))
			}
		}
		if s%soakHTTPProgressEvery == 0 {
			// Progress notifications make mcp-go answer as an SSE stream
			// (this call, and the session's later ones), so both response
			// forms are soaked.
			call("progress call", soakHTTPCalls+1, `{"name":"progress","arguments":{},"_meta":{"progressToken":"p"}}`, "ok")
		}
		for i := range soakHTTPCalls {
			want := fmt.Sprintf("s%d-c%d", s, i)
			call(fmt.Sprintf("call %d", i), i+1, fmt.Sprintf(`{"name":"echo","arguments":{"text":%q}}`, want), want)
		}
		if status, err := c.delete(); err != nil || status != http.StatusOK {
			tally.note(&tally.failed, 1, "session %d: DELETE: status %d, err %v, want 200", s, status, err)
		}
	})
	elapsed := time.Since(start)

	stop()
	hc.CloseIdleConnections()
	calls := soakHTTPSessions*soakHTTPCalls + (soakHTTPSessions+soakHTTPProgressEvery-1)/soakHTTPProgressEvery
	tally.check(t, calls)
	if streams.Load() == 0 {
		t.Errorf("got no response as an SSE stream, want some (the progress calls)")
	}
	soakSummary(t, "http", calls, elapsed)
	t.Logf("soak http: %d responses came as SSE streams, the rest as application/json", streams.Load())
	checkGivenBack(t, before)
}

func soakSSE(t *testing.T) {
	before := soakSnapshot(t)
	url, stop := soakServe(t, server.TransportSSE)
	tr := soakClientTransport(soakSSEConcurrency)
	hc := &http.Client{Transport: tr}
	var tally soakTally

	start := time.Now()
	runSessions(soakSSESessions, soakSSEConcurrency, func(s int) {
		c, err := client.NewSSEMCPClient(url+server.PathSSE, transport.WithHTTPClient(hc))
		if err != nil {
			tally.note(&tally.lost, soakSSECalls, "session %d: new client: %v", s, err)
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), soakCallTimeout)
		defer cancel()
		if err := c.Start(context.Background()); err != nil {
			tally.note(&tally.lost, soakSSECalls, "session %d: start: %v", s, err)
			return
		}
		initReq := mcp.InitializeRequest{}
		initReq.Params.ProtocolVersion = "2025-06-18"
		initReq.Params.ClientInfo = mcp.Implementation{Name: fmt.Sprintf("soak-%d", s), Version: "1"}
		if _, err := c.Initialize(ctx, initReq); err != nil {
			tally.note(&tally.lost, soakSSECalls, "session %d: initialize: %v", s, err)
			return
		}
		for i := range soakSSECalls {
			want := fmt.Sprintf("s%d-c%d", s, i)
			ctx, cancel := context.WithTimeout(context.Background(), soakCallTimeout)
			req := mcp.CallToolRequest{}
			req.Params.Name = "echo"
			req.Params.Arguments = map[string]any{"text": want}
			res, err := c.CallTool(ctx, req)
			cancel()
			switch {
			case err != nil:
				tally.note(&tally.lost, 1, "session %d call %d: %v", s, i, err)
			case res.IsError || resultText(res) != want:
				tally.note(&tally.wrong, 1, "session %d call %d: got %q (isError %v), want %q", s, i, resultText(res), res.IsError, want)
			default:
				tally.ok.Add(1)
			}
		}
	})
	elapsed := time.Since(start)

	stop()
	hc.CloseIdleConnections()
	tally.check(t, soakSSESessions*soakSSECalls)
	soakSummary(t, "sse", soakSSESessions*soakSSECalls, elapsed)
	checkGivenBack(t, before)
}

func soakStdio(t *testing.T) {
	before := soakSnapshot(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "MCP_TOOLS_TEST_LOG_LEVEL=warn")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	exited := make(chan error, 1)
	var stdinOnce sync.Once
	closeStdin := func() { stdinOnce.Do(func() { stdin.Close() }) }
	// endChild closes stdin and waits (at most 15s, then kills) for the
	// child to exit; Wait closes our ends of the pipes.
	var waitOnce sync.Once
	endChild := func() {
		waitOnce.Do(func() {
			closeStdin()
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("child exited with %v (stderr: %s)", err, stderr.String())
				}
			case <-time.After(15 * time.Second):
				t.Errorf("child did not exit within 15s of stdin closing; killed")
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
	defer endChild()

	out := bufio.NewReaderSize(stdout, 1<<20)
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`+"\n"); err != nil {
		t.Fatalf("write initialize: %v", err)
	}
	// A child that never answers is killed, which ends the read.
	watchdog := time.AfterFunc(soakCallTimeout, func() { _ = cmd.Process.Kill() })
	line, err := out.ReadBytes('\n')
	watchdog.Stop()
	var initReply soakMessage
	if err != nil || json.Unmarshal(line, &initReply) != nil || initReply.Error != nil || string(initReply.ID) != "0" {
		t.Fatalf("initialize: got %q, %v (stderr: %s)", line, err, stderr.String())
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatalf("write initialized: %v", err)
	}

	var tally soakTally
	answered := make([]bool, soakStdioCalls+1) // by id; read by the reader only
	slots := make(chan struct{}, soakStdioInFlight)
	allIn := make(chan struct{}) // every call answered once
	readerDone := make(chan error, 1)
	fdsAtCheck := make(chan int, 1) // the child's fds after soakStdioFDCheckAt answers
	var answers atomic.Int64        // unique answers so far, for the stall check
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	start := time.Now()
	go func() { // reader: match each response to its call by id
		unique := 0
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				readerDone <- err
				return
			}
			var m soakMessage
			if err := json.Unmarshal(line, &m); err != nil {
				tally.note(&tally.wrong, 1, "stdout line %q is not JSON-RPC: %v", line, err)
				continue
			}
			if m.Method != "" && len(m.ID) == 0 {
				continue // a notification
			}
			id, err := strconv.Atoi(string(m.ID))
			if err != nil || id < 1 || id > soakStdioCalls {
				tally.note(&tally.wrong, 1, "a response with id %s, want 1..%d: %s", m.ID, soakStdioCalls, line)
				continue
			}
			if answered[id] {
				tally.note(&tally.duplicated, 1, "call %d answered twice: %s", id, line)
				continue
			}
			answered[id] = true
			unique++
			answers.Store(int64(unique))
			<-slots // its place is free
			want := fmt.Sprintf("c%d", id)
			if got, err := m.echoText(); err != nil || got != want {
				tally.note(&tally.wrong, 1, "call %d: got %q (%v), want %q", id, got, err, want)
			} else {
				tally.ok.Add(1)
			}
			if unique == soakStdioFDCheckAt {
				fdsAtCheck <- countFDsOrMinus(pid)
			}
			if unique == soakStdioCalls {
				close(allIn)
			}
		}
	}()
	go func() { // writer: keep soakStdioInFlight calls outstanding
		w := bufio.NewWriter(stdin)
		for id := 1; id <= soakStdioCalls; id++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"c%d"}}}`+"\n", id, id)
			// Flush when no more room: the outstanding calls are all on
			// the wire before we wait for an answer.
			if len(slots) == cap(slots) || id == soakStdioCalls {
				if err := w.Flush(); err != nil {
					tally.note(&tally.failed, 1, "write call %d: %v", id, err)
					return
				}
			}
		}
		if err := w.Flush(); err != nil {
			tally.note(&tally.failed, 1, "flush: %v", err)
		}
	}()

	// Wait for every answer, or until none has come for soakCallTimeout.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	progress, lastProgress := int64(0), time.Now()
wait:
	for {
		select {
		case <-allIn:
			break wait
		case err := <-readerDone:
			t.Errorf("stdout ended early: %v (stderr: %s)", err, stderr.String())
			readerDone <- err
			break wait
		case <-tick.C:
			if n := answers.Load(); n != progress {
				progress, lastProgress = n, time.Now()
			} else if time.Since(lastProgress) > soakCallTimeout {
				t.Errorf("no answer for %s with %d of %d calls answered: giving up", soakCallTimeout, n, soakStdioCalls)
				break wait
			}
		}
	}
	elapsed := time.Since(start)
	fdsEnd := countFDsOrMinus(pid)
	cancel()
	endChild()
	<-readerDone // stdout closed: the reader is done with answered
	for id := 1; id <= soakStdioCalls; id++ {
		if !answered[id] {
			tally.note(&tally.lost, 1, "call %d never answered", id)
		}
	}
	tally.check(t, soakStdioCalls)
	select {
	case fds := <-fdsAtCheck:
		if fdsEnd < 0 || fds < 0 || fdsEnd > fds+soakTolerance {
			t.Errorf("child fds: got %d at the end, want at most %d (%d after %d calls)", fdsEnd, fds+soakTolerance, fds, soakStdioFDCheckAt)
		}
	default:
		t.Errorf("child fds: never counted (fewer than %d calls answered)", soakStdioFDCheckAt)
	}
	soakSummary(t, "stdio", soakStdioCalls, elapsed)
	checkGivenBack(t, before)
}

// countFDsOrMinus counts a child's fds, or returns -1 if it cannot.
func countFDsOrMinus(pid string) int {
	entries, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}
