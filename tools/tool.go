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
// A non-nil error means the call failed. Return an *Error (see InvalidArgs
// and Failed) to choose the kind of failure and a code; any other error is an
// execution failure whose message is err.Error(). A panic inside Call is
// recovered by the server, logged, and reported as an internal error; it
// never takes the server down.
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
}

// Annotations are the MCP tool annotations.
type Annotations struct {
	Title       string
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// EmptySchema is the input schema of a tool that takes no arguments.
var EmptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Func adapts a function to the Call half of a Tool.
type Func func(ctx context.Context, args json.RawMessage) (Result, error)

// New returns a Tool with the given descriptor whose calls run fn. An empty
// info.InputSchema is replaced by EmptySchema.
func New(info Info, fn Func) Tool {
	if len(info.InputSchema) == 0 {
		info.InputSchema = EmptySchema
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
