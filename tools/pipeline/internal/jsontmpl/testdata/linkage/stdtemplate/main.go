// Command stdtemplate renders a template with text/template, for
// TestLinkage: the control, whose binary holds the symbols the other must
// not.
package main

import (
	"os"
	"text/template"
)

func main() {
	t := template.Must(template.New("linkage").Parse(os.Args[1]))
	if err := t.Execute(os.Stdout, os.Args[2]); err != nil {
		panic(err)
	}
}
