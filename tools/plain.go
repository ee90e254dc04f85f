package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// PlainSchema returns the input schema of every plain tool, one required
// string, "input" (a new copy each time: no caller can change another's).
func PlainSchema() json.RawMessage { return json.RawMessage(plainSchemaText) }

const plainSchemaText = `{"type":"object","properties":{"input":{"type":"string","description":"The input to pass to the tool"}},"required":["input"]}`

// PlainFunc is the body of a plain tool: it receives the "input" string.
type PlainFunc func(ctx context.Context, input string) (Result, error)

// NewPlain returns a tool whose whole input is one string (an expression, a
// command, a payload). It is published with PlainSchema, whatever
// info.InputSchema says (with "maxLength": info.MaxInput when that is set),
// info.Plain is set, and fn receives the value of "input".
//
// The arguments are read as the schema validated them: "input" is matched
// exactly, case included ({"INPUT": ...} is an unknown extra field), and
// arguments that are not a JSON object (null included), repeat a member
// name, or lack a string "input" are an invalid-arguments error; fn does
// not run.
func NewPlain(info Info, fn PlainFunc) Tool {
	info.InputSchema = plainSchema(info.MaxInput)
	info.Plain = true
	maxInput := info.MaxInput
	return New(info, func(ctx context.Context, args json.RawMessage) (Result, error) {
		members, err := objectMembers(args)
		if err != nil {
			return Result{}, InvalidArgs("arguments must be an object with a string field \"input\": %v", err)
		}
		raw, ok := members["input"]
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			return Result{}, InvalidArgs("missing required field \"input\"")
		}
		var input string
		if err := json.Unmarshal(raw, &input); err != nil {
			return Result{}, InvalidArgs("arguments must be an object with a string field \"input\": \"input\" is %s", clipRaw(bytes.TrimSpace(raw), 100))
		}
		if maxInput > 0 && len(input) > maxInput && utf8.RuneCountInString(input) > maxInput {
			return Result{}, InvalidArgs("the input is %d characters long; the limit is %d", utf8.RuneCountInString(input), maxInput)
		}
		return fn(ctx, input)
	})
}

// clipRaw returns at most n bytes of b, marking a cut, so an error never
// carries a megabyte of input back to the model.
func clipRaw(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + fmt.Sprintf("…(%d bytes)", len(b))
}

// plainSchema is PlainSchema, with a maxLength on "input" when max > 0.
func plainSchema(max int) json.RawMessage {
	if max <= 0 {
		return PlainSchema()
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"input":{"type":"string","description":"The input to pass to the tool","maxLength":%d}},"required":["input"]}`, max))
}

// objectMembers returns the top-level members of args, a JSON object, by
// their exact names. Anything but one object (null included), and a name
// given twice, is an error.
func objectMembers(args json.RawMessage) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	switch tok.(type) {
	case json.Delim:
		if tok != json.Delim('{') {
			return nil, errors.New("got an array")
		}
	case nil:
		return nil, errors.New("got null")
	case string:
		return nil, errors.New("got a string")
	case float64:
		return nil, errors.New("got a number")
	case bool:
		return nil, errors.New("got a boolean")
	}
	m := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not a valid JSON object: %w", err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("not a valid JSON object: %w", err)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("duplicate object member name %q", name)
		}
		m[name] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not a valid JSON object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a valid JSON object: data after the object")
	}
	return m, nil
}
