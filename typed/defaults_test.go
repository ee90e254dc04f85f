package typed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

type Paging struct {
	Size int    `json:"size,omitempty" jsonschema:"default=20"`
	Sort string `json:"sort,omitempty" jsonschema:"enum=asc,enum=desc,default=asc"`
}

type Embedded struct {
	Verbose bool `json:"verbose,omitempty" jsonschema:"default=true"`
}

// Search has a default of every kind, a nested object with defaults, an
// embedded struct, and fields without one.
type Search struct {
	Embedded
	Query  string   `json:"query" jsonschema:"description=What to look for"`
	Limit  int      `json:"limit,omitempty" jsonschema:"default=10,minimum=1"`
	Ratio  float64  `json:"ratio,omitempty" jsonschema:"default=0.5"`
	Exact  bool     `json:"exact,omitempty" jsonschema:"default=true"`
	Lang   string   `json:"lang,omitempty" jsonschema:"default=en"`
	Fields []string `json:"fields,omitempty" jsonschema:"default=title,default=body"`
	Max    *int     `json:"max,omitempty" jsonschema:"default=100"`
	Page   Paging   `json:"page,omitzero"`
	Note   string   `json:"note,omitempty"`
}

// TestDefaultsGolden pins the published schema and what the function sees
// for several calls: absent properties get their default, given ones
// (false, 0, "" and null included) are kept.
func TestDefaultsGolden(t *testing.T) {
	var seen Search
	tool := typed.MustNew("search", "d", func(_ context.Context, in Search) (string, error) {
		seen = in
		return "ok", nil
	})
	calls := []string{
		`{"query": "go"}`,
		`{"query": "go", "limit": 3, "exact": false, "lang": "", "fields": [], "max": null, "verbose": false}`,
		`{"query": "go", "page": {}}`,
		`{"query": "go", "page": {"size": 5}}`,
	}
	type call struct {
		Args json.RawMessage `json:"args"`
		Sees Search          `json:"function_sees"`
	}
	golden := struct {
		Schema json.RawMessage `json:"schema"`
		Calls  []call          `json:"calls"`
	}{Schema: tool.Info().InputSchema}
	for _, args := range calls {
		seen = Search{}
		if _, err := tool.Call(context.Background(), json.RawMessage(args)); err != nil {
			t.Fatalf("Call(%s): %v", args, err)
		}
		golden.Calls = append(golden.Calls, call{json.RawMessage(args), seen})
	}
	got, err := json.MarshalIndent(golden, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "defaults.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./typed -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s (run go test ./typed -update and review the diff)\n got:\n%s", path, got)
	}

	// The same facts, spelled out, so that an -update cannot bless a
	// regression.
	seen = Search{}
	tool.Call(context.Background(), json.RawMessage(`{"query": "go"}`))
	if seen.Limit != 10 || seen.Ratio != 0.5 || !seen.Exact || seen.Lang != "en" || strings.Join(seen.Fields, ",") != "title,body" ||
		seen.Max == nil || *seen.Max != 100 || !seen.Verbose || seen.Page.Size != 0 {
		t.Errorf("with only query given the function saw %+v, want every default (and page left out)", seen)
	}
	seen = Search{}
	tool.Call(context.Background(), json.RawMessage(calls[1]))
	if seen.Limit != 3 || seen.Exact || seen.Lang != "" || len(seen.Fields) != 0 || seen.Max != nil || seen.Verbose {
		t.Errorf("with every property given the function saw %+v, want the given values (false, \"\", [], null) kept", seen)
	}
	seen = Search{}
	tool.Call(context.Background(), json.RawMessage(`{"query": "go", "page": {}}`))
	if seen.Page.Size != 20 || seen.Page.Sort != "asc" {
		t.Errorf("with page {} the function saw page %+v, want {20 asc}", seen.Page)
	}
}

func TestDefaultsRefused(t *testing.T) {
	type badType struct {
		N int `json:"n,omitempty" jsonschema:"default=many"`
	}
	if _, err := typed.New("bad", "d", func(context.Context, badType) (string, error) { return "", nil }); err == nil || !strings.Contains(err.Error(), "default of n does not fit") {
		t.Errorf("New with default=many on an int: err = %v, want one naming n", err)
	}
	type dup struct {
		N int `json:"n,omitempty" jsonschema:"default=1"`
	}
	tool := typed.MustNew("dup", "d", func(context.Context, dup) (string, error) { return "", nil })
	if _, err := tool.Call(context.Background(), json.RawMessage(`{"x": 1, "x": 2}`)); err == nil {
		t.Error("a repeated member name was accepted when defaults apply")
	}
}

// boolSchema publishes properties whose schemas are true and false, as a
// hand-written schema may.
type boolSchema struct {
	Any json.RawMessage `json:"any,omitempty"`
}

func (boolSchema) JSONSchema() *jsonschema.Schema {
	p := jsonschema.NewProperties()
	p.Set("any", jsonschema.TrueSchema)
	p.Set("none", jsonschema.FalseSchema)
	return &jsonschema.Schema{Type: "object", Properties: p}
}

func TestDefaultsBooleanSchemas(t *testing.T) {
	tool, err := typed.New("b", "d", func(_ context.Context, in boolSchema) (string, error) { return string(in.Any), nil })
	if err != nil {
		t.Fatalf("New with boolean property schemas: %v", err)
	}
	if res, err := tool.Call(context.Background(), json.RawMessage(`{"any": 1}`)); err != nil || res.Text != "1" {
		t.Errorf("Call = %q, %v; want 1", res.Text, err)
	}
}

// Line has defaults; Order holds it inside arrays and maps.
type Line struct {
	SKU  string `json:"sku"`
	Qty  int    `json:"qty,omitempty" jsonschema:"default=1"`
	Unit string `json:"unit,omitempty" jsonschema:"default=pcs"`
}

type Order struct {
	Lines   []Line            `json:"lines"`
	ByName  map[string]Line   `json:"by_name,omitempty"`
	ByIndex map[int]Line      `json:"by_index,omitempty"`
	Groups  [][]Line          `json:"groups,omitempty"`
	Ptrs    []*Line           `json:"ptrs,omitempty"`
	Nested  map[string][]Line `json:"nested,omitempty"`
	Fixed   [2]Line           `json:"fixed,omitzero"`
	Inner   struct {
		Lines []Line `json:"lines"`
	} `json:"inner,omitzero"`
}

// TestDefaultsInsideArraysAndMaps: the defaults published inside items
// and additionalProperties (and patternProperties, for integer keys) are
// applied to each element or value that leaves the property out, at any
// nesting; given values, 0 and null included, are kept.
func TestDefaultsInsideArraysAndMaps(t *testing.T) {
	args := json.RawMessage(`{
		"lines": [{"sku": "a"}, {"sku": "b", "qty": 3, "unit": "kg"}],
		"by_name": {"x": {"sku": "c"}},
		"by_index": {"7": {"sku": "d", "qty": 2}},
		"groups": [[{"sku": "e"}], []],
		"ptrs": [{"sku": "f", "unit": ""}],
		"nested": {"k": [{"sku": "g"}]},
		"fixed": [{"sku": "h"}, {"sku": "i", "qty": 0}],
		"inner": {"lines": [{"sku": "j"}]}
	}`)
	l := func(sku string, qty int, unit string) Line { return Line{sku, qty, unit} }
	want := Order{
		Lines:   []Line{l("a", 1, "pcs"), l("b", 3, "kg")},
		ByName:  map[string]Line{"x": l("c", 1, "pcs")},
		ByIndex: map[int]Line{7: l("d", 2, "pcs")},
		Groups:  [][]Line{{l("e", 1, "pcs")}, {}},
		Ptrs:    []*Line{{"f", 1, ""}},
		Nested:  map[string][]Line{"k": {l("g", 1, "pcs")}},
		Fixed:   [2]Line{l("h", 1, "pcs"), l("i", 0, "pcs")},
	}
	want.Inner.Lines = []Line{l("j", 1, "pcs")}
	for _, strict := range []bool{false, true} {
		var opts []typed.Option
		if strict {
			opts = append(opts, typed.Strict())
		}
		var seen Order
		tool, err := typed.New("order", "d", func(_ context.Context, in Order) (string, error) {
			seen = in
			return "ok", nil
		}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.MustCompile(tool.Info().InputSchema).Validate(args); err != nil {
			t.Fatalf("strict %v: Validate = %v; the case needs arguments the schema accepts", strict, err)
		}
		if _, err := tool.Call(context.Background(), args); err != nil {
			t.Fatalf("strict %v: Call = %v", strict, err)
		}
		if !reflect.DeepEqual(seen, want) {
			got, _ := json.Marshal(seen)
			exp, _ := json.Marshal(want)
			t.Errorf("strict %v: the function saw\n %s\nwant\n %s", strict, got, exp)
		}
		// null is no object to fill (the schema refuses it; a direct
		// caller gets it decoded as such).
		seen = Order{}
		if _, err := tool.Call(context.Background(), json.RawMessage(`{"lines":[],"ptrs":[null]}`)); err != nil || len(seen.Ptrs) != 1 || seen.Ptrs[0] != nil {
			t.Errorf("strict %v: Call with a null element = %v, the function saw ptrs %v; want [nil]", strict, err, seen.Ptrs)
		}
		if _, err := tool.Call(context.Background(), json.RawMessage(`{"lines":[{"sku":"a","sku":"b"}]}`)); err == nil {
			t.Errorf("strict %v: a repeated member name inside an element was accepted", strict)
		}
	}
}

// TestDefaultsInsideArraysRefused: the checks New makes of the defaults it
// applies cover those inside arrays and maps too.
func TestDefaultsInsideArraysRefused(t *testing.T) {
	type notInt struct {
		N int `json:"n,omitempty" jsonschema:"default=many"`
	}
	if _, err := typed.New("bad", "d", func(context.Context, struct {
		Items []notInt `json:"items"`
	}) (string, error) {
		return "", nil
	}); err == nil || !strings.Contains(err.Error(), "default of items[].n does not fit") {
		t.Errorf("New with default=many on an int in an element: err = %v, want one naming items[].n", err)
	}
	type tooBig struct {
		N uint8 `json:"n,omitempty" jsonschema:"default=300"`
	}
	if _, err := typed.New("bad", "d", func(context.Context, struct {
		ByName map[string]tooBig `json:"by_name"`
	}) (string, error) {
		return "", nil
	}); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("New with default=300 on a uint8 in a map value: err = %v, want it refused", err)
	}
}

// wideLine has a long default, so each element that leaves it out grows
// the arguments by about 80 bytes.
type wideLine struct {
	Note string `json:"note,omitempty" jsonschema:"default=0123456789012345678901234567890123456789012345678901234567890123456789"`
}

// TestDefaultsGrowthBounded: the defaults of elements multiply with the
// elements, so what they add to one call is bounded: past 4 MiB the call
// is invalid arguments, and the function does not run.
func TestDefaultsGrowthBounded(t *testing.T) {
	ran := 0
	tool := typed.MustNew("wide", "d", func(_ context.Context, in struct {
		Lines []wideLine `json:"lines"`
	}) (string, error) {
		ran = len(in.Lines)
		return "ok", nil
	})
	many := func(n int) json.RawMessage {
		return json.RawMessage(`{"lines":[` + strings.Repeat(`{},`, n-1) + `{}]}`)
	}
	if _, err := tool.Call(context.Background(), many(1000)); err != nil || ran != 1000 {
		t.Fatalf("Call with 1000 elements = %v (ran with %d), want it run", err, ran)
	}
	ran = 0
	_, err := tool.Call(context.Background(), many(100_000)) // 300 kB that would grow to 8 MB
	if e := tools.AsError(err); e == nil || e.Kind != tools.KindInvalidArguments || !strings.Contains(e.Message, "4 MiB") {
		t.Errorf("Call with 100000 elements = %v, want invalid_arguments naming the 4 MiB bound", err)
	}
	if ran != 0 {
		t.Errorf("the function ran with %d elements, want it not run", ran)
	}
}

// FuzzDefaultsInside: whatever the arguments, Call does not panic, and when
// the function runs, each element of lines that leaves qty out has the
// default 1, and each that gives it has the value given.
func FuzzDefaultsInside(f *testing.F) {
	for _, s := range []string{
		`{"lines":[{"sku":"a"},{"qty":3}]}`,
		`{"lines":[{},null,[],{"qty":null}],"by_name":{"x":{}},"by_index":{"1":{},"-1":{}}}`,
		`{"groups":[[{}],[{"qty":2}]],"nested":{"k":[{}]},"fixed":[{},{}],"inner":{"lines":[{}]}}`,
		`{"lines":[{"qty":1,"qty":2}]}`,
		`{"lines":{"qty":1}}`,
	} {
		f.Add(s)
	}
	var seen *Order
	tool := typed.MustNew("order", "d", func(_ context.Context, in Order) (string, error) {
		seen = &in
		return "ok", nil
	})
	f.Fuzz(func(t *testing.T, args string) {
		seen = nil
		if _, err := tool.Call(context.Background(), json.RawMessage(args)); err != nil || seen == nil {
			return
		}
		var m struct {
			Lines []map[string]json.RawMessage `json:"lines"`
		}
		if json.Unmarshal([]byte(args), &m) != nil || len(m.Lines) != len(seen.Lines) {
			return
		}
		for i, l := range m.Lines {
			want := 1
			if raw, ok := l["qty"]; ok {
				want = 0
				_ = json.Unmarshal(raw, &want)
			}
			if l != nil && seen.Lines[i].Qty != want {
				t.Errorf("Call(%s): lines[%d].qty = %d, want %d", args, i, seen.Lines[i].Qty, want)
			}
		}
	})
}
