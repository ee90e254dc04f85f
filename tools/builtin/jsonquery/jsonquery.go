// Package jsonquery is the json_query built-in: RFC 9535 JSONPath queries
// (github.com/theory/jsonpath) over a JSON document the model passes in.
//
// Both inputs come from the model, so every cost has a cap that is checked
// before the work it bounds (see Config): the path's length and bracket
// nesting before it is parsed (the parser recurses, and a stack overflow
// kills the process, which no recover catches); the document's size and
// nesting before it is decoded; and, while the query runs, the number of
// values selected at each step and the size of the result's JSON. The query
// is evaluated here, segment by segment, rather than by the library's
// Select, so that it stops as soon as a cap is passed or ctx is done. The
// queries inside a filter are the library's to run, uncapped, so their
// shape is checked after parsing (see checkFilters): one test of a filter
// costs at most a few passes over the document.
package jsonquery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/spec"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

// Defaults for Config's zero values.
const (
	// DefaultMaxInputBytes caps the document's size, in bytes.
	DefaultMaxInputBytes = 1 << 20
	// DefaultMaxPathLength caps the JSONPath's length, in bytes.
	DefaultMaxPathLength = 4096
	// DefaultMaxPathDepth caps the nesting of brackets and parentheses in
	// the JSONPath.
	DefaultMaxPathDepth = 64
	// DefaultMaxDepth caps the nesting of arrays and objects in the
	// document.
	DefaultMaxDepth = 1000
	// DefaultMaxResultBytes caps the JSON of the selected values, in bytes:
	// twice DefaultMaxInputBytes, so that a whole document within that cap
	// can be selected ($) even with some escaping.
	DefaultMaxResultBytes = 2 << 20
	// DefaultMaxMatches caps the number of values selected, in the result
	// and at each step of the query.
	DefaultMaxMatches = 10000
)

// Config configures json_query. The zero value uses the defaults. The
// input schema publishes MaxPathLength and MaxInputBytes as the maxLength
// of json_path and json, so the validator refuses an over-long argument
// before the tool runs; the tool checks them again, in bytes, for callers
// that skip validation.
type Config struct {
	// MaxInputBytes is the largest document accepted, in bytes. Zero:
	// DefaultMaxInputBytes (1 MiB).
	MaxInputBytes int
	// MaxPathLength is the longest JSONPath accepted, in bytes. Zero:
	// DefaultMaxPathLength (4096).
	MaxPathLength int
	// MaxPathDepth is the deepest nesting of brackets and parentheses
	// accepted in the JSONPath (outside its string literals), checked
	// before the path is parsed. Zero: DefaultMaxPathDepth (64).
	MaxPathDepth int
	// MaxDepth is the deepest nesting of arrays and objects accepted in
	// the document, checked before it is decoded. Zero: DefaultMaxDepth
	// (1000). encoding/json refuses more than 10000 whatever this says.
	MaxDepth int
	// MaxResultBytes is the largest result accepted: the JSON of the
	// selected values, as encoding/json writes it. A query that selects
	// more fails with an invalid-arguments error, so the model can narrow
	// it. Zero: DefaultMaxResultBytes (2 MiB).
	MaxResultBytes int
	// MaxMatches is the most values the query may select, in its result
	// and at each step on the way (after each segment of the path). A
	// query that selects more fails with an invalid-arguments error. Zero:
	// DefaultMaxMatches (10000).
	MaxMatches int
}

func (c Config) withDefaults() Config {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&c.MaxInputBytes, DefaultMaxInputBytes)
	set(&c.MaxPathLength, DefaultMaxPathLength)
	set(&c.MaxPathDepth, DefaultMaxPathDepth)
	set(&c.MaxDepth, DefaultMaxDepth)
	set(&c.MaxResultBytes, DefaultMaxResultBytes)
	set(&c.MaxMatches, DefaultMaxMatches)
	return c
}

// Input is json_query's input. The maxLength values in the tags are the
// defaults; New publishes the configured ones.
type Input struct {
	JSONPath string `json:"json_path" jsonschema:"description=An RFC 9535 JSONPath query starting with $; e.g. $.store.book[*].author or $..price or $.items[?@.price < 10].name,minLength=1,maxLength=4096"`
	// JSON is the document: JSON text in a string, or the object or array
	// itself (clients such as the MCP Inspector send it as an object).
	JSON json.RawMessage `json:"json"`
}

// docSchema is the published schema of Input.JSON: a string of JSON text,
// an object or an array. maxLength (set by New) applies to the string; an
// object or array is held to the same size in bytes by the tool.
const docSchema = `{"description":"The JSON document to query: its text as a string, or the object or array itself","type":["string","object","array"]}`

// document returns the document's JSON text.
func (in Input) document() (string, error) {
	raw := bytes.TrimSpace(in.JSON)
	if len(raw) > 0 && raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", tools.InvalidArgs("the JSON document string cannot be read: %s", schema.Clip(err.Error(), maxMessage))
		}
		return text, nil
	}
	if len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') {
		return "", tools.InvalidArgs(`"json" must be JSON text in a string, an object or an array`)
	}
	return string(raw), nil
}

// Output is json_query's structured output.
type Output struct {
	Matches []any `json:"matches" jsonschema:"description=The values the query selected, in document order"`
	Count   int   `json:"count"`
}

// New returns the json_query tool.
func New(cfg Config) tools.Tool {
	cfg = cfg.withDefaults()
	t := typed.MustNew("json_query",
		"Select values from a JSON document with an RFC 9535 JSONPath query; the result is {\"matches\": [...], \"count\": n} with the selected values in document order. "+
			"Supports child (.name, ['name']), wildcard (*), recursive descent (..), index and slice ([0], [-1], [1:3]) "+
			"and filter ([?@.price < 10], [?@.tags]) selectors, and the functions length(), count(), match(), search(), value(). "+
			fmt.Sprintf("The document may be at most %d bytes and %d levels deep; the path at most %d bytes. ", cfg.MaxInputBytes, cfg.MaxDepth, cfg.MaxPathLength)+
			fmt.Sprintf("A query may select at most %d values and %d bytes of JSON: select fields or use a slice such as [0:10] to narrow a large result.", cfg.MaxMatches, cfg.MaxResultBytes),
		func(ctx context.Context, in Input) (Output, error) {
			doc, err := in.document()
			if err != nil {
				return Output{}, err
			}
			return Query(ctx, in.JSONPath, doc, cfg)
		},
		typed.WithAnnotations(tools.Annotations{Title: "JSON query", ReadOnly: true, Idempotent: true}))
	info := t.Info()
	info.InputSchema = withProperty(info.InputSchema, "json", docSchema)
	info.InputSchema = withMaxLengths(info.InputSchema, map[string]int{"json_path": cfg.MaxPathLength, "json": cfg.MaxInputBytes})
	return tools.New(info, t.Call)
}

// withProperty returns schema with the top-level property name replaced by
// the schema prop.
func withProperty(schema json.RawMessage, name, prop string) json.RawMessage {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		panic(fmt.Sprintf("jsonquery: input schema: %v", err))
	}
	var p any
	if err := json.Unmarshal([]byte(prop), &p); err != nil {
		panic(fmt.Sprintf("jsonquery: property schema: %v", err))
	}
	props, _ := s["properties"].(map[string]any)
	props[name] = p
	out, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("jsonquery: input schema: %v", err))
	}
	return out
}

// withMaxLengths returns schema with the maxLength of each named top-level
// property set.
func withMaxLengths(schema json.RawMessage, maxLengths map[string]int) json.RawMessage {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		panic(fmt.Sprintf("jsonquery: input schema: %v", err))
	}
	props, _ := s["properties"].(map[string]any)
	for name, n := range maxLengths {
		p, ok := props[name].(map[string]any)
		if !ok {
			panic(fmt.Sprintf("jsonquery: input schema has no property %q", name))
		}
		p["maxLength"] = n
	}
	out, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("jsonquery: input schema: %v", err))
	}
	return out
}

// Query runs path over doc under cfg's limits (zero fields: the defaults).
// Errors are invalid-arguments errors that say what is wrong: the byte
// offset of a JSON syntax error, the parser's message for a bad path, the
// limit that was passed. When ctx is done first, the error is of kind
// cancelled or timeout and wraps ctx.Err(). No error quotes more than about
// a hundred bytes of either input.
func Query(ctx context.Context, path, doc string, cfg Config) (Output, error) {
	cfg = cfg.withDefaults()
	if err := ctx.Err(); err != nil {
		return Output{}, stopped(err)
	}
	if len(path) > cfg.MaxPathLength {
		return Output{}, tools.InvalidArgs("the JSONPath is %d bytes; the limit is %d", len(path), cfg.MaxPathLength)
	}
	if d := pathDepth(path); d > cfg.MaxPathDepth {
		return Output{}, tools.InvalidArgs("the JSONPath nests brackets and parentheses %d deep; the limit is %d", d, cfg.MaxPathDepth)
	}
	if len(doc) > cfg.MaxInputBytes {
		return Output{}, tools.InvalidArgs("the JSON document is %d bytes; the limit is %d", len(doc), cfg.MaxInputBytes)
	}
	if d := docDepth(doc); d > cfg.MaxDepth {
		return Output{}, tools.InvalidArgs("the JSON document nests arrays and objects %d deep; the limit is %d", d, cfg.MaxDepth)
	}
	p, err := jsonpath.Parse(path)
	if err != nil {
		return Output{}, tools.InvalidArgs("invalid JSONPath %s: %s", schema.Quote(path), schema.Clip(err.Error(), maxMessage))
	}
	if err := checkFilters(p.Query()); err != nil {
		return Output{}, err
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Output{}, jsonError(err, dec)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Output{}, tools.InvalidArgs("invalid JSON: more data after the document ends at byte %d", dec.InputOffset())
	}
	e := evaluator{ctx: ctx, root: v, cfg: cfg}
	matches, err := e.query(p.Query())
	if err != nil {
		return Output{}, err
	}
	if err := checkResultSize(matches, cfg.MaxResultBytes); err != nil {
		return Output{}, err
	}
	if matches == nil {
		matches = []any{}
	}
	return Output{Matches: matches, Count: len(matches)}, nil
}

// stopped is the error of a query whose context is done.
func stopped(err error) error {
	kind := tools.KindCancelled
	if errors.Is(err, context.DeadlineExceeded) {
		kind = tools.KindTimeout
	}
	return &tools.Error{Kind: kind, Message: "json_query: the query was stopped: " + err.Error(), Err: err}
}

// pathDepth returns the deepest nesting of '[' and '(' in a JSONPath,
// outside its string literals. Every recursion of the parser opens one of
// them, so this bounds its depth. Unbalanced closers are the parser's to
// report.
func pathDepth(path string) int {
	depth, deepest := 0, 0
	var quote byte // the open literal's quote, or 0
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case quote != 0 && c == '\\':
			i++ // the escaped character, whatever it is
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '[' || c == '(':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == ')':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// docDepth returns the deepest nesting of arrays and objects in a JSON
// text, outside its strings, without decoding it.
func docDepth(doc string) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case inString && c == '\\':
			i++
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// maxMessage is the most bytes of a library's message, which may quote the
// input, that an error carries.
const maxMessage = 200

// checkEvery is how many selector applications pass between two looks at
// ctx.
const checkEvery = 256

// evaluator runs a parsed query over a decoded document, segment by
// segment, with the node count capped at every step and ctx looked at as it
// goes. It gives the same values, in the same order, as the library's
// PathQuery.Select.
type evaluator struct {
	ctx   context.Context
	root  any
	cfg   Config
	ticks int
}

// tick counts one cheap unit of work and reports ctx's error every
// checkEvery.
func (e *evaluator) tick() error {
	e.ticks++
	if e.ticks%checkEvery == 0 {
		return e.check()
	}
	return nil
}

// check reports ctx's error, before a unit of work that may be costly.
func (e *evaluator) check() error {
	if err := e.ctx.Err(); err != nil {
		return stopped(err)
	}
	return nil
}

func (e *evaluator) query(q *spec.PathQuery) ([]any, error) {
	nodes := []any{e.root}
	for _, seg := range q.Segments() {
		var next []any
		var err error
		for _, n := range nodes {
			if seg.IsDescendant() {
				next, err = e.descend(seg.Selectors(), n, next)
			} else {
				next, err = e.apply(seg.Selectors(), n, next)
			}
			if err != nil {
				return nil, err
			}
		}
		nodes = next
	}
	return nodes, nil
}

// descend applies sels to n and to every value under it, in document order
// (n first, then each child with everything under it), as a descendant
// segment (..) does. It keeps its own stack, so a deep document costs heap,
// not goroutine stack.
func (e *evaluator) descend(sels []spec.Selector, n any, out []any) ([]any, error) {
	stack := []any{n}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var err error
		if out, err = e.apply(sels, cur, out); err != nil {
			return nil, err
		}
		switch c := cur.(type) {
		case []any:
			for i := len(c) - 1; i >= 0; i-- {
				stack = append(stack, c[i])
			}
		case map[string]any:
			for _, v := range c {
				stack = append(stack, v)
			}
		}
	}
	return out, nil
}

// apply appends to out what each of sels selects from n.
func (e *evaluator) apply(sels []spec.Selector, n any, out []any) ([]any, error) {
	for _, sel := range sels {
		if err := e.tick(); err != nil {
			return nil, err
		}
		switch s := sel.(type) {
		case *spec.FilterSelector, spec.WildcardSelector:
			// One child at a time: these may select every child.
			for _, child := range children(n) {
				if f, ok := s.(*spec.FilterSelector); ok {
					// A filter may run a query of its own over the
					// whole document: look at ctx every time.
					if err := e.check(); err != nil {
						return nil, err
					}
					if !f.Eval(child, e.root) {
						continue
					}
				}
				out = append(out, child)
				if len(out) > e.cfg.MaxMatches {
					return nil, e.tooMany()
				}
			}
		default:
			out = append(out, sel.Select(n, e.root)...)
		}
		if len(out) > e.cfg.MaxMatches {
			return nil, e.tooMany()
		}
	}
	return out, nil
}

func (e *evaluator) tooMany() error {
	return tools.InvalidArgs("the query selects more than %d values (the limit); narrow it: select fields rather than whole objects, filter with [?...], or take a slice such as [0:10]", e.cfg.MaxMatches)
}

// children returns the values directly under n, in document order for an
// array (an object's members have no order).
func children(n any) []any {
	switch c := n.(type) {
	case []any:
		return c
	case map[string]any:
		out := make([]any, 0, len(c))
		for _, v := range c {
			out = append(out, v)
		}
		return out
	}
	return nil
}

// checkResultSize refuses matches whose JSON array would be longer than
// limit bytes. It stops measuring as soon as the limit is passed, so the
// cost is bounded by the limit, not by the size of what was selected.
func checkResultSize(matches []any, limit int) error {
	total := 2 // []
	for i, m := range matches {
		if i > 0 {
			total++ // ,
		}
		total += jsonSize(m, limit-total+1)
		if total > limit {
			return tools.InvalidArgs("the query's result is more than %d bytes of JSON (the limit); narrow it: select fields rather than whole objects, filter with [?...], or take a slice such as [0:10]", limit)
		}
	}
	return nil
}

// jsonSize returns the length of v's JSON as encoding/json writes it, or
// any number above budget once it is sure to be above budget.
func jsonSize(v any, budget int) int {
	switch v := v.(type) {
	case nil:
		return 4
	case bool:
		if v {
			return 4
		}
		return 5
	case json.Number:
		return len(v)
	case float64:
		return len(strconv.FormatFloat(v, 'g', -1, 64))
	case string:
		return stringSize(v)
	case []any:
		n := 2
		for i, x := range v {
			if i > 0 {
				n++
			}
			if n += jsonSize(x, budget-n); n > budget {
				return n
			}
		}
		return n
	case map[string]any:
		n := 2
		first := true
		for k, x := range v {
			if !first {
				n++
			}
			first = false
			n += stringSize(k) + 1
			if n += jsonSize(x, budget-n); n > budget {
				return n
			}
		}
		return n
	}
	b, _ := json.Marshal(v)
	return len(b)
}

// stringSize returns the length of s as a JSON string written by
// encoding/json, which escapes quotes, backslashes, control characters,
// <, >, &, U+2028, U+2029 and invalid UTF-8.
func stringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

func jsonError(err error, dec *json.Decoder) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return tools.InvalidArgs("invalid JSON at byte %d: %s", se.Offset, schema.Clip(se.Error(), maxMessage))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return tools.InvalidArgs("invalid JSON: the document is empty or ends early (at byte %d)", dec.InputOffset())
	}
	return tools.InvalidArgs("invalid JSON: %s", schema.Clip(err.Error(), maxMessage))
}
