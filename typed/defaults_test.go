package typed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"

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
