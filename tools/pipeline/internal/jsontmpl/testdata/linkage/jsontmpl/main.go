// Command jsontmpl renders a template with jsontmpl, for TestLinkage: its
// binary must not hold text/template's executor nor reflect's method
// lookups.
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl"
)

func main() {
	t, err := jsontmpl.Parse("linkage", os.Args[1])
	if err != nil {
		panic(err)
	}
	var v any
	if err := json.Unmarshal([]byte(os.Args[2]), &v); err != nil {
		panic(err)
	}
	if err := t.Execute(context.Background(), os.Stdout, jsontmpl.Data{Text: os.Args[2], Structured: v}); err != nil {
		panic(err)
	}
}
