// Package remote makes tools of things that already exist: a program
// speaking JSON over stdin/stdout (Command), or an HTTP endpoint (HTTP).
// To the client they look like any other tool.
//
// Without an input schema a remote tool is a plain tool: the model sends
// one string, "input". With one, the model sees those parameters, the
// server validates them, and the program or endpoint gets the arguments
// object (see Command and HTTP for the exact shapes).
//
// Every limit is a field with a documented default: time, output size,
// concurrency. A call never holds unbounded memory and never outlives its
// context.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"time"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/internal/lazyre"
	"github.com/mcp-tools/mcp-tools/tools"
)

// Common holds what every remote tool declares. CommandConfig and
// HTTPConfig embed it inline, so in a config file its fields sit next to
// theirs. Its schema fields hold JSON: a YAML loader reads the file as
// plain data and decodes that as JSON (as cmd/mcp-tools's loader does).
type Common struct {
	// Name is the tool's name (see tools.ValidateName). Required.
	Name string `yaml:"name" json:"name"`
	// Description tells the model what the tool does. Required.
	Description string `yaml:"description" json:"description"`
	// InputSchema, when set, is the JSON Schema (an object) of the
	// arguments. Empty: a plain tool with one string, "input".
	InputSchema json.RawMessage `yaml:"input_schema" json:"input_schema,omitempty"`
	// OutputSchema, when set, describes the structured output.
	// Empty: no output schema, and no structured result for HTTP tools.
	OutputSchema json.RawMessage `yaml:"output_schema" json:"output_schema,omitempty"`
	// Annotations are the behaviour hints published with the tool. Zero:
	// every hint false. A config loader maps them itself (tools.Annotations
	// carries no file tags).
	Annotations tools.Annotations `yaml:"-" json:"-"`
	// MaxConcurrency bounds the calls of this tool running at once; more
	// wait their turn. Zero: no bound.
	MaxConcurrency int `yaml:"max_concurrency" json:"max_concurrency,omitempty"`
	// Timeout bounds one call. Zero: the server's default.
	//
	// Both are published in the tool's descriptor (tools.Info.Limits) and
	// applied by the server that serves the tool, the one layer that owns
	// limits; the tool itself honours its context: when it ends, the
	// process group is killed or the request aborted.
	Timeout time.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// Task says whether a call may run as a task, which a client polls
	// instead of waiting (tools.Info.Task). Zero: never.
	Task tools.TaskMode `yaml:"task" json:"task,omitempty"`
	// Logger gets DEBUG lines about each call. Nil: discarded.
	Logger *slog.Logger `yaml:"-" json:"-"`
}

func (c *Common) check() error {
	if err := tools.ValidateName(c.Name); err != nil {
		return err
	}
	if c.Description == "" {
		return fmt.Errorf("tool %q: a description is required", c.Name)
	}
	if c.MaxConcurrency < 0 {
		return fmt.Errorf("tool %q: max_concurrency must not be negative", c.Name)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("tool %q: timeout must not be negative", c.Name)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func (c *Common) info() tools.Info {
	in := c.InputSchema
	if len(in) == 0 {
		in = tools.PlainSchema()
	}
	return tools.Info{Name: c.Name, Description: c.Description, InputSchema: in, OutputSchema: c.OutputSchema, Annotations: c.Annotations, Plain: !c.typed(),
		Limits: tools.Limits{Timeout: c.Timeout, MaxConcurrency: c.MaxConcurrency}, Task: c.Task}
}

// typed reports whether the tool declares its own input schema.
func (c *Common) typed() bool { return len(c.InputSchema) > 0 }

// input returns what a call hands over: the "input" string of a plain
// tool, or, for a typed one, the arguments as JSON text plus the object.
func (c *Common) input(args json.RawMessage) (string, json.RawMessage, error) {
	if c.typed() {
		return string(args), args, nil
	}
	var in struct {
		Input *string `json:"input"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.Input == nil {
		return "", nil, tools.InvalidArgs("send {\"input\": \"...\"}")
	}
	return *in.Input, nil, nil
}

// ended explains why ctx ended: its deadline passed (a server's timeout,
// which names its limit itself), or the caller cancelled it.
func ended(name string, ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &tools.Error{Kind: tools.KindTimeout, Message: fmt.Sprintf("tool %q ran out of time", name), Err: ctx.Err()}
	}
	return cancelled(name, ctx)
}

func cancelled(name string, ctx context.Context) error {
	return &tools.Error{Kind: tools.KindCancelled, Message: fmt.Sprintf("tool %q was cancelled", name), Err: context.Cause(ctx)}
}

// size writes a byte count for a message: "1 MiB", "64 KiB", "1000 bytes".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d-byte", n)
}

// snippet shortens b for an error message.
func snippet(b []byte, n int) string {
	s := string(b)
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n-- // to a whole character
		}
		return s[:n] + "…"
	}
	return s
}

var envRef = lazyre.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces the ${NAME} references in s with lookup's values and
// lists the names lookup does not know.
func expand(s string, lookup func(string) (string, bool)) (_ string, missing []string) {
	s = envRef().ReplaceAllStringFunc(s, func(ref string) string {
		val, ok := lookup(ref[2 : len(ref)-1])
		if !ok {
			missing = append(missing, ref[2:len(ref)-1])
		}
		return val
	})
	return s, missing
}

// unwrapPath drops the path from a start error: the path is the expanded
// program, which may hold a secret; the message names the configured one.
func unwrapPath(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
