// Package jsonquery is the json_query built-in: RFC 9535 JSONPath queries
// (github.com/theory/jsonpath) over a JSON document the model passes in.
package jsonquery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/theory/jsonpath"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

// DefaultMaxInputBytes caps the document when Config.MaxInputBytes is zero.
const DefaultMaxInputBytes = 1 << 20

// Config configures json_query. The zero value uses the defaults.
type Config struct {
	// MaxInputBytes is the largest document accepted. Zero:
	// DefaultMaxInputBytes (1 MiB).
	MaxInputBytes int
}

// Input is json_query's input.
type Input struct {
	JSONPath string `json:"json_path" jsonschema:"description=An RFC 9535 JSONPath query starting with $; e.g. $.store.book[*].author or $..price or $.items[?@.price < 10].name,minLength=1"`
	JSON     string `json:"json" jsonschema:"description=The JSON document to query, as text"`
}

// Output is json_query's structured output.
type Output struct {
	Matches []any `json:"matches" jsonschema:"description=The values the query selected, in document order"`
	Count   int   `json:"count"`
}

// New returns the json_query tool.
func New(cfg Config) tools.Tool {
	if cfg.MaxInputBytes <= 0 {
		cfg.MaxInputBytes = DefaultMaxInputBytes
	}
	return typed.MustNew("json_query",
		"Select values from a JSON document with an RFC 9535 JSONPath query; the result is {\"matches\": [...], \"count\": n} with the selected values in document order. "+
			"Supports child (.name, ['name']), wildcard (*), recursive descent (..), index and slice ([0], [-1], [1:3]) "+
			"and filter ([?@.price < 10], [?@.tags]) selectors, and the functions length(), count(), match(), search(), value(). "+
			fmt.Sprintf("The document may be at most %d bytes.", cfg.MaxInputBytes),
		func(_ context.Context, in Input) (Output, error) {
			return Query(in.JSONPath, in.JSON, cfg.MaxInputBytes)
		},
		typed.WithAnnotations(tools.Annotations{Title: "JSON query", ReadOnly: true, Idempotent: true}))
}

// Query runs path over doc. Errors are invalid-argument errors that say
// what is wrong: the byte offset of a JSON syntax error, the parser's
// message for a bad path, the size limit.
func Query(path, doc string, maxBytes int) (Output, error) {
	if maxBytes > 0 && len(doc) > maxBytes {
		return Output{}, tools.InvalidArgs("the JSON document is %d bytes; the limit is %d", len(doc), maxBytes)
	}
	p, err := jsonpath.Parse(path)
	if err != nil {
		return Output{}, tools.InvalidArgs("invalid JSONPath %q: %v", path, err)
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
	matches := []any(p.Select(v))
	if matches == nil {
		matches = []any{}
	}
	return Output{Matches: matches, Count: len(matches)}, nil
}

func jsonError(err error, dec *json.Decoder) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return tools.InvalidArgs("invalid JSON at byte %d: %v", se.Offset, se)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return tools.InvalidArgs("invalid JSON: the document is empty or ends early (at byte %d)", dec.InputOffset())
	}
	return tools.InvalidArgs("invalid JSON: %v", err)
}
