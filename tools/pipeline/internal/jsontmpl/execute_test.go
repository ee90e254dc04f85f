package jsontmpl_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl"
)

// TestExecute states the semantics the differential test checks against
// text/template, in literal outputs and errors.
func TestExecute(t *testing.T) {
	const doc = `{"name": "apple", "price": 1.25, "qty": 3, "tags": ["fruit", "red"],
		"stock": {"b": 2, "a": 1}, "none": null, "ratio": 0.5}`
	structured, err := decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	data := jsontmpl.Data{Text: "step text", Structured: structured}
	tests := []struct {
		name, text, want, wantErr string
	}{
		{"text", `{{.Text}}`, "step text", ""},
		{"key", `{{.Structured.name}}`, "apple", ""},
		{"number as decoded", `{{.Structured.price}}`, "1.25", ""},
		{"missing key", `{{.Structured.nope}}`, "", `template: adapter:1:13: executing "adapter" at <.Structured.nope>: map has no entry for key "nope"`},
		{"unknown field", `{{.Nope}}`, "", `template: adapter:1:2: executing "adapter" at <.Nope>: can't evaluate field Nope in type struct { Text string; Structured interface {} }`},
		{"null prints no value", `{{.Structured.none}}`, "<no value>", ""},
		{"print of null", `{{print .Structured.none}}`, "<nil>", ""},
		{"field of null", `{{.Structured.none.x}}`, "", `template: adapter:1:13: executing "adapter" at <.Structured.none.x>: nil pointer evaluating interface {}.x`},
		{"Float64", `{{printf "%.1f" .Structured.price.Float64}}`, "1.2", ""},
		{"Int64", `{{.Structured.qty.Int64}}`, "3", ""},
		{"Int64 of a fraction", `{{.Structured.price.Int64}}`, "", `template: adapter:1:13: executing "adapter" at <.Structured.price.Int64>: error calling Int64: strconv.ParseInt: parsing "1.25": invalid syntax`},
		{"number against int", `{{eq .Structured.qty 3}}`, "", `template: adapter:1:2: executing "adapter" at <eq .Structured.qty 3>: error calling eq: incompatible types for comparison: json.Number and int`},
		{"number against string", `{{eq .Structured.qty "3"}}`, "true", ""},
		{"Int64 against int", `{{if gt .Structured.qty.Int64 2}}many{{end}}`, "many", ""},
		{"range map in key order", `{{range $k, $v := .Structured.stock}}{{$k}}={{$v}} {{end}}`, "a=1 b=2 ", ""},
		{"range with break", `{{range $i, $t := .Structured.tags}}{{if $i}}{{break}}{{end}}{{$t}}{{end}}`, "fruit", ""},
		{"range over int", `{{range 3}}{{.}}{{end}}`, "012", ""},
		{"range else", `{{range .Structured.none}}x{{else}}empty{{end}}`, "empty", ""},
		{"with declaration", `{{with $n := .Structured.name}}{{$n}}/{{.}}{{end}}`, "apple/apple", ""},
		{"assignment", `{{$x := 1}}{{with .Structured.name}}{{$x = .}}{{end}}{{$x}}`, "apple", ""},
		{"index nested", `{{index .Structured "tags" 1}}`, "red", ""},
		{"index out of range", `{{index .Structured.tags 5}}`, "", `template: adapter:1:2: executing "adapter" at <index .Structured.tags 5>: error calling index: index out of range: 5`},
		{"slice of string", `{{slice .Structured.name 1 3}}`, "pp", ""},
		{"len of nil", `{{len .Structured.none}}`, "", `template: adapter:1:2: executing "adapter" at <len .Structured.none>: error calling len: len of nil pointer`},
		{"printf of map", `{{printf "%v" .Structured.stock}}`, "map[a:1 b:2]", ""},
		{"and short-circuits", `{{and .Structured.none .Structured.nope}}`, "<no value>", ""},
		{"or", `{{or .Structured.none "default"}}`, "default", ""},
		{"templates", `{{define "tag"}}#{{.}}{{end}}{{range .Structured.tags}}{{template "tag" .}}{{end}}`, "#fruit#red", ""},
		{"block", `{{block "b" .Structured.name}}[{{.}}]{{end}}`, "[apple]", ""},
		{"trim markers", "a \n {{- .Structured.qty -}} \n b", "a3b", ""},
		{"escapers", `{{html "<&>"}} {{js "'"}} {{urlquery "a b"}}`, `&lt;&amp;&gt; \' a+b`, ""},
		{"call", `{{call .Structured.name}}`, "", `template: adapter:1:2: executing "adapter" at <call .Structured.name>: error calling call: non-function .Structured.name of type string`},
		{"error in a named template", `{{define "t"}}{{.x}}{{end}}{{template "t" 1}}`, "", `template: adapter:1:16: executing "t" at <.x>: can't evaluate field x in type int`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := jsontmpl.Parse("adapter", tt.text)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			err = tmpl.Execute(t.Context(), &b, data)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v; want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v; want none", err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestParseError(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{`{{.Text`, `template: adapter:1: unclosed action`},
		{`{{foo}}`, `template: adapter:1: function "foo" not defined`},
		{"\n{{if}}", `template: adapter:2: missing value for if`},
	} {
		_, err := jsontmpl.Parse("adapter", tt.text)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q): got error %v; want %s", tt.text, err, tt.want)
		}
	}
}

func TestExecuteUnsupportedData(t *testing.T) {
	tmpl, err := jsontmpl.Parse("adapter", `{{.Text}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		map[string]string{"a": "b"},
		[]any{1},
		map[string]any{"a": []any{struct{}{}}},
	} {
		var b bytes.Buffer
		err := tmpl.Execute(t.Context(), &b, jsontmpl.Data{Text: "x", Structured: v})
		if err == nil || !strings.Contains(err.Error(), "unsupported type") {
			t.Errorf("Execute with %#v: got error %v; want one about an unsupported type", v, err)
		}
		if b.Len() != 0 {
			t.Errorf("Execute with %#v: got output %q; want none", v, b.String())
		}
	}
	// float64, as json decodes numbers without UseNumber, is supported.
	var b bytes.Buffer
	err = tmpl.Execute(t.Context(), &b, jsontmpl.Data{Text: "x", Structured: map[string]any{"f": 1.5}})
	if err != nil {
		t.Errorf("Execute with a float64: got error %v; want none", err)
	}
}

// errWriter fails every write.
type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

func TestExecuteWriteError(t *testing.T) {
	tmpl, err := jsontmpl.Parse("adapter", `x{{.Text}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := errors.New("disk full")
	if err := tmpl.Execute(t.Context(), errWriter{want}, jsontmpl.Data{}); err != want {
		t.Errorf("got error %v; want the writer's own error %v", err, want)
	}
}

// TestExecuteConcurrently runs one template from many goroutines (under
// -race, a shared state would show).
func TestExecuteConcurrently(t *testing.T) {
	tmpl, err := jsontmpl.Parse("adapter", `{{range $i, $v := .Structured}}{{$x := $v}}{{$i}}:{{$x}};{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := json.Number(strings.Repeat("1", g+1))
			var b bytes.Buffer
			if err := tmpl.Execute(t.Context(), &b, jsontmpl.Data{Structured: []any{n, n}}); err != nil {
				t.Error(err)
				return
			}
			if want := "0:" + string(n) + ";1:" + string(n) + ";"; b.String() != want {
				t.Errorf("got %q; want %q", b.String(), want)
			}
		}()
	}
	wg.Wait()
}
