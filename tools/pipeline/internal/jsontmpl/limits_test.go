package jsontmpl_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl"
)

// nested is n arrays, each the only element of the one around it.
func nested(t *testing.T, n int) any {
	t.Helper()
	v, err := decode([]byte(strings.Repeat("[", n) + strings.Repeat("]", n)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLimits(t *testing.T) {
	// recurse calls itself once per level of nesting of its data.
	const recurse = `{{define "r"}}{{range .}}{{template "r" .}}{{end}}{{end}}{{template "r" .Structured}}`
	tests := []struct {
		name    string
		text    string
		data    jsontmpl.Data
		limit   string // "" when the execution succeeds
		wantErr string // the end of the error's text
	}{
		{
			name:    "output",
			text:    `{{range 2000}}{{printf "%01000d" 0}}{{end}}`,
			limit:   "output",
			wantErr: "output exceeds 1048576 bytes",
		},
		{
			name: "output just within",
			text: `{{range 1024}}{{printf "%01024d" 0}}{{end}}`,
		},
		{
			name:    "output of text",
			text:    `{{range 2000}}` + strings.Repeat("x", 1000) + `{{end}}`,
			limit:   "output",
			wantErr: "output exceeds 1048576 bytes",
		},
		{
			name:    "steps of an empty range",
			text:    `{{range 1000000000}}{{end}}`,
			limit:   "steps",
			wantErr: "exceeded maximum of 4194304 steps",
		},
		{
			name:    "steps of nested ranges",
			text:    `{{range 3000}}{{range 3000}}{{end}}{{end}}`,
			limit:   "steps",
			wantErr: "exceeded maximum of 4194304 steps",
		},
		{
			name:    "steps of templates calling each other twice",
			text:    `{{define "a"}}{{template "b"}}{{template "b"}}{{end}}{{define "b"}}{{template "c"}}{{template "c"}}{{end}}{{define "c"}}{{range 100000}}{{end}}{{end}}{{range 100}}{{template "a"}}{{end}}`,
			limit:   "steps",
			wantErr: "exceeded maximum of 4194304 steps",
		},
		{
			name:    "made bytes of a doubling string",
			text:    `{{$s := "0123456789abcdef"}}{{range 40}}{{$s = print $s $s}}{{end}}{{len $s}}`,
			limit:   "made bytes",
			wantErr: "functions made more than 16777216 bytes of strings",
		},
		{
			name: "made bytes within",
			text: `{{$s := "0123456789abcdef"}}{{range 19}}{{$s = print $s $s}}{{end}}{{len $s}}`,
		},
		{
			name:    "depth of endless recursion",
			text:    `{{define "x"}}{{template "x"}}{{end}}{{template "x"}}`,
			limit:   "depth",
			wantErr: "exceeded maximum nesting depth (10000)",
		},
		{
			// 4 frames a level: the range, its list, the call, its list.
			name: "depth of recursion over data 2000 deep",
			text: recurse,
			data: jsontmpl.Data{Structured: nested(t, 2000)},
		},
		{
			name:    "depth of recursion over data 3000 deep",
			text:    recurse,
			data:    jsontmpl.Data{Structured: nested(t, 3000)},
			limit:   "depth",
			wantErr: "exceeded maximum nesting depth (10000)",
		},
		{
			name:    "depth of ifs around a recursive call",
			text:    `{{define "r"}}` + strings.Repeat("{{if 1}}", 100) + `{{template "r"}}` + strings.Repeat("{{end}}", 100) + `{{end}}{{template "r"}}`,
			limit:   "depth",
			wantErr: "exceeded maximum nesting depth (10000)",
		},
		{
			// Within MaxTemplateBytes, nesting in one template stays
			// within MaxDepth: here 9000 of the parser's 10000 levels of
			// parentheses.
			name: "depth of nested parentheses",
			text: "{{" + strings.Repeat("(", 9000) + "1" + strings.Repeat(")", 9000) + "}}",
		},
		{
			name: "depth of nested ifs",
			text: strings.Repeat("{{if 1}}", 4000) + "x" + strings.Repeat("{{end}}", 4000),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := jsontmpl.Parse("adapter", tt.text)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = tmpl.Execute(t.Context(), &out, tt.data)
			if out.Len() > jsontmpl.MaxOutput {
				t.Errorf("got %d bytes of output; want at most %d", out.Len(), jsontmpl.MaxOutput)
			}
			if tt.limit == "" {
				if err != nil {
					t.Fatalf("got error %v; want none", err)
				}
				return
			}
			le, ok := errors.AsType[*jsontmpl.LimitError](err)
			if !ok {
				t.Fatalf("got error %v; want a *LimitError", err)
			}
			if le.Limit != tt.limit {
				t.Errorf("got limit %q; want %q", le.Limit, tt.limit)
			}
			if !strings.HasPrefix(err.Error(), `template: adapter:`) || !strings.HasSuffix(err.Error(), tt.wantErr) {
				t.Errorf("got error %q; want template: adapter:... ending in %q", err, tt.wantErr)
			}
		})
	}
}
