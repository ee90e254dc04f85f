package tools

import (
	"context"
	"encoding/json"
)

// PlainSchema is the input schema of every plain tool: one required string,
// "input".
var PlainSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"The input to pass to the tool"}},"required":["input"]}`)

// PlainFunc is the body of a plain tool: it receives the "input" string.
type PlainFunc func(ctx context.Context, input string) (Result, error)

// NewPlain returns a tool whose whole input is one string (an expression, a
// command, a payload). It is published with PlainSchema, whatever
// info.InputSchema says, and fn receives the value of "input".
func NewPlain(info Info, fn PlainFunc) Tool {
	info.InputSchema = PlainSchema
	return New(info, func(ctx context.Context, args json.RawMessage) (Result, error) {
		var in struct {
			Input *string `json:"input"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return Result{}, InvalidArgs("arguments must be an object with a string field \"input\": %v", err)
		}
		if in.Input == nil {
			return Result{}, InvalidArgs("missing required field \"input\"")
		}
		return fn(ctx, *in.Input)
	})
}
