package jsonquery_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/theory/jsonpath"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/jsonquery"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/tools/toolstest"
)

const store = `{"store":{"book":[{"author":"Rees","price":8.95,"tags":["x"]},{"author":"Waugh","price":12.99},{"author":"Melville","price":8.99,"isbn":"0-553"}],"bicycle":{"price":19.95}},"big":12345678901234567890}`

func TestQuery(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"child", "$.store.book[0].author", `["Rees"]`},
		{"wildcard", "$.store.book[*].author", `["Rees","Waugh","Melville"]`},
		// Object members have no order (RFC 9535 §2.5.2.2): the book
		// prices and the bicycle's come in either order.
		{"descendants", "$..book[*].price", `[8.95,12.99,8.99]`},
		{"filter", "$.store.book[?@.price < 10].author", `["Rees","Melville"]`},
		{"existence filter", "$.store.book[?@.isbn].author", `["Melville"]`},
		{"slice", "$.store.book[1:].author", `["Waugh","Melville"]`},
		{"negative index", "$.store.book[-1].author", `["Melville"]`},
		{"no match", "$.nothing", `[]`},
		{"big numbers survive", "$.big", `[12345678901234567890]`},
	}
	tool := jsonquery.New(jsonquery.Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"json_path": tt.path, "json": store})
			r := tools.Settle(tool.Call(context.Background(), args))
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			var out jsonquery.Output
			dec := json.NewDecoder(strings.NewReader(r.Text))
			dec.UseNumber()
			if err := dec.Decode(&out); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(out.Matches)
			if string(got) != tt.want {
				t.Errorf("%s = %s, want %s", tt.path, got, tt.want)
			}
			if r.Structured == nil {
				t.Error("no structured content")
			}
		})
	}
}

func TestQueryRefusals(t *testing.T) {
	tests := []struct {
		name, path, doc string
		max             int
		want            string
	}{
		{"syntax error with offset", "$", `{"a": [1, 2,, 3]}`, 0, "invalid JSON at byte 13"},
		{"truncated", "$", `{"a": `, 0, "ends early"},
		{"empty", "$", ``, 0, "empty"},
		{"trailing data", "$", `{} {}`, 0, "more data"},
		{"bad path", "$[", `{}`, 0, "invalid JSONPath"},
		{"not a path", "store.book", `{}`, 0, "invalid JSONPath"},
		{"too big", "$", `[` + strings.Repeat("1,", 100) + `1]`, 50, "the limit is 50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jsonquery.Query(context.Background(), tt.path, tt.doc, jsonquery.Config{MaxInputBytes: tt.max})
			var te *tools.Error
			if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments || !strings.Contains(te.Message, tt.want) {
				t.Errorf("Query = %v, want an invalid-arguments error containing %q", err, tt.want)
			}
		})
	}
}

func TestMaxInputBytes(t *testing.T) {
	big := `"` + strings.Repeat("a", 1<<20-2) + `"` // exactly 1 MiB
	tests := []struct {
		name string
		cfg  jsonquery.Config
		doc  string
		want string // empty: success
	}{
		{"default passes 1 MiB", jsonquery.Config{}, big, ""},
		{"default refuses 1 MiB + 1", jsonquery.Config{}, big + " ", "1048577 bytes; the limit is 1048576"},
		{"custom refuses", jsonquery.Config{MaxInputBytes: 10}, `[1,2,3,4,5]`, "11 bytes; the limit is 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"json_path": "$", "json": tt.doc})
			r := tools.Settle(jsonquery.New(tt.cfg).Call(context.Background(), args))
			switch {
			case tt.want == "" && r.Err != nil:
				t.Errorf("got error %v, want success", r.Err)
			case tt.want != "" && (r.Err == nil || !strings.Contains(r.Err.Message, tt.want)):
				t.Errorf("got error %v, want one containing %q", r.Err, tt.want)
			}
		})
	}
}

func TestConformance(t *testing.T) { toolstest.Check(t, jsonquery.New(jsonquery.Config{})) }

// invalidArgs returns err's message when it is an invalid-arguments error,
// and fails the test otherwise.
func invalidArgs(t *testing.T, err error) string {
	t.Helper()
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments {
		t.Fatalf("got error %v, want an invalid-arguments error", err)
	}
	return te.Message
}

// TestPathCheckedBeforeParsing: the parser recurses once per bracket or
// parenthesis, and a stack overflow is fatal, so length and nesting are
// refused before it runs. A million '(' used to end the process.
func TestPathCheckedBeforeParsing(t *testing.T) {
	tests := []struct {
		name, path string
		want       string // empty: accepted
	}{
		{"a million parentheses", "$[?" + strings.Repeat("(", 1_000_000), "the JSONPath is 1000003 bytes; the limit is 4096"},
		{"deep parentheses within the length", "$[?" + strings.Repeat("(", 2000) + "@.a" + strings.Repeat(")", 2000) + "]", "nests brackets and parentheses 2001 deep; the limit is 64"},
		{"deep nested queries", "$" + strings.Repeat("[?@", 65) + strings.Repeat("]", 65), "nests brackets and parentheses 65 deep; the limit is 64"},
		{"at the depth limit", "$" + strings.Repeat("[?@", 32) + strings.Repeat("]", 32) + `["x"]`, ""},
		{"brackets in a string literal do not count", `$[?@.a == '` + strings.Repeat("([", 500) + `']`, ""},
		{"escaped quote in a literal", `$[?@.a == 'it\'s ((((' ]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jsonquery.Query(context.Background(), tt.path, `{"a":1}`, jsonquery.Config{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got error %v, want success", err)
				}
				return
			}
			if msg := invalidArgs(t, err); !strings.Contains(msg, tt.want) {
				t.Errorf("got %q, want it to contain %q", msg, tt.want)
			}
		})
	}
}

// deepArrays is the document of the hardening issue: n nested arrays.
func deepArrays(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestDocumentDepth(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		cfg  jsonquery.Config
		want string // empty: accepted
	}{
		{"8000 nested arrays", deepArrays(8000), jsonquery.Config{}, "nests arrays and objects 8000 deep; the limit is 1000"},
		{"at the limit", deepArrays(1000), jsonquery.Config{}, ""},
		{"custom limit", `{"a":[{"b":[]}]}`, jsonquery.Config{MaxDepth: 3}, "4 deep; the limit is 3"},
		{"brackets in strings do not count", `["[[[[\"{{{{"]`, jsonquery.Config{MaxDepth: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jsonquery.Query(context.Background(), "$", tt.doc, tt.cfg)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got error %v, want success", err)
				}
				return
			}
			if msg := invalidArgs(t, err); !strings.Contains(msg, tt.want) {
				t.Errorf("got %q, want it to contain %q", msg, tt.want)
			}
		})
	}
}

// TestDeepDocumentResultCapped is the case: 8000 nested '[' (16 KB)
// queried with $..* once produced 128 MB of result and a 963 MiB peak. With
// the depth limit lifted, the result cap stops it, having allocated little.
func TestDeepDocumentResultCapped(t *testing.T) {
	doc := deepArrays(8000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := jsonquery.Query(context.Background(), "$..*", doc, jsonquery.Config{MaxDepth: 10000})
	runtime.ReadMemStats(&after)
	msg := invalidArgs(t, err)
	if want := "more than 2097152 bytes of JSON (the limit)"; !strings.Contains(msg, want) {
		t.Errorf("got %q, want it to contain %q", msg, want)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(32<<20); got > limit {
		t.Errorf("the query allocated %d bytes, want at most %d", got, limit)
	}

	// Through the tool, with the default limits, the depth cap answers first.
	args, _ := json.Marshal(jsonquery.Input{JSONPath: "$..*", JSON: text(doc)})
	r := tools.Settle(jsonquery.New(jsonquery.Config{}).Call(context.Background(), args))
	if r.Err == nil || !strings.Contains(r.Err.Message, "8000 deep") {
		t.Errorf("tool call = %+v, want the depth error", r)
	}
}

func TestResultLimits(t *testing.T) {
	big := `["` + strings.Repeat("a", 200_000) + `"]`
	many := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]" }
	tests := []struct {
		name, path, doc string
		cfg             jsonquery.Config
		want            string // empty: accepted
		wantCount       int
	}{
		{"amplified by repeated selectors", "$[" + strings.TrimSuffix(strings.Repeat("0,", 20), ",") + "]", big, jsonquery.Config{}, "more than 2097152 bytes of JSON", 0},
		{"under the byte cap", "$[0,0,0]", big, jsonquery.Config{}, "", 3},
		{"byte cap configured", "$[*]", `["abcdef"]`, jsonquery.Config{MaxResultBytes: 9}, "more than 9 bytes", 0},
		{"byte cap exactly met", "$[*]", `["abcdef"]`, jsonquery.Config{MaxResultBytes: 10}, "", 1},
		{"escapes counted", "$[*]", `["<>"]`, jsonquery.Config{MaxResultBytes: 15}, "more than 15 bytes", 0},
		{"match count at the limit", "$[*]", many(10000), jsonquery.Config{}, "", 10000},
		{"match count over the limit", "$[*]", many(10001), jsonquery.Config{}, "more than 10000 values", 0},
		{"descendants counted", "$..*", `[[1,2],[3]]`, jsonquery.Config{MaxMatches: 4}, "more than 4 values", 0},
		{"every step counted", "$[0,0,0][0,0,0]", `[[1]]`, jsonquery.Config{MaxMatches: 8}, "more than 8 values", 0},
		{"filter counted", "$[?@ > 0]", many(6), jsonquery.Config{MaxMatches: 5}, "more than 5 values", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := jsonquery.Query(context.Background(), tt.path, tt.doc, tt.cfg)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got error %v, want success", err)
				}
				if out.Count != tt.wantCount {
					t.Errorf("got %d matches, want %d", out.Count, tt.wantCount)
				}
				if b, _ := json.Marshal(out.Matches); tt.cfg.MaxResultBytes > 0 && len(b) > tt.cfg.MaxResultBytes {
					t.Errorf("result is %d bytes, over the cap %d", len(b), tt.cfg.MaxResultBytes)
				}
				return
			}
			if msg := invalidArgs(t, err); !strings.Contains(msg, tt.want) {
				t.Errorf("got %q, want it to contain %q", msg, tt.want)
			}
		})
	}
}

func TestCancelledDuringEvaluation(t *testing.T) {
	// A filter that runs a descendant query from the root for every node:
	// quadratic work, which must stop when the context does.
	doc := "[" + strings.TrimSuffix(strings.Repeat(`{"a":[1,2,3]},`, 300), ",") + "]"
	ctx := toolstest.Countdown(10)
	_, err := jsonquery.Query(ctx, "$..[?count($..*) > 0]", doc, jsonquery.Config{MaxMatches: 1 << 30})
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got error %v, want a cancelled error wrapping context.Canceled", err)
	}

	dctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	_, err = jsonquery.Query(dctx, "$", "1", jsonquery.Config{})
	if !errors.As(err, &te) || te.Kind != tools.KindTimeout {
		t.Errorf("with a past deadline: got %v, want a timeout error", err)
	}
}

// TestErrorsDoNotEchoInput: an over-long argument is refused without the
// error carrying it back to the model, both by the validator (the schema's
// maxLength) and by the tool itself when called directly.
func TestErrorsDoNotEchoInput(t *testing.T) {
	mib := strings.Repeat("(", 1<<20)
	tool := jsonquery.New(jsonquery.Config{})
	v := schema.MustCompile(tool.Info().InputSchema)
	tests := []struct {
		name string
		in   jsonquery.Input
	}{
		{"1 MiB json_path", jsonquery.Input{JSONPath: mib, JSON: text("{}")}},
		{"1 MiB + 1 json", jsonquery.Input{JSONPath: "$", JSON: text(mib + "(")}},
		{"4096-byte path of control characters", jsonquery.Input{JSONPath: strings.Repeat("\x01", 4096), JSON: text("{}")}},
		{"long unknown function", jsonquery.Input{JSONPath: "$[?" + strings.Repeat("f", 4000) + "(@)]", JSON: text("{}")}},
		{"long name in a bad path", jsonquery.Input{JSONPath: "$." + strings.Repeat("é", 2000) + "[", JSON: text("{}")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(tt.in)
			r := tools.Settle(tool.Call(context.Background(), args))
			if r.Err == nil || r.Err.Kind != tools.KindInvalidArguments {
				t.Fatalf("Call = %+v, want an invalid-arguments error", r)
			}
			if n := utf8.RuneCountInString(r.Err.Message); n >= 500 {
				t.Errorf("Call error is %d characters, want fewer than 500: %.300s", n, r.Err.Message)
			}
			err := v.Validate(args)
			if len(tt.in.JSONPath) > 4096 || len(tt.in.JSON) > 1<<20 {
				if err == nil {
					t.Fatal("the validator accepted the over-long argument")
				}
				if n := utf8.RuneCountInString(err.Error()); n >= 500 {
					t.Errorf("validator error is %d characters, want fewer than 500: %.300s", n, err)
				}
			}
		})
	}
}

func TestSchemaPublishesLimits(t *testing.T) {
	tests := []struct {
		name           string
		cfg            jsonquery.Config
		wantPath, want float64
	}{
		{"defaults", jsonquery.Config{}, jsonquery.DefaultMaxPathLength, jsonquery.DefaultMaxInputBytes},
		{"configured", jsonquery.Config{MaxPathLength: 100, MaxInputBytes: 2 << 20}, 100, 2 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s struct {
				Properties map[string]map[string]any `json:"properties"`
			}
			if err := json.Unmarshal(jsonquery.New(tt.cfg).Info().InputSchema, &s); err != nil {
				t.Fatal(err)
			}
			if got := s.Properties["json_path"]["maxLength"]; got != tt.wantPath {
				t.Errorf("json_path maxLength = %v, want %v", got, tt.wantPath)
			}
			if got := s.Properties["json"]["maxLength"]; got != tt.want {
				t.Errorf("json maxLength = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzJSONQuery(f *testing.F) {
	f.Add("$.a[*]", `{"a":[1,2]}`)
	f.Add("$..x", `[{"x":1},{"y":{"x":2}}]`)
	f.Add("$[?@.p < 3]", `[{"p":1},{"p":5}]`)
	f.Add("$[", `{`)
	// The extremes: nesting far past the caps, in the path and the document.
	f.Add("$[?"+strings.Repeat("(", 5000), `{}`)
	f.Add("$"+strings.Repeat("[?@", 70)+strings.Repeat("]", 70), `[[[1]]]`)
	f.Add("$"+strings.Repeat("[0]", 1000), deepArrays(1001))
	f.Add("$..*", deepArrays(8000))
	f.Add("$..[?count($..*) > 0]", `[[1,[2,[3]]],{"a":{"b":[]}}]`)
	f.Add(`$[?@.a == '`+strings.Repeat("(", 100)+`']`, `[{"a":"("}]`)
	cfg := jsonquery.Config{MaxInputBytes: 1 << 16, MaxResultBytes: 1 << 16, MaxMatches: 1000}
	f.Fuzz(func(t *testing.T, path, doc string) {
		out, err := jsonquery.Query(context.Background(), path, doc, cfg)
		if err != nil {
			var te *tools.Error
			if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments {
				t.Fatalf("Query(%q, %q) error %v is not an invalid-arguments error", path, doc, err)
			}
			if n := utf8.RuneCountInString(te.Message); n >= 500 {
				t.Fatalf("error is %d characters, want fewer than 500: %.300s", n, te.Message)
			}
			return
		}
		if out.Count != len(out.Matches) {
			t.Fatalf("count %d for %d matches", out.Count, len(out.Matches))
		}
		b, err := json.Marshal(out.Matches)
		if err != nil {
			t.Fatalf("output does not marshal: %v", err)
		}
		if len(b) > cfg.MaxResultBytes || out.Count > cfg.MaxMatches {
			t.Fatalf("result of %d bytes and %d matches passes the caps (%d bytes, %d matches)", len(b), out.Count, cfg.MaxResultBytes, cfg.MaxMatches)
		}
		// The same values as the library's own evaluation, in some order
		// (object members have none).
		p, _ := jsonpath.Parse(path)
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			t.Fatalf("Query accepted a document json cannot decode: %q", doc)
		}
		if got, want := sortedJSON(out.Matches), sortedJSON(p.Select(v)); !slices.Equal(got, want) {
			t.Fatalf("Query(%q, %q) = %v, want the library's %v", path, doc, got, want)
		}
	})
}

func sortedJSON(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		b, _ := json.Marshal(v)
		out[i] = string(b)
	}
	slices.Sort(out)
	return out
}

// text is s as a JSON string: the document given as text.
func text(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// TestDocumentAsObjectOrText: the document may come as JSON text in a
// string, or as the object or array itself (as the MCP Inspector sends
// it), with the same result; anything else is refused.
func TestDocumentAsObjectOrText(t *testing.T) {
	tool := jsonquery.New(jsonquery.Config{})
	v := schema.MustCompile(tool.Info().InputSchema)
	tests := []struct {
		name, args, want string
	}{
		{"text", `{"json_path":"$.a","json":"{\"a\":[1,2]}"}`, `[[1,2]]`},
		{"object", `{"json_path":"$.a","json":{"a":[1,2]}}`, `[[1,2]]`},
		{"array", `{"json_path":"$[1]","json":[10,20]}`, `[20]`},
		{"number", `{"json_path":"$","json":3}`, ""},
		{"null", `{"json_path":"$","json":null}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verr := v.Validate(json.RawMessage(tt.args))
			r := tools.Settle(tool.Call(context.Background(), json.RawMessage(tt.args)))
			if tt.want == "" {
				if verr == nil || r.Err == nil || r.Err.Kind != tools.KindInvalidArguments {
					t.Errorf("validation %v, call %+v; want both to refuse", verr, r.Err)
				}
				return
			}
			if verr != nil || r.Err != nil {
				t.Fatalf("validation %v, call %+v", verr, r.Err)
			}
			var out jsonquery.Output
			b, _ := json.Marshal(r.Structured)
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(out.Matches)
			if string(got) != tt.want {
				t.Errorf("matches = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestQueriesInFiltersBounded: the library runs the queries inside a
// filter itself, with no cap and no look at ctx, so their shape is checked
// before the query runs. Each refused path costs little on the tiny
// document here, but grows without bound with the document: three ..
// segments cost depth³ per node (a 2 KB document, minutes and gigabytes),
// ten [0,0,…] segments 10¹⁰ values (the process dies of memory).
func TestQueriesInFiltersBounded(t *testing.T) {
	ten := "[" + strings.TrimSuffix(strings.Repeat("0,", 10), ",") + "]"
	tests := []struct {
		name, path string
		want       string // in the error; empty: accepted, with the library's result
	}{
		{"descendants of descendants", "$[?count($..*..*..*) > 0]", "one descendant segment (..)"},
		{"two descendant segments in an existence test", "$[?@..a..b]", "one descendant segment (..)"},
		{"repeated selectors multiply", "$[?count($" + strings.Repeat(ten, 10) + ") > 0]", "multiplies the values it selects"},
		{"a filter in a filter's query runs a query from the root", "$[?count($[?count($[*]) > 0]) > 0]", "must start at @"},
		{"a filter in a filter's query runs a descendant query", "$[?count(@.*[?@..x]) > 0]", "must start at @"},
		{"a filter in a filter's query repeats selectors", "$[?count(@.*[?count(@[0,0]) > 0]) > 0]", "must start at @"},
		{"a long pattern in a filter in a filter's query", "$[?count(@[?match(@, '" + strings.Repeat("a", 65) + "')]) > 0]", "literal pattern of at most 64 bytes"},
		{"a pattern from the document in a filter in a filter's query", "$[?count(@[?search(@, $.p)]) > 0]", "literal pattern of at most 64 bytes"},
		{"a short pattern that compiles large in a filter in a filter's query", "$[?count(@[?match(@, '[a-z]{1000}')]) > 0]", "literal pattern of at most 64 bytes"},
		{"three patterns in filters in filters' queries", "$[?count(@[?match(@, 'a')]) > 0 || count(@[?match(@, 'b')]) > 0 || count(@[?match(@, 'c')]) > 0]", "at most 2 match() or search()"},

		{"a filter of the top-level query", "$..[?count($..*) > 0]", ""},
		{"one descendant segment", "$[?@..price]", ""},
		{"a few selectors", "$.store.book[?count(@['author','price']) == 2].author", ""},
		{"a wildcard in a filter", "$.store.book[?count(@.tags[*]) > 0].author", ""},
		{"a root value compared", "$..book[?@.price < $.store.bicycle.price].author", ""},
		{"a filter in a filter", "$.store.book[?@.tags[?@ == 'x']].author", ""},
		{"a short pattern in a filter in a filter", "$.store.book[?count(@.tags[?match(@, 'x|y')]) > 0].author", ""},
		{"two patterns in filters in filters' queries", "$.store.book[?count(@.tags[?match(@, 'x')]) > 0 || @.tags[?search(@, '[a-z]')]].author", ""},
		{"a relative query in a filter in a filter", "$.store[?count(@[?count(@.tags[*]) > 0]) > 0]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := jsonquery.Query(context.Background(), tt.path, store, jsonquery.Config{})
			if tt.want != "" {
				if msg := invalidArgs(t, err); !strings.Contains(msg, tt.want) {
					t.Errorf("got %q, want it to contain %q", msg, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want success", err)
			}
			dec := json.NewDecoder(strings.NewReader(store))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			want := jsonpath.MustParse(tt.path).Select(v)
			if got, want := sortedJSON(out.Matches), sortedJSON(want); !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("got %v, want the library's %v", got, want)
			}
		})
	}
}
