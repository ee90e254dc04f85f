package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/internal/proc"
	"github.com/mcp-tools/mcp-tools/tools"
)

// Defaults for CommandConfig's zero values.
const (
	DefaultMaxStdout = 1 << 20
	DefaultMaxStderr = 64 << 10
	DefaultKillGrace = 2 * time.Second
	// stderrInMessage is how much of stderr a failure message quotes.
	stderrInMessage = 4 << 10
)

// DefaultInherit returns the variables a subprocess inherits from the
// server when its CommandConfig.Inherit is nil: PATH, HOME, USER, LOGNAME,
// LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR and SHELL. Every other variable of the
// server stays out of the child. The slice is the caller's: changing it
// changes no tool.
func DefaultInherit() []string {
	return []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SHELL"}
}

// CommandConfig declares a subprocess tool.
type CommandConfig struct {
	Common `yaml:",inline"`
	// Command is the program and its arguments. It is run directly, never
	// through a shell. A relative program path is relative to Dir. An
	// element may name environment variables as ${NAME}: they are read
	// once, when the tool is made, and an unset one is an error. Logs and
	// error messages show the command as written here, references
	// unexpanded, so a secret passed this way stays out of them.
	Command []string `yaml:"command" json:"command"`
	// Dir is the working directory. Empty: the server's.
	Dir string `yaml:"dir" json:"dir,omitempty"`
	// Inherit names the variables the program inherits from the server's
	// environment (those that are set); every other one stays out. The
	// tool's Env is added on top. Nil: DefaultInherit(); empty, not nil:
	// none. It is read once, by NewCommand.
	Inherit []string `yaml:"inherit_env" json:"inherit_env,omitempty"`
	// Env holds variables set for the program, on top of the inherited
	// ones (see Inherit).
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// MaxStdout caps the program's output. Zero: DefaultMaxStdout (1 MiB).
	MaxStdout int64 `yaml:"max_stdout" json:"max_stdout,omitempty"`
	// MaxStderr caps its error output, progress lines included: a
	// program that writes more is ended and the call fails. Zero:
	// DefaultMaxStderr (64 KiB).
	MaxStderr int64 `yaml:"max_stderr" json:"max_stderr,omitempty"`
	// KillGrace is how long the process group has between SIGTERM and
	// SIGKILL when a call times out or is cancelled. Zero:
	// DefaultKillGrace.
	KillGrace time.Duration `yaml:"kill_grace" json:"kill_grace,omitempty"`
	// LookupEnv reads ${NAME} references in Command. Nil: os.LookupEnv.
	LookupEnv func(string) (string, bool) `yaml:"-" json:"-"`
	// Observer is told the exit code of every process. Nil: nobody.
	Observer Observer `yaml:"-" json:"-"`
}

// Command is a subprocess tool. The protocol, exactly:
//
//   - stdin gets {"input": "<the input string>"} and is closed; with an
//     input schema, {"input": "<the arguments as JSON text>", "arguments": {...}}.
//     Either is one line, ended by a newline.
//     A program that never reads stdin still works.
//   - success: {"output": "text", "success": true} on stdout and exit 0; an
//     optional "structured": {...} becomes the structured result.
//   - logical failure: {"error": "message", "success": false}.
//   - stdout holds that one JSON object and nothing more (whitespace
//     aside): a second value, or text after it, is an invalid response.
//   - a non-zero exit is a failure whose message is stderr (trimmed, at
//     most 4 KiB).
//   - stderr lines that are JSON objects with a "progress" number, like
//     {"progress": 0.4, "total": 1, "message": "..."}, are progress reports,
//     not errors. They count against MaxStderr like any stderr, and are
//     passed on at most once per ProgressInterval, the last one always.
//
// A call that runs out of time, or is cancelled, ends the whole process
// group (grandchildren included): SIGTERM, then SIGKILL after KillGrace.
// On Linux the program also gets SIGKILL if the server dies, even by
// SIGKILL (see proc.Start).
//
// When the call carries a trace context (W3C Trace Context), the program
// gets it in TRACEPARENT (and TRACESTATE, when there is one), which
// replace variables of those names from Env; when the call is traced, the
// run is a span of its own and that is the span the program sees.
type Command struct {
	cfg  CommandConfig
	info tools.Info
	argv []string // Command with ${NAME} references expanded
	env  []string // the child's environment, built once
}

var _ tools.Tool = (*Command)(nil)

// ExitError is a program's non-zero exit.
type ExitError struct {
	Code   int
	Stderr string
}

// Error says the exit status and what the program wrote to stderr.
func (e *ExitError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return fmt.Sprintf("exit status %d: %s", e.Code, e.Stderr)
}

// NewCommand checks cfg and returns the tool.
func NewCommand(cfg CommandConfig) (*Command, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, fmt.Errorf("remote: tool %q: the command is empty", cfg.Name)
	}
	if cfg.MaxStdout < 0 || cfg.MaxStderr < 0 || cfg.KillGrace < 0 {
		return nil, fmt.Errorf("remote: tool %q: limits must not be negative", cfg.Name)
	}
	if cfg.MaxStdout == 0 {
		cfg.MaxStdout = DefaultMaxStdout
	}
	if cfg.MaxStderr == 0 {
		cfg.MaxStderr = DefaultMaxStderr
	}
	if cfg.KillGrace == 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	lookup := cfg.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	argv := make([]string, len(cfg.Command))
	for i, a := range cfg.Command {
		v, missing := expand(a, lookup)
		if len(missing) > 0 {
			return nil, fmt.Errorf("remote: tool %q: command argument %d needs environment variable %s, which is not set", cfg.Name, i, strings.Join(missing, ", "))
		}
		argv[i] = v
	}
	return &Command{cfg: cfg, info: cfg.info(), argv: argv, env: environ(cfg.Inherit, cfg.Env)}, nil
}

// Info returns the descriptor.
func (c *Command) Info() tools.Info { return c.info }

// environ builds a child's environment: the inherited variables (nil:
// DefaultInherit) from the server's, then the tool's own variables.
func environ(inherit []string, own map[string]string) []string {
	if inherit == nil {
		inherit = DefaultInherit()
	}
	// Never nil: os/exec gives a nil Env the server's whole environment.
	env := make([]string, 0, len(inherit)+len(own))
	for _, k := range inherit {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range own {
		env = append(env, k+"="+v)
	}
	return env
}

// Call runs the program once.
func (c *Command) Call(ctx context.Context, args json.RawMessage) (_ tools.Result, err error) {
	name := c.cfg.Name
	input, arguments, err := c.cfg.input(args)
	if err != nil {
		return tools.Result{}, err
	}
	var span trace.Span
	if trace.SpanFromContext(ctx).IsRecording() {
		ctx, span = startSpan(ctx, "subprocess "+name, trace.SpanKindInternal, keyToolName.String(name),
			keyExecutable.String(filepath.Base(c.cfg.Command[0])))
		defer func() { endSpan(span, err) }()
	}

	req := map[string]any{"input": input}
	if arguments != nil {
		req["arguments"] = arguments
	}
	stdin, _ := json.Marshal(req)
	// One line, newline-ended (Marshal escapes newlines in strings): a
	// program may read it as a line, and in sh read fails on text without
	// its newline.
	stdin = append(stdin, '\n')

	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir = c.cfg.Dir
	cmd.Env = c.env
	if env := traceEnv(ctx); env != nil {
		// Appended last: os/exec keeps the last of duplicate names.
		cmd.Env = append(c.env[:len(c.env):len(c.env)], env...)
	}
	proc.SetGroup(cmd)
	// Kill the group when the call ends early, or when output overflows.
	overflow := make(chan struct{})
	var once sync.Once
	overflowed := func() { once.Do(func() { close(overflow) }) }
	stdout := &capped{max: c.cfg.MaxStdout, onOverflow: overflowed}
	stderr := &stderrWriter{max: c.cfg.MaxStderr, progress: &coalescer{ctx: ctx}, onOverflow: overflowed}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A grandchild that left the group (setsid, a daemon) may hold the
	// pipes open after the program exits: Wait gives up on them after the
	// grace instead of waiting forever.
	cmd.WaitDelay = c.cfg.KillGrace
	inPipe, err := cmd.StdinPipe()
	if err != nil {
		return tools.Result{}, tools.Failed("tool %q: %v", name, err)
	}
	// The argv as configured: ${NAME} references stay unexpanded.
	c.cfg.Logger.DebugContext(ctx, "starting subprocess", "tool", name, "argv", c.cfg.Command, "dir", c.cfg.Dir)
	waited, err := proc.Start(cmd)
	if err != nil {
		inPipe.Close()
		return tools.Result{}, tools.Failed("tool %q: cannot start %q: %v", name, c.cfg.Command[0], unwrapPath(err))
	}
	defer stderr.progress.close()
	pgid := cmd.Process.Pid
	go func() {
		if _, err := inPipe.Write(stdin); err != nil {
			c.cfg.Logger.DebugContext(ctx, "subprocess did not read its input", "tool", name, "err", err)
		}
		inPipe.Close()
	}()

	var waitErr error
	killedFor := ""
	select {
	case waitErr = <-waited:
	case <-ctx.Done():
		killedFor = "ctx"
		waitErr = c.killGroup(pgid, waited)
	case <-overflow:
		killedFor = "overflow"
		waitErr = c.killGroup(pgid, waited)
	}
	// Whatever happened, leave no member of the group behind.
	_ = proc.KillRest(pgid)
	stderr.progress.close() // no report after the program ended
	if ps := cmd.ProcessState; ps != nil {
		if span != nil {
			span.SetAttributes(keyPID.Int(ps.Pid()), keyExitCode.Int(ps.ExitCode()))
		}
		if c.cfg.Observer != nil {
			c.cfg.Observer.Exited(name, ps.ExitCode())
		}
	}

	switch {
	case killedFor == "ctx":
		return tools.Result{}, ended(name, ctx)
	case stdout.over || killedFor == "overflow" && !stderr.over:
		return tools.Result{}, tools.Failed("tool %q: its output exceeds the %s limit (max_stdout); ask for less output", name, size(c.cfg.MaxStdout))
	case stderr.over:
		return tools.Result{}, tools.Failed("tool %q: its error output exceeds the %s limit (max_stderr)", name, size(c.cfg.MaxStderr))
	}
	if errors.Is(waitErr, exec.ErrWaitDelay) {
		// The program exited 0; something it left behind kept a pipe open
		// (killed now with its group, unless it left the group). What it
		// wrote is its answer.
		waitErr = nil
	}
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) {
		ee := &ExitError{Code: exitErr.ExitCode(), Stderr: trimStderr(stderr.text())}
		msg := ee.Stderr
		if msg == "" {
			msg = fmt.Sprintf("tool %q exited with status %d and no error output", name, ee.Code)
			if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				msg = fmt.Sprintf("tool %q was killed by signal %s", name, ws.Signal())
			}
		}
		return tools.Result{}, &tools.Error{Kind: tools.KindExecutionFailed, Code: ee.Code, Message: msg, Err: ee}
	}
	if waitErr != nil {
		return tools.Result{}, tools.Failed("tool %q: %v", name, waitErr)
	}
	return parseResponse(name, stdout.Bytes())
}

// killGroup ends the process group: SIGTERM, then SIGKILL after the grace.
func (c *Command) killGroup(pgid int, waited <-chan error) error {
	_ = proc.TerminateGroup(pgid)
	select {
	case err := <-waited:
		return err
	case <-time.After(c.cfg.KillGrace):
		_ = proc.KillGroup(pgid)
		return <-waited
	}
}

func trimStderr(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > stderrInMessage {
		i := len(s) - stderrInMessage // the end says most about why it failed
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++ // from a whole character
		}
		s = s[i:]
	}
	return s
}

// response is what a program prints.
type response struct {
	Output     *string        `json:"output"`
	Success    *bool          `json:"success"`
	Error      string         `json:"error"`
	Structured map[string]any `json:"structured"`
}

func parseResponse(name string, out []byte) (tools.Result, error) {
	var r response
	dec := json.NewDecoder(bytes.NewReader(out))
	err := dec.Decode(&r)
	if err != nil || r.Success == nil {
		why := "it is not JSON with a \"success\" field"
		var te *json.UnmarshalTypeError
		switch {
		case len(bytes.TrimSpace(out)) == 0:
			why = "it printed nothing"
		case errors.As(err, &te) && te.Field != "":
			why = fmt.Sprintf("its %q is %s, not %s", te.Field, jsonKind(te.Value), goKind(te.Type))
		}
		return tools.Result{}, tools.Failed("invalid response from tool %q: %s: %q", name, why, snippet(out, 200))
	}
	// One answer, nothing after it: of two JSON values (or a value and
	// text) which one is meant cannot be told.
	if rest := bytes.TrimSpace(out[dec.InputOffset():]); len(rest) > 0 {
		return tools.Result{}, tools.Failed("invalid response from tool %q: it printed more after its JSON answer: %q", name, snippet(rest, 200))
	}
	if !*r.Success {
		msg := r.Error
		if msg == "" {
			msg = "the tool reported a failure without a message"
		}
		return tools.Result{}, tools.Failed("%s", msg)
	}
	res := tools.Result{}
	if r.Output != nil {
		res.Text = *r.Output
	}
	if r.Structured != nil {
		res.Structured = r.Structured
	}
	return res, nil
}

// jsonKind names a JSON value kind as json.UnmarshalTypeError.Value says
// it ("number", "number 42", "bool", "object"...).
func jsonKind(v string) string {
	switch {
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "bool":
		return "a boolean"
	case v == "object" || v == "array":
		return "an " + v
	}
	return "a " + v
}

// goKind names the JSON kind a response field wants.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// capped is an io.Writer that keeps at most max bytes and reports overflow.
// It holds its buffer in a field, not embedded: an embedded bytes.Buffer
// would lend it ReadFrom, which io.Copy prefers to Write, and the cap would
// never be checked.
type capped struct {
	buf        bytes.Buffer
	max        int64
	over       bool
	onOverflow func()
}

func (w *capped) Write(p []byte) (int, error) {
	if w.over {
		return len(p), nil
	}
	if int64(w.buf.Len()+len(p)) > w.max {
		w.over = true
		if w.onOverflow != nil {
			w.onOverflow()
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

func (w *capped) Bytes() []byte { return w.buf.Bytes() }

// stderrWriter takes a program's stderr: every byte counts against max;
// progress lines are reported (coalesced) as they come, the rest is kept
// for the error message.
type stderrWriter struct {
	max        int64
	progress   *coalescer
	onOverflow func()

	mu      sync.Mutex
	seen    int64  // bytes written so far, progress lines included
	partial []byte // the current line, not yet ended
	buf     bytes.Buffer
	over    bool
}

// maxLine bounds a line held back while waiting for its end.
const maxLine = 64 << 10

func (r *stderrWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if r.over {
		return n, nil
	}
	r.seen += int64(n)
	if r.seen > r.max {
		r.over = true
		r.onOverflow()
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.partial = append(r.partial, p...)
			if len(r.partial) > maxLine { // no progress line is this long
				r.buf.Write(r.partial)
				r.partial = r.partial[:0]
			}
			break
		}
		line := p[:i+1]
		if len(r.partial) > 0 {
			line = append(r.partial, line...)
			r.partial = r.partial[:0]
		}
		if !r.report(line) {
			r.buf.Write(line)
		}
		p = p[i+1:]
	}
	return n, nil
}

func (r *stderrWriter) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.partial) > 0 && !r.over {
		r.buf.Write(r.partial)
		r.partial = r.partial[:0]
	}
	return r.buf.String()
}

// report passes on a progress line, or says it is not one.
func (r *stderrWriter) report(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' || !bytes.Contains(t, []byte(`"progress"`)) {
		return false
	}
	var p struct {
		Progress *float64 `json:"progress"`
		Total    float64  `json:"total"`
		Message  string   `json:"message"`
	}
	if json.Unmarshal(t, &p) != nil || p.Progress == nil {
		return false
	}
	r.progress.add(progress{*p.Progress, p.Total, p.Message})
	return true
}
