// Package schema validates a tool's arguments against its published input
// schema, the same JSON Schema the model sees, and explains every problem in
// one message a model can act on.
//
// A schema is compiled once, when the tool is registered (Compile); each call
// is then checked with Validator.Validate, which reports every problem at
// once:
//
//	invalid arguments: missing required fields "a", "b"; field "n": expected integer, got string
//
// Format assertions are on, so a "date-time" string (what typed publishes for
// a time.Time) must really be an RFC 3339 timestamp. Schemas may not refer to
// external documents: every $ref must resolve inside the schema itself.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcp-tools/mcp-tools/tools"
)

// location is the URL the compiled schema is known by; it never leaves the
// package.
const location = "mem:///input.json"

// Validator checks arguments against one compiled schema. It is safe for
// concurrent use.
type Validator struct {
	schema *jsonschema.Schema
	// closed maps the location of every sub-schema that forbids additional
	// properties to its property names, sorted, for "did you mean" hints.
	closed map[string][]string
}

// Compile compiles a tool's input schema once. It fails when raw is not
// valid JSON or not a valid JSON Schema (draft 2020-12 unless raw names
// another with "$schema"), or when it refers to an external document.
func Compile(raw json.RawMessage) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.UseLoader(noLoader{})
	if err := c.AddResource(location, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(location)
	if err != nil {
		return nil, fmt.Errorf("schema: not a valid JSON Schema: %w", err)
	}
	v := &Validator{schema: s, closed: make(map[string][]string)}
	v.index(s, make(map[*jsonschema.Schema]bool))
	return v, nil
}

// MustCompile is like Compile but panics on error. It is meant for schemas
// written in the source, like regexp.MustCompile.
func MustCompile(raw json.RawMessage) *Validator {
	v, err := Compile(raw)
	if err != nil {
		panic(err)
	}
	return v
}

// noLoader refuses every external document: a tool's schema must stand on
// its own, and validation must never touch the file system or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q: only references inside the schema are supported", url)
}

// index records, for every sub-schema reachable from s that forbids
// additional properties, the names of the properties it accepts.
func (v *Validator) index(s *jsonschema.Schema, seen map[*jsonschema.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if b, ok := s.AdditionalProperties.(bool); ok && !b {
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		v.closed[s.Location] = names
	}
	walk := func(ss ...*jsonschema.Schema) {
		for _, sub := range ss {
			v.index(sub, seen)
		}
	}
	walk(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
		s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	if s.DynamicRef != nil {
		walk(s.DynamicRef.Ref)
	}
	walk(s.AllOf...)
	walk(s.AnyOf...)
	walk(s.OneOf...)
	walk(s.PrefixItems...)
	for _, sub := range s.Properties {
		walk(sub)
	}
	for _, sub := range s.PatternProperties {
		walk(sub)
	}
	for _, sub := range s.DependentSchemas {
		walk(sub)
	}
	for _, dep := range s.Dependencies {
		if sub, ok := dep.(*jsonschema.Schema); ok {
			walk(sub)
		}
	}
	for _, x := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch x := x.(type) {
		case *jsonschema.Schema:
			walk(x)
		case []*jsonschema.Schema:
			walk(x...)
		}
	}
}

// Validate checks args, a JSON value; nil, empty or null arguments count as
// the empty object {}. It returns nil when args fit the schema, or a
// *tools.Error of kind tools.KindInvalidArguments whose message lists every
// problem; its Err is the *ArgumentError holding them one by one.
func (v *Validator) Validate(args json.RawMessage) error {
	ps := v.Problems(args)
	if len(ps) == 0 {
		return nil
	}
	ae := &ArgumentError{Problems: ps}
	return &tools.Error{Kind: tools.KindInvalidArguments, Message: ae.Error(), Err: ae}
}

// Problems returns every way args break the schema, in a stable order:
// missing required fields first, then the others by field path. It returns
// nil when args fit.
func (v *Validator) Problems(args json.RawMessage) []Problem {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	doc, err := decodeArgs(args)
	if err != nil {
		return []Problem{{Keyword: "json", Message: fmt.Sprintf("the arguments are not valid JSON (%s); send a JSON object", clip(err.Error()))}}
	}
	return v.problems(doc)
}

// ValidateValue is Validate for arguments already decoded by
// encoding/json (into map[string]any, []any, float64 or json.Number,
// string, bool, nil), which spares decoding them again. nil counts as {}.
// A number decoded as float64 may have been rounded (2^53+1 reads as 2^53,
// 1e-700 as 0): when a tool will read the bytes, validate the bytes.
func (v *Validator) ValidateValue(doc any) error {
	if doc == nil {
		doc = map[string]any{}
	}
	ps := v.problems(doc)
	if len(ps) == 0 {
		return nil
	}
	ae := &ArgumentError{Problems: ps}
	return &tools.Error{Kind: tools.KindInvalidArguments, Message: ae.Error(), Err: ae}
}

func (v *Validator) problems(doc any) []Problem {
	if _, ok := doc.(map[string]any); !ok {
		return []Problem{{Keyword: "type", Message: fmt.Sprintf("the arguments must be a JSON object, got %s", jsonType(doc))}}
	}
	if hasHugeNumber(doc) {
		e := explainer{v: v, doc: doc}
		e.hugeNumbers(doc, nil)
		return e.sorted()
	}
	err := v.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Message: clip(err.Error())}}
	}
	e := explainer{v: v, doc: doc}
	e.explain(ve)
	return e.sorted()
}

// jsonType names the JSON type of a decoded value.
func jsonType(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

// MaxNumberLength is the longest number literal, and MaxExponent the
// largest exponent (either sign), that the arguments may hold. The
// validator compares numbers exactly, with math/big, whose work grows
// with both (a number of a million digits took seconds, and one exponent
// past a million made it panic); a number beyond either is a problem of
// its own, found before validation, with keyword "number". Any float64
// and any 64-bit integer is well within them.
const (
	MaxNumberLength = 400
	MaxExponent     = 400
)

// hasHugeNumber reports whether doc holds a number beyond MaxNumberLength
// or MaxExponent. It allocates nothing.
func hasHugeNumber(doc any) bool {
	switch x := doc.(type) {
	case map[string]any:
		for _, v := range x {
			if hasHugeNumber(v) {
				return true
			}
		}
	case []any:
		for _, v := range x {
			if hasHugeNumber(v) {
				return true
			}
		}
	case json.Number:
		return hugeNumber(x)
	}
	return false
}

func hugeNumber(n json.Number) bool {
	s := string(n)
	if len(s) > MaxNumberLength {
		return true
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(s[i+1:])
		return err != nil || exp > MaxExponent || exp < -MaxExponent
	}
	return false
}
