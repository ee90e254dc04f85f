package jsonquery_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/jsonquery"
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
			r := tools.Outcome(tool.Call(context.Background(), args))
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
			_, err := jsonquery.Query(tt.path, tt.doc, tt.max)
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
			r := tools.Outcome(jsonquery.New(tt.cfg).Call(context.Background(), args))
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

func FuzzJSONQuery(f *testing.F) {
	f.Add("$.a[*]", `{"a":[1,2]}`)
	f.Add("$..x", `[{"x":1},{"y":{"x":2}}]`)
	f.Add("$[?@.p < 3]", `[{"p":1},{"p":5}]`)
	f.Add("$[", `{`)
	f.Fuzz(func(t *testing.T, path, doc string) {
		out, err := jsonquery.Query(path, doc, 1<<16)
		if err != nil {
			var te *tools.Error
			if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments {
				t.Fatalf("Query(%q, %q) error %v is not an invalid-arguments error", path, doc, err)
			}
			return
		}
		if out.Count != len(out.Matches) {
			t.Fatalf("count %d for %d matches", out.Count, len(out.Matches))
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("output does not marshal: %v", err)
		}
	})
}
