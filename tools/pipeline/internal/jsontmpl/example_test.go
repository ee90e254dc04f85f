package jsontmpl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl"
)

// A template renders a step's structured output, decoded with numbers as
// json.Number; a missing key is an error, as with text/template's
// missingkey=error.
func ExampleTemplate_Execute() {
	t, err := jsontmpl.Parse("adapter", `{{range .Structured.items}}{{.name}}: {{printf "%.2f" .price.Float64}}
{{end}}`)
	if err != nil {
		panic(err)
	}
	dec := json.NewDecoder(strings.NewReader(`{"items": [{"name": "apple", "price": 1.5}, {"name": "pear", "price": 2}]}`))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(err)
	}
	if err := t.Execute(context.Background(), os.Stdout, jsontmpl.Data{Structured: v}); err != nil {
		panic(err)
	}

	t, _ = jsontmpl.Parse("adapter", `{{.Structured.total}}`)
	fmt.Println(t.Execute(context.Background(), os.Stdout, jsontmpl.Data{Structured: v}))
	// Output:
	// apple: 1.50
	// pear: 2.00
	// template: adapter:1:13: executing "adapter" at <.Structured.total>: map has no entry for key "total"
}

// Parse reports text/template's parse errors.
func ExampleParse() {
	_, err := jsontmpl.Parse("adapter", `{{.Structured | lower}}`)
	fmt.Println(err)
	// Output:
	// template: adapter:1: function "lower" not defined
}
