// Package tools is the contract of mcp-tools: what a tool is, what a call
// returns, how failures are told apart, and the registry that holds a
// server's tools.
//
// It imports no other package of this module and knows nothing of MCP or of
// any SDK: the server package adapts it to the protocol, and typed, approval
// and the tools/... packages build on it.
package tools

import (
	"context"
	"encoding/json"
	"time"
)

// Tool is something a model can call.
//
// Info is called once, when the tool is registered; the descriptor it returns
// must not change afterwards.
//
// Call runs the tool with arguments that have already been validated against
// Info().InputSchema: the server (or whatever else serves the registry)
// validates before calling, so Call never sees arguments that break the
// schema. args is a JSON object; it is never nil. Call may be called
// concurrently from many goroutines. It must honour ctx: when ctx is done
// (the call timed out or the client cancelled it) the tool stops its work and
// returns.
//
// A non-nil error means the call failed, and is the only way to fail.
// Return an *Error (see InvalidArgs and Failed) to choose the kind of
// failure and a code; any other error is an execution failure whose message
// is err.Error(). A panic inside Call is
// recovered by the server, logged, and reported as an internal error; it
// never takes the server down. A panic on a goroutine the tool started is
// out of the server's reach and ends the process: a tool recovers its own
// goroutines' panics. runtime.Goexit (t.FailNow in a test) is no way to
// fail either: it is logged, and its goroutine ends; the stdio fast path
// answers the call with an internal error, other transports may leave the
// call unanswered.
type Tool interface {
	Info() Info
	Call(ctx context.Context, args json.RawMessage) (Result, error)
}

// Info describes a tool as it is published to clients.
type Info struct {
	// Name is 1 to 64 characters of [A-Za-z0-9_-], unique in a registry.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// InputSchema is the JSON Schema (an object schema) of the arguments.
	// New replaces an empty one with EmptySchema.
	InputSchema json.RawMessage
	// OutputSchema, when set, is the JSON Schema of Result.Structured.
	OutputSchema json.RawMessage
	// Annotations are behaviour hints for clients. Every hint is published
	// explicitly, so the zero value says: not read-only, not destructive,
	// not idempotent, closed world.
	Annotations Annotations
	// Secret lists top-level argument names whose values are redacted in
	// logs and approval summaries.
	Secret []string
	// Plain marks a tool whose whole input is one string, "input" (see
	// NewPlain, which sets it). Logs show that string, and a pipeline
	// hands the previous step's text to it as is.
	Plain bool
	// MaxInput is, for a plain tool, the most characters "input" may
	// have: NewPlain publishes it as the schema's maxLength and refuses a
	// longer input before the tool runs. Zero: no bound.
	MaxInput int

	// Governance: what a server does around the tool's calls. It is read
	// once, when a server is built; an operator's settings (approval
	// policy, per-tool limits) may add to it or override it.

	// Gated marks a tool a person must approve before each call (see
	// approval.Gate, which sets it).
	Gated bool
	// Limits bound each call of the tool. The server applies them (it is
	// the one layer that owns limits); a tool used without a server has
	// only its own context to honour.
	Limits Limits
	// Scopes are the OAuth scopes a client's token needs to see and call
	// the tool, on a server that authenticates with OAuth. Nil: the
	// server's default scopes. A composite needs its steps' scopes too.
	Scopes []string
	// Task says whether a call may run as a task: the client gets a
	// handle at once and polls it for the outcome (for calls that take
	// minutes). Zero: TaskNever.
	Task TaskMode
}

// TaskMode says whether a tool's calls may run as tasks.
type TaskMode string

// The task modes.
const (
	// TaskNever: every call is answered when it ends.
	TaskNever TaskMode = ""
	// TaskOptional: a client that supports tasks may run a call as one.
	TaskOptional TaskMode = "optional"
	// TaskRequired: every call runs as a task; a client that cannot run
	// tasks cannot call the tool.
	TaskRequired TaskMode = "required"
)

// Limits bound the calls of one tool. The zero value adds no limit and keeps
// the server's default timeout.
type Limits struct {
	// Timeout bounds one call (a person's approval time excluded); negative
	// means none. Zero: the server's default.
	Timeout time.Duration
	// MaxConcurrency bounds how many calls of this tool run at once, across
	// sessions; more wait their turn. Zero: no bound.
	MaxConcurrency int
	// Rate is the sustained calls per second allowed, with bursts of Burst
	// (at least 1); calls over it wait. Zero: no rate limit.
	Rate  float64
	Burst int
}

// Caller runs a tool of the registry by name, as a client's call of it
// would run: on a server, through that tool's own governance (validation,
// approval, limits, timeout), with the session and cancellation of ctx.
type Caller func(ctx context.Context, name string, args json.RawMessage) (Result, error)

// Composite is a tool made of other tools of its registry (a pipeline).
//
// Steps names the tools it calls; a registry refuses a composite whose steps
// it does not hold. CallWith runs the tool and calls each step through call,
// which the server hands it for each call: a composite is never bound to a
// server, so one composite (and one registry) can back any number of
// servers. Call, from Tool, runs the steps directly, with no governance.
type Composite interface {
	Tool
	Steps() []string
	CallWith(ctx context.Context, args json.RawMessage, call Caller) (Result, error)
}

// Resumable is a Composite that can continue a call from one of its steps:
// when a step suspends (it waits for the client's answer), the composite
// returns a *StepSuspended saying where, and the caller may later resume
// there, with the same arguments for that step, so that the steps before it
// do not run again.
type Resumable interface {
	Composite
	Resume(ctx context.Context, step int, args json.RawMessage, call Caller) (Result, error)
}

// StepSuspended is the error a Resumable returns when its step Step (from
// 0), called with Args, suspended with Err (a Suspended).
type StepSuspended struct {
	Step int
	Args json.RawMessage
	Err  error
}

func (e *StepSuspended) Error() string { return "step waits for the client: " + e.Err.Error() }
func (e *StepSuspended) Unwrap() error { return e.Err }

// Suspended marks a StepSuspended as a suspension, not a failure.
func (*StepSuspended) Suspended() {}

// WithInfo returns t published with info instead of its own descriptor,
// calls unchanged; a Composite stays one.
func WithInfo(t Tool, info Info) Tool {
	if c, ok := t.(Composite); ok {
		return wrapComposite(&composite{info: info, c: c})
	}
	return &funcTool{info: info, fn: t.Call}
}

// wrapComposite returns c, Resumable when what it wraps is.
func wrapComposite(c *composite) Tool {
	if _, ok := c.c.(Resumable); ok {
		return &resumableComposite{c}
	}
	return c
}

type resumableComposite struct{ *composite }

func (c *resumableComposite) Resume(ctx context.Context, step int, args json.RawMessage, call Caller) (Result, error) {
	r := c.c.(Resumable)
	inner := func(ctx context.Context, _ json.RawMessage) (Result, error) { return r.Resume(ctx, step, args, call) }
	return Chain(c.info, inner, c.mws...)(ctx, args)
}

type composite struct {
	info Info
	c    Composite
	mws  []Middleware
}

func (c *composite) Info() Info      { return c.info }
func (c *composite) Steps() []string { return c.c.Steps() }

func (c *composite) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	return Chain(c.info, c.c.Call, c.mws...)(ctx, args)
}

func (c *composite) CallWith(ctx context.Context, args json.RawMessage, call Caller) (Result, error) {
	inner := func(ctx context.Context, args json.RawMessage) (Result, error) { return c.c.CallWith(ctx, args, call) }
	return Chain(c.info, inner, c.mws...)(ctx, args)
}

// Annotations are the MCP tool annotations.
type Annotations struct {
	Title       string
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// emptySchema is the input schema of a tool that takes no arguments.
const emptySchema = `{"type":"object","properties":{}}`

// EmptySchema returns the input schema of a tool that takes no arguments
// (a new copy each time: no caller can change another's).
func EmptySchema() json.RawMessage { return json.RawMessage(emptySchema) }

// Func adapts a function to the Call half of a Tool.
type Func func(ctx context.Context, args json.RawMessage) (Result, error)

// New returns a Tool with the given descriptor whose calls run fn. An empty
// info.InputSchema is replaced by EmptySchema.
func New(info Info, fn Func) Tool {
	if len(info.InputSchema) == 0 {
		info.InputSchema = EmptySchema()
	}
	return &funcTool{info: info, fn: fn}
}

type funcTool struct {
	info Info
	fn   Func
}

func (t *funcTool) Info() Info { return t.info }

func (t *funcTool) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	return t.fn(ctx, args)
}
