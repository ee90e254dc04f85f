// Package toolstest checks that a tool keeps the tools.Tool contract, in the
// spirit of testing/slogtest: one call, Check, runs every check against any
// tool and reports each broken rule as a test error.
package toolstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// CancelWait is how long Check waits for a call made with an already
// cancelled context to return before it reports the tool as hanging.
const CancelWait = 5 * time.Second

// Check runs every conformance check against tool and reports each failure
// with t.Errorf. It checks that:
//
//   - the name is valid (tools.ValidateName) and the description is not empty;
//   - the input schema compiles (tools/schema) and is an object schema;
//   - the annotations do not contradict each other (read-only and
//     destructive at once);
//   - arguments missing a required field, and arguments with a field of the
//     wrong type, are refused by the validator with an invalid-arguments
//     error naming the field, so the tool never sees them;
//   - arguments that are not a JSON object (an array, a string) are
//     refused by the validator with an invalid-arguments error (null is
//     not checked here: tools/schema counts it as {});
//   - a call that bypasses the validator with wrong-typed arguments, or
//     with arguments that are not an object, does not panic (it is made
//     with a cancelled context, so it should not act);
//   - a call with an already cancelled context returns within CancelWait.
//
// Check calls the tool, so use it on instances whose calls are harmless in a
// test (a temporary root, a loopback server).
func Check(t *testing.T, tool tools.Tool) {
	t.Helper()
	for _, f := range run(tool, CancelWait) {
		t.Errorf("%s", f)
	}
}

// run returns one message per broken rule.
func run(tool tools.Tool, wait time.Duration) []string {
	info := tool.Info()
	var out []string
	fail := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("tool %q: ", info.Name)+fmt.Sprintf(format, args...))
	}

	if err := tools.ValidateName(info.Name); err != nil {
		fail("name: %v", err)
	}
	if strings.TrimSpace(info.Description) == "" {
		fail("description is empty: the model needs it to choose the tool")
	}
	if a := info.Annotations; a.ReadOnly && a.Destructive {
		fail("annotations say both read-only and destructive")
	}

	var root map[string]any
	if err := json.Unmarshal(info.InputSchema, &root); err != nil {
		fail("input schema is not a JSON object: %v", err)
		return out
	}
	if root["type"] != "object" {
		fail(`input schema: "type" is %v, want "object"`, root["type"])
	}
	v, err := schema.Compile(info.InputSchema)
	if err != nil {
		fail("input schema does not compile: %v", err)
		return out
	}

	valid := sample(root)
	validArgs, _ := json.Marshal(valid)
	if err := v.Validate(validArgs); err != nil {
		validArgs = nil // the schema is too clever for sample; skip what needs valid arguments
	}

	if req := stringList(root["required"]); len(req) > 0 {
		err := v.Validate(json.RawMessage(`{}`))
		switch {
		case err == nil:
			fail("arguments {} pass the validator although %q is required", req[0])
		case !isInvalidArgs(err):
			fail("arguments {}: validator returned %v, want an invalid-arguments error", err)
		case !strings.Contains(err.Error(), fmt.Sprintf("%q", req[0])):
			fail("arguments {}: error %q does not name the missing field %q", err, req[0])
		}
	}

	props, _ := root["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		prop, _ := props[name].(map[string]any)
		bad, ok := wrongValue(prop)
		if !ok {
			continue
		}
		args := map[string]any{}
		if validArgs != nil {
			for k, x := range valid {
				args[k] = x
			}
		}
		args[name] = bad
		raw, _ := json.Marshal(args)
		err := v.Validate(raw)
		switch {
		case err == nil:
			fail("arguments %s pass the validator although %q has the wrong type", raw, name)
			continue
		case !isInvalidArgs(err):
			fail("arguments %s: validator returned %v, want an invalid-arguments error", raw, err)
		case !strings.Contains(err.Error(), fmt.Sprintf("%q", name)):
			fail("arguments %s: error %q does not name the field %q", raw, err, name)
		}
		// The context is cancelled so that a tool that does decode the
		// wrong value still stops at once.
		if p, hung := cancelledCall(tool, raw, wait); p != nil {
			fail("Call(%s) bypassing the validator panicked: %v", raw, p)
		} else if hung {
			fail("Call(%s) bypassing the validator, with a cancelled context, did not return within %v", raw, wait)
		}
	}

	for _, raw := range []json.RawMessage{json.RawMessage(`null`), json.RawMessage(`[]`), json.RawMessage(`"x"`)} {
		if err := v.Validate(raw); string(raw) != "null" && !isInvalidArgs(err) {
			fail("arguments %s: validator returned %v, want an invalid-arguments error", raw, err)
		}
		if p, hung := cancelledCall(tool, raw, wait); p != nil {
			fail("Call(%s) bypassing the validator panicked: %v", raw, p)
		} else if hung {
			fail("Call(%s) bypassing the validator, with a cancelled context, did not return within %v", raw, wait)
		}
	}

	args := validArgs
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	if p, hung := cancelledCall(tool, args, wait); p != nil {
		fail("Call(%s) with a cancelled context panicked: %v", args, p)
	} else if hung {
		fail("Call(%s) with a cancelled context did not return within %v: the tool must honour ctx", args, wait)
	}
	return out
}

// cancelledCall calls tool with an already cancelled context and returns
// what it panicked with, or whether it failed to return within wait (its
// goroutine is then left behind).
func cancelledCall(tool tools.Tool, args json.RawMessage, wait time.Duration) (panicked any, hung bool) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		tool.Call(ctx, args)
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case p := <-done:
		return p, false
	case <-timer.C:
		return nil, true
	}
}

func isInvalidArgs(err error) bool {
	return errors.Is(err, &tools.Error{Kind: tools.KindInvalidArguments})
}

func stringList(x any) []string {
	arr, _ := x.([]any)
	var out []string
	for _, a := range arr {
		if s, ok := a.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// sample returns arguments holding a plausible value for every required
// property of the object schema s.
func sample(s map[string]any) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	for _, name := range stringList(s["required"]) {
		prop, _ := props[name].(map[string]any)
		out[name] = sampleValue(prop, 0)
	}
	return out
}

func sampleValue(s map[string]any, depth int) any {
	if s == nil || depth > 8 {
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	for _, key := range []string{"enum", "examples"} {
		if arr, ok := s[key].([]any); ok && len(arr) > 0 {
			return arr[0]
		}
	}
	if d, ok := s["default"]; ok {
		return d
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "string":
		if s["format"] == "date-time" {
			return "2024-01-02T15:04:05Z"
		}
		n, _ := s["minLength"].(float64)
		return strings.Repeat("a", max(int(n), 1))
	case "integer", "number":
		n := 1.0
		if m, ok := s["minimum"].(float64); ok {
			n = math.Ceil(m)
		} else if m, ok := s["exclusiveMinimum"].(float64); ok {
			n = math.Floor(m) + 1
		}
		if m, ok := s["maximum"].(float64); ok && n > m {
			n = m
		}
		return n
	case "boolean":
		return false
	case "array":
		items, _ := s["items"].(map[string]any)
		n, _ := s["minItems"].(float64)
		arr := []any{}
		for range int(n) {
			arr = append(arr, sampleValue(items, depth+1))
		}
		return arr
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for _, name := range stringList(s["required"]) {
			prop, _ := props[name].(map[string]any)
			out[name] = sampleValue(prop, depth+1)
		}
		return out
	}
	return nil
}

// wrongValue returns a value whose JSON type the property schema refuses.
func wrongValue(s map[string]any) (any, bool) {
	typ, ok := s["type"].(string)
	if !ok {
		return nil, false
	}
	switch typ {
	case "string":
		return 12345, true
	case "integer", "number", "boolean", "array", "object":
		return "not a " + typ, true
	}
	return nil, false
}

// Countdown returns a context whose Err is nil for its first n calls and
// context.Canceled after: a call cancelled in its middle, at the same
// point every run. Done never closes; code under test must poll Err.
func Countdown(n int) context.Context {
	return &countdown{Context: context.Background(), n: n}
}

type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}
