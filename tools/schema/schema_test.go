package schema_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

type color string

func (color) Enum() []string { return []string{"red", "green"} }

type options struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100"`
}

// searchIn is the representative input: every message shape below is made
// by a schema generated from it.
type searchIn struct {
	Query  string    `json:"query" jsonschema:"minLength=2,pattern=^[a-z ]+$"`
	N      int       `json:"n" jsonschema:"minimum=1,maximum=10"`
	Ratio  float64   `json:"ratio,omitempty" jsonschema:"exclusiveMinimum=0"`
	Tags   []string  `json:"tags,omitempty" jsonschema:"maxLength=10"`
	Pair   [2]int    `json:"pair,omitempty"`
	Color  color     `json:"color,omitempty"`
	Since  time.Time `json:"since,omitzero"`
	Opts   *options  `json:"opts,omitempty"`
	Nested []options `json:"nested,omitempty"`
}

func compile(t testing.TB, strict bool) *schema.Validator {
	t.Helper()
	raw, err := typed.Schema(reflect.TypeFor[searchIn](), strict)
	if err != nil {
		t.Fatalf("typed.Schema: %v", err)
	}
	v, err := schema.Compile(raw)
	if err != nil {
		t.Fatalf("Compile(%s): %v", raw, err)
	}
	return v
}

func TestValidateMessages(t *testing.T) {
	strict, loose := compile(t, true), compile(t, false)
	tests := []struct {
		name string
		v    *schema.Validator
		args string
		want string // the whole message; "" means valid
	}{
		{name: "valid", v: strict, args: `{"query":"go","n":3}`},
		{name: "valid with every field", v: strict,
			args: `{"query":"go fmt","n":10,"ratio":0.5,"tags":["a"],"pair":[1,2],"color":"red","since":"2024-05-01T10:00:00Z","opts":{"query":"x","limit":1},"nested":[{"query":"y"}]}`},
		{name: "empty means {}", v: strict, args: ``,
			want: `invalid arguments: missing required fields "n", "query"`},
		{name: "null means {}", v: strict, args: `null`,
			want: `invalid arguments: missing required fields "n", "query"`},
		{name: "one missing field", v: strict, args: `{"query":"go"}`,
			want: `invalid arguments: missing required field "n"`},
		{name: "missing nested field", v: strict, args: `{"query":"go","n":1,"opts":{},"nested":[{"query":"a"},{}]}`,
			want: `invalid arguments: missing required fields "nested[1].query", "opts.query"`},
		{name: "wrong type", v: strict, args: `{"query":"go","n":"3"}`,
			want: `invalid arguments: field "n": expected integer, got string`},
		{name: "number for integer", v: strict, args: `{"query":"go","n":1.5}`,
			want: `invalid arguments: field "n": expected integer, got number`},
		{name: "minimum", v: strict, args: `{"query":"go","n":0}`,
			want: `invalid arguments: field "n": must be at least 1 (minimum 1)`},
		{name: "maximum", v: strict, args: `{"query":"go","n":11}`,
			want: `invalid arguments: field "n": must be at most 10 (maximum 10)`},
		{name: "exclusive minimum", v: strict, args: `{"query":"go","n":1,"ratio":0}`,
			want: `invalid arguments: field "ratio": must be greater than 0 (exclusiveMinimum 0)`},
		{name: "min length", v: strict, args: `{"query":"g","n":1}`,
			want: `invalid arguments: field "query": must be at least 2 characters long (minLength 2)`},
		{name: "max length in array", v: strict, args: `{"query":"go","n":1,"tags":["a","b","abcdefghijk"]}`,
			want: `invalid arguments: field "tags[2]": must be at most 10 characters long (maxLength 10)`},
		{name: "pattern", v: strict, args: `{"query":"Go!","n":1}`,
			want: `invalid arguments: field "query": must match the regular expression "^[a-z ]+$" (pattern)`},
		{name: "enum", v: strict, args: `{"query":"go","n":1,"color":"blue"}`,
			want: `invalid arguments: field "color": must be one of "red", "green" (enum)`},
		{name: "array too short", v: strict, args: `{"query":"go","n":1,"pair":[1]}`,
			want: `invalid arguments: field "pair": must have at least 2 items (minItems 2)`},
		{name: "array too long", v: strict, args: `{"query":"go","n":1,"pair":[1,2,3]}`,
			want: `invalid arguments: field "pair": must have at most 2 items (maxItems 2)`},
		{name: "date-time format", v: strict, args: `{"query":"go","n":1,"since":"yesterday"}`,
			want: `invalid arguments: field "since": must be an RFC 3339 date-time such as "2006-01-02T15:04:05Z" (format date-time)`},
		{name: "nested limit", v: strict, args: `{"query":"go","n":1,"nested":[{"query":"a","limit":0}]}`,
			want: `invalid arguments: field "nested[0].limit": must be at least 1 (minimum 1)`},
		{name: "unknown field close to a known one", v: strict, args: `{"qurey":"go","n":1}`,
			want: `invalid arguments: missing required field "query"; unknown field "qurey" (did you mean "query"?)`},
		{name: "unknown field differing in case", v: strict, args: `{"query":"go","N":1}`,
			want: `invalid arguments: missing required field "n"; unknown field "N" (did you mean "n"?)`},
		{name: "unknown nested field", v: strict, args: `{"query":"go","n":1,"opts":{"query":"a","limt":2}}`,
			want: `invalid arguments: unknown field "opts.limt" (did you mean "opts.limit"?)`},
		{name: "unknown field far from every name", v: strict, args: `{"query":"go","n":1,"opts":{"query":"a","zzzzzz":2}}`,
			want: `invalid arguments: unknown field "opts.zzzzzz" (accepted fields: "limit", "query")`},
		{name: "given field is not suggested", v: strict, args: `{"query":"go","n":1,"opts":{"query":"a","limit":2,"querx":1}}`,
			want: `invalid arguments: unknown field "opts.querx" (accepted fields: "limit", "query")`},
		{name: "unknown field allowed when not strict", v: loose, args: `{"query":"go","n":1,"extra":true}`},
		{name: "every problem at once", v: strict, args: `{"n":"x","tags":[1,"abcdefghijklmnop"],"color":"blue","qurey":"q"}`,
			want: `invalid arguments: missing required field "query"; field "color": must be one of "red", "green" (enum); field "n": expected integer, got string; unknown field "qurey" (did you mean "query"?); field "tags[0]": expected string, got integer; field "tags[1]": must be at most 10 characters long (maxLength 10)`},
		{name: "array is not an object", v: strict, args: `[1,2]`,
			want: `invalid arguments: the arguments must be a JSON object, got array`},
		{name: "string is not an object", v: strict, args: `"go"`,
			want: `invalid arguments: the arguments must be a JSON object, got string`},
		{name: "not JSON", v: strict, args: `{"query":`,
			want: `invalid arguments: the arguments are not valid JSON (unexpected EOF); send a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Validate(json.RawMessage(tt.args))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate(%s) = %v, want nil", tt.args, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%s) = nil, want %q", tt.args, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Validate(%s):\n got %s\nwant %s", tt.args, got, tt.want)
			}
			if !errors.Is(err, &tools.Error{Kind: tools.KindInvalidArguments}) {
				t.Errorf("Validate(%s) = %#v, want a tools.Error of kind %s", tt.args, err, tools.KindInvalidArguments)
			}
		})
		// ValidateValue, on what encoding/json decoded (as mcp-go hands
		// it over), must say exactly the same.
		t.Run(tt.name+"/decoded", func(t *testing.T) {
			var doc any
			if tt.args != "" {
				if err := json.Unmarshal([]byte(tt.args), &doc); err != nil {
					t.Skip("not JSON")
				}
			}
			err := tt.v.ValidateValue(doc)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("ValidateValue(%s) = %v, want nil", tt.args, err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("ValidateValue(%s) = %v, want %s", tt.args, err, tt.want)
			}
		})
	}
}

func TestProblems(t *testing.T) {
	v := compile(t, true)
	got := v.Problems(json.RawMessage(`{"n":0,"tags":["abcdefghijklmnop"],"opts":{"query":"a","limt":1}}`))
	want := []schema.Problem{
		{Field: "query", Keyword: "required", Message: `missing required field "query"`},
		{Field: "n", Keyword: "minimum", Message: `field "n": must be at least 1 (minimum 1)`},
		{Field: "opts.limt", Keyword: "additionalProperties", Message: `unknown field "opts.limt" (did you mean "opts.limit"?)`},
		{Field: "tags[0]", Keyword: "maxLength", Message: `field "tags[0]": must be at most 10 characters long (maxLength 10)`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Problems:\n got %+v\nwant %+v", got, want)
	}
	if ps := v.Problems(json.RawMessage(`{"query":"go","n":1}`)); ps != nil {
		t.Errorf("Problems(valid) = %+v, want nil", ps)
	}
}

func TestValidateWrapsArgumentError(t *testing.T) {
	v := compile(t, true)
	err := v.Validate(json.RawMessage(`{}`))
	var ae *schema.ArgumentError
	if !errors.As(err, &ae) {
		t.Fatalf("errors.As(%v, *ArgumentError) = false, want true", err)
	}
	if got := len(ae.Problems); got != 2 {
		t.Errorf("got %d problems, want 2: %+v", got, ae.Problems)
	}
	var te *tools.Error
	if !errors.As(err, &te) || te.Message != ae.Error() {
		t.Errorf("tools.Error message = %q, want %q", te.Message, ae.Error())
	}
}

func TestSchemaShapes(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		args   string
		want   string
	}{
		{name: "no arguments accepted", schema: `{"type":"object","properties":{},"additionalProperties":false}`,
			args: `{"x":1}`, want: `invalid arguments: unknown field "x" (this tool takes no arguments)`},
		{name: "const", schema: `{"type":"object","properties":{"v":{"const":"yes"}}}`,
			args: `{"v":"no"}`, want: `invalid arguments: field "v": must be "yes" (const)`},
		{name: "fractional maximum", schema: `{"type":"object","properties":{"p":{"type":"number","maximum":0.5}}}`,
			args: `{"p":0.75}`, want: `invalid arguments: field "p": must be at most 0.5 (maximum 0.5)`},
		{name: "unique items", schema: `{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}`,
			args: `{"a":[1,2,1]}`, want: `invalid arguments: field "a": items 0 and 2 are equal; every item must be different (uniqueItems)`},
		{name: "one max property", schema: `{"type":"object","maxProperties":1}`,
			args: `{"a":1,"b":2}`, want: `invalid arguments: the arguments: must have at most 1 field (maxProperties 1)`},
		{name: "any of", schema: `{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"integer","minimum":1}]}}}`,
			args: `{"id":0}`, want: `invalid arguments: field "id": does not match any of the allowed forms (anyOf): field "id": expected string, got integer or field "id": must be at least 1 (minimum 1)`},
		{name: "reference inside the schema", schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`,
			args: `{"a":1}`, want: `invalid arguments: field "a": expected string, got integer`},
		{name: "map values", schema: `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`,
			args: `{"m":{"k":"v"}}`, want: `invalid arguments: field "m.k": expected integer, got string`},
		{name: "not", schema: `{"type":"object","properties":{"a":{"not":{"type":"string"}}}}`,
			args: `{"a":"s"}`, want: `invalid arguments: field "a": must not match the schema under "not" (not)`},
		{name: "false schema", schema: `{"type":"object","properties":{"a":false}}`,
			args: `{"a":1}`, want: `invalid arguments: field "a": no value is allowed here (false schema)`},
		{name: "other keywords use the library's words", schema: `{"type":"object","dependentRequired":{"a":["b"]}}`,
			args: `{"a":1}`, want: `invalid arguments: the arguments: properties 'b' required, if 'a' exists (dependentRequired)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := schema.Compile(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			err = v.Validate(json.RawMessage(tt.args))
			if err == nil {
				t.Fatalf("Validate(%s) = nil, want %q", tt.args, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Validate(%s):\n got %s\nwant %s", tt.args, got, tt.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // substring of the error
	}{
		{name: "not JSON", schema: `{"type":`, want: "schema: not valid JSON"},
		{name: "bad type keyword", schema: `{"type":"objekt"}`, want: "schema: not a valid JSON Schema"},
		{name: "bad minimum", schema: `{"type":"object","properties":{"n":{"minimum":"one"}}}`, want: "schema: not a valid JSON Schema"},
		{name: "bad pattern", schema: `{"type":"object","properties":{"s":{"pattern":"("}}}`, want: "schema: not a valid JSON Schema"},
		{name: "external reference", schema: `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`, want: "only references inside the schema are supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schema.Compile(json.RawMessage(tt.schema))
			if err == nil {
				t.Fatalf("Compile(%s) = nil error, want one containing %q", tt.schema, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compile(%s) = %q, want it to contain %q", tt.schema, err, tt.want)
			}
		})
	}
}

func TestMustCompilePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustCompile(invalid) did not panic")
		}
	}()
	schema.MustCompile(json.RawMessage(`{"type":1}`))
}

func TestValidateConcurrently(t *testing.T) {
	v := compile(t, true)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			args := json.RawMessage(`{"query":"go","n":1}`)
			if i%2 == 1 {
				args = json.RawMessage(`{"qurey":"go","n":0}`)
			}
			for range 50 {
				err := v.Validate(args)
				if (err == nil) != (i%2 == 0) {
					t.Errorf("Validate(%s) = %v", args, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkValidate(b *testing.B) {
	v := schema.MustCompile(json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1}},"required":["query"],"additionalProperties":false}`))
	args := json.RawMessage(`{"query":"golang","limit":10}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}
