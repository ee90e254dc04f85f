package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/mcp-tools/mcp-tools/internal/proc"
	"github.com/mcp-tools/mcp-tools/internal/testredis"
)

// The fleet test's helpers: real processes (redis-server, nginx, replicas
// of the binary) and a small streamable HTTP client over net/http that
// reads both JSON and SSE responses.

// startupTimeout bounds how long a process of the fleet may take to become
// ready.
const startupTimeout = 30 * time.Second

// requireFleetServers skips the test in -short mode, or when nginx or
// redis-server is not installed (fails it instead when
// MCP_TOOLS_REQUIRE_SERVERS=1), and returns nginx's path.
func requireFleetServers(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the fleet test runs redis-server, nginx and three replicas: skipped in -short mode")
	}
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		// nginx is often in /usr/sbin, which a user's PATH may lack.
		if _, serr := os.Stat("/usr/sbin/nginx"); serr == nil {
			nginx, err = "/usr/sbin/nginx", nil
		}
	}
	var missing []string
	if err != nil {
		missing = append(missing, "nginx")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		missing = append(missing, "redis-server")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("%s not installed: apt-get install redis-server nginx-light", strings.Join(missing, " and "))
		if os.Getenv(testredis.RequireEnv) == "1" {
			t.Fatalf("%s (required by %s=1)", msg, testredis.RequireEnv)
		}
		t.Skip(msg)
	}
	return nginx
}

// process is a child started in its own process group, so that stopping
// it stops whatever it started too.
type process struct {
	cmd    *exec.Cmd
	waited <-chan error
	exit   error // set once waited has delivered
	done   bool
}

// startProcess starts cmd in a process group of its own.
func startProcess(cmd *exec.Cmd) (*process, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	waited, err := proc.Start(cmd)
	if err != nil {
		return nil, err
	}
	return &process{cmd: cmd, waited: waited}, nil
}

// exited reports whether the process has exited, without waiting.
func (p *process) exited() bool {
	if p.done {
		return true
	}
	select {
	case p.exit = <-p.waited:
		p.done = true
	default:
	}
	return p.done
}

// signal sends sig to the process group and waits (bounded) for the
// process to exit; SIGKILL follows when it does not.
func (p *process) signal(sig syscall.Signal) {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case p.exit = <-p.waited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		p.exit = <-p.waited
	}
	p.done = true
	// Whatever else is left of the group (nginx's worker) goes too.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// replica is one `mcp-tools serve --transport http` of the fleet, on a
// fixed port so that it can be restarted in place.
type replica struct {
	name string
	bin  string
	port string
	args []string
	env  []string
	log  string // stderr, appended to across restarts

	mu sync.Mutex
	p  *process
}

// newReplica returns a replica of bin on a free port, not started; it is
// stopped when the test ends.
func newReplica(t *testing.T, name, bin, dir string, args, env []string) *replica {
	r := &replica{name: name, bin: bin, port: freePort(t), args: args, env: env, log: filepath.Join(dir, name+".log")}
	t.Cleanup(func() { r.stop(syscall.SIGKILL) })
	return r
}

// base is the replica's own http://127.0.0.1:PORT.
func (r *replica) base() string { return "http://127.0.0.1:" + r.port }

// url is the replica's own MCP endpoint.
func (r *replica) url() string { return r.base() + "/mcp" }

// start runs the replica and waits until its /readyz answers 200.
func (r *replica) start(ctx context.Context, hc *http.Client) error {
	f, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close() // the child has its own copy
	args := append([]string{"serve", "--transport", "http", "--addr", "127.0.0.1:" + r.port, "--log-format", "json"}, r.args...)
	cmd := exec.Command(r.bin, args...)
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Stdout, cmd.Stderr = f, f
	p, err := startProcess(cmd)
	if err != nil {
		return fmt.Errorf("%s: start: %w", r.name, err)
	}
	r.mu.Lock()
	r.p = p
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	for {
		if code, _ := getStatus(ctx, hc, r.base()+"/readyz"); code == http.StatusOK {
			return nil
		}
		r.mu.Lock()
		gone := p.exited()
		r.mu.Unlock()
		if gone {
			return fmt.Errorf("%s exited before it was ready (%v); its log:\n%s", r.name, p.exit, tail(r.log, 40))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v; its log:\n%s", r.name, startupTimeout, tail(r.log, 40))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends sig to the replica's process group and waits for it.
func (r *replica) stop(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p != nil {
		r.p.signal(sig)
	}
}

// proxy is an nginx in front of the replicas.
type proxy struct {
	dir  string
	port string
	p    *process
}

// url is nginx's MCP endpoint.
func (n *proxy) url() string { return "http://127.0.0.1:" + n.port + "/mcp" }

// nginxConf is what testdata/fleet/nginx.conf.tmpl is rendered with.
type nginxConf struct {
	Dir       string
	Listen    string
	Upstreams []string
	Root      bool
	Keepalive int
}

// startNginx runs nginx (daemon off, everything under a temporary
// directory) in front of upstreams, and waits until it proxies /healthz.
// It is stopped when the test ends.
func startNginx(t *testing.T, bin string, hc *http.Client, upstreams []string, keepalive int) *proxy {
	t.Helper()
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "fleet", "nginx.conf.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	n := &proxy{dir: t.TempDir(), port: freePort(t)}
	var conf bytes.Buffer
	if err := tmpl.Execute(&conf, nginxConf{Dir: n.dir, Listen: "127.0.0.1:" + n.port, Upstreams: upstreams, Root: os.Geteuid() == 0, Keepalive: keepalive}); err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(n.dir, "nginx.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(n.dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(bin, "-p", n.dir, "-c", confPath, "-e", filepath.Join(n.dir, "error.log"), "-g", "daemon off;")
	cmd.Stdout, cmd.Stderr = out, out
	if n.p, err = startProcess(cmd); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	t.Cleanup(func() { n.p.signal(syscall.SIGTERM) })
	ctx, cancel := context.WithTimeout(t.Context(), startupTimeout)
	defer cancel()
	for {
		if code, _ := getStatus(ctx, hc, "http://127.0.0.1:"+n.port+"/healthz"); code == http.StatusOK {
			return n
		}
		if n.p.exited() || ctx.Err() != nil {
			t.Fatalf("nginx not serving (exited: %v, %v); its logs:\n%s\n%s", n.p.done, n.p.exit,
				tail(filepath.Join(n.dir, "stderr.log"), 20), tail(filepath.Join(n.dir, "error.log"), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// getStatus GETs url and returns its status (0 when there is no answer).
func getStatus(ctx context.Context, hc *http.Client, url string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// tail returns the last n lines of a file, for failure messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// callsServed reads mcp_tools_calls_total{tool,outcome} from the /metrics
// at base (0 when the series is not there yet).
func callsServed(ctx context.Context, hc *http.Client, base, tool, outcome string) (float64, error) {
	code, body := getStatus(ctx, hc, base+"/metrics")
	if code != http.StatusOK {
		return 0, fmt.Errorf("GET %s/metrics: %d %.200s", base, code, body)
	}
	want := map[string]string{"tool": tool, "outcome": outcome}
	for line := range strings.Lines(body) {
		m := metricLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || !labelsMatch(m[1], want) {
			continue
		}
		return strconv.ParseFloat(m[2], 64)
	}
	return 0, nil
}

var (
	metricLine = regexp.MustCompile(`^mcp_tools_calls_total\{([^}]*)\} (\S+)$`)
	labelPair  = regexp.MustCompile(`(\w+)="([^"]*)"`)
)

// labelsMatch reports whether a Prometheus label list holds exactly want.
func labelsMatch(labels string, want map[string]string) bool {
	pairs := labelPair.FindAllStringSubmatch(labels, -1)
	if len(pairs) != len(want) {
		return false
	}
	for _, p := range pairs {
		if want[p[1]] != p[2] {
			return false
		}
	}
	return true
}

// rpcMsg is one JSON-RPC message: a request, a notification or a response.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object, and an error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// statusError is an HTTP answer other than the one expected, with the
// JSON-RPC error its body holds, if any.
type statusError struct {
	Status int
	Body   string
	RPC    *rpcError
}

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d: %.300s", e.Status, strings.Join(strings.Fields(e.Body), " "))
}

// isStatus reports whether err is a *statusError with that status.
func isStatus(err error, status int) bool {
	var se *statusError
	return errors.As(err, &se) && se.Status == status
}

// reply is the answer to one POST: its messages, read one at a time from
// a JSON body (one message) or an SSE stream (as they arrive).
type reply struct {
	resp *http.Response
	sse  *bufio.Reader // nil: a JSON body
	json []byte        // a JSON body not yet returned by next
}

// next returns the reply's next message; io.EOF when there is none left.
func (r *reply) next() (rpcMsg, error) {
	var m rpcMsg
	if r.sse == nil {
		if r.json == nil {
			return m, io.EOF
		}
		b := r.json
		r.json = nil
		if err := json.Unmarshal(b, &m); err != nil {
			return m, fmt.Errorf("JSON body %.300q: %w", b, err)
		}
		return m, nil
	}
	for {
		data, err := readEvent(r.sse)
		if err != nil {
			return m, err
		}
		if data == "" {
			continue // an event with no data: a keepalive
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			return m, fmt.Errorf("SSE data %.300q: %w", data, err)
		}
		return m, nil
	}
}

// readEvent reads one SSE event and returns its data lines joined.
func readEvent(br *bufio.Reader) (string, error) {
	var data []string
	seen := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && seen {
				return strings.Join(data, "\n"), nil
			}
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if seen {
				return strings.Join(data, "\n"), nil
			}
		case strings.HasPrefix(line, ":"): // a comment
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			seen = true
		default: // event:, id:, retry:
			seen = true
		}
	}
}

func (r *reply) close() { r.resp.Body.Close() }

// mcpConn is a streamable HTTP client of one MCP session (or of none, for
// 2026-07-28), over plain net/http so that every header and every message
// is the test's to see. Requests go to url unless a call names another
// endpoint (a replica's own port). It may be used by one goroutine at a
// time.
type mcpConn struct {
	hc      *http.Client
	url     string
	session string // Mcp-Session-Id, once initialized
	version string // Mcp-Protocol-Version, once initialized
	ids     atomic.Int64
}

// legacyVersion is the protocol the session tests speak.
const legacyVersion = "2025-11-25"

// post sends msg to url (c.url when ""), with the session's headers and
// extra, and returns the reply once its headers arrived. A status other
// than 200 or 202 is a *statusError.
func (c *mcpConn) post(ctx context.Context, url string, msg any, extra map[string]string) (*reply, error) {
	if url == "" {
		url = c.url
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		se := &statusError{Status: resp.StatusCode, Body: string(b)}
		var m rpcMsg
		if json.Unmarshal(b, &m) == nil {
			se.RPC = m.Error
		}
		return nil, se
	}
	r := &reply{resp: resp}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.sse = bufio.NewReader(resp.Body)
		return r, nil
	}
	defer resp.Body.Close()
	if r.json, err = io.ReadAll(resp.Body); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(r.json)) == 0 {
		r.json = nil // 202: no message
	}
	return r, nil
}

// request sends one request and waits for its response on the reply,
// skipping notifications; a request from the server is an error (the
// caller expected none). It returns the response's result.
func (c *mcpConn) request(ctx context.Context, url, method string, params any, extra map[string]string) (json.RawMessage, error) {
	id := c.ids.Add(1)
	r, err := c.post(ctx, url, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}, extra)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.await(id)
}

// await reads the reply until the response to request id.
func (r *reply) await(id int64) (json.RawMessage, error) {
	want := strconv.FormatInt(id, 10)
	for {
		m, err := r.next()
		if err != nil {
			return nil, fmt.Errorf("no response to request %s: %w", want, err)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			return nil, fmt.Errorf("unexpected request from the server: %s %s", m.Method, m.Params)
		case m.Method != "": // a notification
		case string(m.ID) != want:
			return nil, fmt.Errorf("response to request %s, want %s", m.ID, want)
		case m.Error != nil:
			return nil, m.Error
		default:
			return m.Result, nil
		}
	}
}

// initialize opens a session of protocol 2025-11-25 with capabilities
// (nil: none) and sends notifications/initialized.
func (c *mcpConn) initialize(ctx context.Context, capabilities map[string]any) error {
	if capabilities == nil {
		capabilities = map[string]any{}
	}
	c.session, c.version = "", ""
	params := map[string]any{"protocolVersion": legacyVersion, "capabilities": capabilities,
		"clientInfo": map[string]any{"name": "fleet-test", "version": "1"}}
	id := c.ids.Add(1)
	r, err := c.post(ctx, "", map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params}, nil)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	defer r.close()
	session := r.resp.Header.Get("Mcp-Session-Id")
	res, err := r.await(id)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &init); err != nil || init.ProtocolVersion != legacyVersion {
		return fmt.Errorf("initialize: result %s, want protocol %s", res, legacyVersion)
	}
	if session == "" {
		return errors.New("initialize: no Mcp-Session-Id header in the response")
	}
	c.session, c.version = session, legacyVersion
	n, err := c.post(ctx, "", map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, nil)
	if err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	n.close()
	if n.resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("notifications/initialized: HTTP %d, want 202", n.resp.StatusCode)
	}
	return nil
}

// toolResult is a tools/call result, of either protocol.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError       bool                       `json:"isError"`
	Meta          map[string]any             `json:"_meta"`
	ResultType    string                     `json:"resultType"`
	RequestState  string                     `json:"requestState"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
}

// text is the result's text content.
func (r toolResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// kind is the error kind the server put in the result's _meta.
func (r toolResult) kind() string {
	k, _ := r.Meta["mcp-tools/errorKind"].(string)
	return k
}

// call calls a tool in the session at url (c.url when "").
func (c *mcpConn) call(ctx context.Context, url, name string, args any) (toolResult, error) {
	var res toolResult
	raw, err := c.request(ctx, url, "tools/call", map[string]any{"name": name, "arguments": args}, nil)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("tools/call result %.300s: %w", raw, err)
	}
	return res, nil
}

// calculate calls calculator with a*b+c at url and checks the answer.
func (c *mcpConn) calculate(ctx context.Context, url string, a, b, d int) error {
	res, err := c.call(ctx, url, "calculator", map[string]any{"input": fmt.Sprintf("%d*%d+%d", a, b, d)})
	if err != nil {
		return err
	}
	if want := strconv.Itoa(a*b + d); res.IsError || res.text() != want {
		return fmt.Errorf("calculator %d*%d+%d: got %q (isError %v, kind %q), want %q", a, b, d, res.text(), res.IsError, res.kind(), want)
	}
	return nil
}

// modernVersion is the sessionless protocol.
const modernVersion = "2026-07-28"

// modernCall sends one 2026-07-28 tools/call (no session; the client's
// capabilities, elicitation, travel in _meta) to url.
func modernCall(ctx context.Context, hc *http.Client, url string, params map[string]any) (toolResult, error) {
	var res toolResult
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "fleet-test-modern", "version": "1"},
	}
	c := &mcpConn{hc: hc, url: url}
	raw, err := c.request(ctx, "", "tools/call", params, map[string]string{
		"Mcp-Protocol-Version": modernVersion,
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             fmt.Sprint(params["name"]),
	})
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("tools/call result %.300s: %w", raw, err)
	}
	return res, nil
}

// elicitation is an elicitation/create request met on a call's stream.
type elicitation struct {
	ID     json.RawMessage
	Params struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"requestedSchema"`
	}
}

// startGatedCall POSTs a tools/call of a gated tool to url and reads its
// SSE stream until the approval question arrives. The caller answers it
// (answer) and then reads the call's result from the reply (finish).
func (c *mcpConn) startGatedCall(ctx context.Context, url, name string, args any) (*reply, int64, elicitation, error) {
	var q elicitation
	id := c.ids.Add(1)
	r, err := c.post(ctx, url, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}}, nil)
	if err != nil {
		return nil, 0, q, err
	}
	if r.sse == nil {
		r.close()
		return nil, 0, q, fmt.Errorf("gated call answered %s with %q, want an SSE stream", r.resp.Header.Get("Content-Type"), r.json)
	}
	for {
		m, err := r.next()
		if err != nil {
			r.close()
			return nil, 0, q, fmt.Errorf("no question on the stream: %w", err)
		}
		if m.Method == "" && m.ID != nil {
			r.close()
			return nil, 0, q, fmt.Errorf("the call ended without a question: %s %v", m.Result, m.Error)
		}
		if m.Method != "elicitation/create" {
			continue
		}
		q.ID = m.ID
		if err := json.Unmarshal(m.Params, &q.Params); err != nil {
			r.close()
			return nil, 0, q, fmt.Errorf("elicitation params %s: %w", m.Params, err)
		}
		return r, id, q, nil
	}
}

// answer POSTs the JSON-RPC response to a server request to url in the
// session and returns the HTTP status (202 when it was taken).
func (c *mcpConn) answer(ctx context.Context, url string, id json.RawMessage, result any) (int, error) {
	r, err := c.post(ctx, url, map[string]any{"jsonrpc": "2.0", "id": id, "result": result}, nil)
	var se *statusError
	if errors.As(err, &se) {
		return se.Status, nil
	}
	if err != nil {
		return 0, err
	}
	r.close()
	return r.resp.StatusCode, nil
}

// finish reads the gated call's result from its stream.
func finish(r *reply, id int64) (toolResult, error) {
	defer r.close()
	var res toolResult
	raw, err := r.await(id)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("tools/call result %.300s: %w", raw, err)
	}
	return res, nil
}

// end sends DELETE for the session to url (c.url when "") and returns the
// HTTP status.
func (c *mcpConn) end(ctx context.Context, url string) (int, error) {
	if url == "" {
		url = c.url
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", c.version)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// launch starts three replicas of the package's race-enabled service build with
// args and env, logging into dir, and nginx in front of them (round robin,
// keeping idle connections to the replicas, as a production config does).
// When the test ends it fails on a replica's data race report, and prints
// the logs if the test failed.
func (f *fleet) launch(t *testing.T, nginxBin, dir string, args, env []string) {
	t.Helper()
	bin := serviceBinary(t)
	for i := range 3 {
		f.replicas = append(f.replicas, newReplica(t, fmt.Sprintf("replica%d", i), bin, dir, args, env))
	}
	errs := make(chan error, len(f.replicas))
	for _, r := range f.replicas {
		go func() { errs <- r.start(t.Context(), f.hc) }()
	}
	for range f.replicas {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var upstreams []string
	for _, r := range f.replicas {
		upstreams = append(upstreams, "127.0.0.1:"+r.port)
	}
	f.nginx = startNginx(t, nginxBin, f.hc, upstreams, 32)
	t.Cleanup(func() {
		for _, r := range f.replicas {
			if b, err := os.ReadFile(r.log); err == nil && strings.Contains(string(b), "WARNING: DATA RACE") {
				t.Errorf("%s reported a data race; its log:\n%s", r.name, b)
			}
		}
		if !t.Failed() {
			return
		}
		for _, r := range f.replicas {
			t.Logf("%s's log (last lines):\n%s", r.name, tail(r.log, 60))
		}
		t.Logf("nginx's error log:\n%s", tail(f.nginx.dir+"/error.log", 30))
		t.Logf("nginx's access log:\n%s", tail(f.nginx.dir+"/access.log", 30))
	})
}
