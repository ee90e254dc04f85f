package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools/builtin"
)

// maxArgumentsBytes caps the arguments call reads from stdin or a file: the
// largest message a server accepts by default, since a client could send
// no more.
const maxArgumentsBytes = server.DefaultMaxMessageBytes

const callUsage = `Usage: mcp-tools call NAME [ARGUMENTS] [flags]

Run one tool locally, through the same validation, approval and error path as
a client's tools/call, and print its result. ARGUMENTS is a JSON object, - to
read it from stdin, or @FILE to read it from a file (large arguments do not fit
on a command line); without it the arguments are {}. Flags may come before or
after NAME. The exit status is 1 when the result is an error.

A tool gated by approval (file_write, --require-approval) is put to you on the
terminal (y/N) when stdin is one; otherwise it is refused unless
--approval-fallback allow or --no-approval NAME says otherwise. On a terminal,
a long call's progress is shown on stderr. With --task the call runs as a task
(for a tool declared with task: optional or required): its status is shown on
stderr until it ends, and Ctrl-C cancels it.

Examples:
  mcp-tools call calculator '{"input": "2 ** 10"}'
  echo '{"input": "weekday of 2024-07-04"}' | mcp-tools call datetime -
  mcp-tools call json_query @query.json --json
  mcp-tools call file_read '{"path": "notes.txt"}' --root ./data
  mcp-tools call --task --config tools.yaml train '{"epochs": 3}'
`

// call runs the call command; failed is true when the tool's result is an
// error.
func call(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (failed bool, err error) {
	var c setup
	var asJSON, asTask bool
	fs := newFlagSet("call", callUsage)
	c.register(fs, false)
	fs.BoolVar(&asJSON, "json", false, "print the whole CallToolResult as JSON")
	fs.BoolVar(&asTask, "task", false, "run the call as a task (the tool must allow it: task: optional or required) and show its progress until it ends")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return false, err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return false, usagef("want a tool name and, optionally, its arguments (JSON, - for stdin or @FILE); got %d arguments", len(pos))
	}
	name := pos[0]
	rawArgs := json.RawMessage("{}")
	fromStdin := false
	if len(pos) == 2 {
		fromStdin = pos[1] == "-"
		if rawArgs, err = readArguments(pos[1], stdin); err != nil {
			return false, err
		}
	}
	// The result is printed; a log line at WARN would say it twice.
	srv, _, err := c.server(fs, stderr, "error")
	if err != nil {
		return false, err
	}
	if err := served(srv, name, c.skipped); err != nil {
		return false, err
	}
	var opt server.CallOptions
	opt.ClientName = "mcp-tools call"
	// A person can answer only on a terminal that is not busy carrying the
	// arguments.
	switch f, ok := stdin.(*os.File); {
	case ok && !fromStdin && term.IsTerminal(int(f.Fd())):
		in := bufio.NewReader(stdin)
		opt.Ask = func(_ context.Context, q server.Question) (server.Answer, error) {
			return server.Answer{Accept: confirm(in, stderr, q.Message)}, nil
		}
	case c.approvalFallback == "deny":
		// Say why no one was asked in terms of this command, rather than
		// blame a client's missing elicitation. Another fallback needs
		// the client not to elicit, so that it applies.
		opt.Ask = func(context.Context, server.Question) (server.Answer, error) {
			return server.Answer{}, &notAskedError{tool: name}
		}
	}
	opt.Task = asTask
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p := &progressLine{out: stderr}
		opt.Progress = p.notify
		defer p.done()
	} else if asTask {
		// Off a terminal, each new status of the task on its own line.
		opt.Progress = func(_, _ float64, message string) { fmt.Fprintf(stderr, "task: %s\n", message) }
	}
	res, err := srv.Call(ctx, name, rawArgs, opt)
	if na := (*notAskedError)(nil); errors.As(err, &na) {
		fmt.Fprintf(stderr, "mcp-tools call: %v\n", na)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if asJSON {
		var b bytes.Buffer
		if err := json.Indent(&b, res.JSON, "", "  "); err != nil {
			return false, err
		}
		fmt.Fprintf(stdout, "%s\n", b.Bytes())
		return res.IsError, nil
	}
	fmt.Fprintln(stdout, res.Text)
	return res.IsError, nil
}

// readArguments reads a call's arguments: JSON itself, "-" for stdin, or
// "@FILE". They must be valid JSON and at most maxArgumentsBytes.
func readArguments(arg string, stdin io.Reader) (json.RawMessage, error) {
	var b []byte
	var from string
	switch {
	case arg == "-":
		from = "stdin"
		var err error
		if b, err = io.ReadAll(io.LimitReader(stdin, maxArgumentsBytes+1)); err != nil {
			return nil, fmt.Errorf("read arguments from stdin: %w", err)
		}
	case strings.HasPrefix(arg, "@"):
		from = arg[1:]
		f, err := os.Open(from)
		if err != nil {
			return nil, usagef("arguments: %v", err)
		}
		defer f.Close()
		if b, err = io.ReadAll(io.LimitReader(f, maxArgumentsBytes+1)); err != nil {
			return nil, fmt.Errorf("read arguments from %s: %w", from, err)
		}
	default:
		from, b = "the command line", []byte(arg)
	}
	if len(b) > maxArgumentsBytes {
		return nil, usagef("arguments from %s are larger than %d bytes", from, maxArgumentsBytes)
	}
	if !json.Valid(b) {
		return nil, usagef("arguments from %s are not valid JSON: %s", from, clip(string(b), 100))
	}
	return json.RawMessage(b), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// served checks that name is served, and when it is not, says why: a
// default built-in left off names the flag that turns it on.
func served(srv *server.Server, name string, skipped map[string]string) error {
	var names []string
	for _, d := range srv.Tools() {
		if d.Name == name {
			return nil
		}
		names = append(names, d.Name)
	}
	if why, ok := skipped[name]; ok {
		return badConfig(fmt.Errorf("tool %q is off: %s", name, why))
	}
	if slices.Contains(builtin.All(), name) {
		return badConfig(fmt.Errorf("tool %q is off: it is a built-in that is not served by default; pass --builtins %s (or list it under builtins: in the config file)", name, name))
	}
	return badConfig(fmt.Errorf("no tool %q: the tools served are %s", name, strings.Join(names, ", ")))
}

// notAskedError is a gated call refused because no one could be asked.
type notAskedError struct{ tool string }

func (e *notAskedError) Error() string {
	return fmt.Sprintf("tool %q requires approval and stdin is not a terminal, so no one can be asked; the tool did not run. "+
		"Run it on a terminal to answer y/N, or pass --no-approval %s or --approval-fallback allow", e.tool, e.tool)
}

// confirm prints question with a [y/N] prompt and reports whether the
// answer read from in is y or yes (any case). Anything else, an empty line
// or the end of input is no.
func confirm(in *bufio.Reader, out io.Writer, question string) bool {
	fmt.Fprintf(out, "%s [y/N] ", question)
	line, err := in.ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(out)
		return false
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

// progressLine shows the latest progress of a call on one terminal line of
// stderr, rewritten in place, and clears it when the call ends.
type progressLine struct {
	mu    sync.Mutex
	out   io.Writer
	shown bool
}

func (p *progressLine) notify(progress, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "\r\033[K%s", progressText(progress, total, message))
	p.shown = true
}

func (p *progressLine) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.out, "\r\033[K")
	}
}

// progressText formats one progress notification: "message (3/10)".
func progressText(progress, total float64, message string) string {
	var b strings.Builder
	if message != "" {
		b.WriteString(clip(message, 100) + " ")
	}
	if total > 0 {
		fmt.Fprintf(&b, "(%v/%v)", progress, total)
	} else {
		fmt.Fprintf(&b, "(%v)", progress)
	}
	return b.String()
}
