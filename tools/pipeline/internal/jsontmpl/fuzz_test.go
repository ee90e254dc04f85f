package jsontmpl_test

import (
	"errors"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl"
)

// FuzzExecute checks the differential property of TestDifferential on any
// template and document: the same parse error, or the same output, or the
// same execution error as text/template. Inputs where jsontmpl reaches one
// of its limits, or text/template panics, are skipped; a panic in jsontmpl
// is a bug. A document that is not JSON is the text of a step without
// structured output.
func FuzzExecute(f *testing.F) {
	docs := loadDocs(f)
	for _, c := range differentialCases {
		for _, d := range docs {
			f.Add(c.text, d.data.Text)
		}
	}
	f.Fuzz(func(t *testing.T, tmplText, jsonDoc string) {
		d := jsontmpl.Data{Text: jsonDoc}
		if v, err := decode([]byte(jsonDoc)); err == nil {
			d.Structured = v
		}
		ours := runOurs(tmplText, d)
		if _, ok := errors.AsType[*jsontmpl.LimitError](ours.err); ok {
			t.Skip("jsontmpl reached a limit:", ours.err)
		}
		std, ok := runStdRecovered(tmplText, d)
		if !ok {
			t.Skip("text/template panicked")
		}
		if msg := differ(std, ours); msg != "" {
			t.Errorf("%q on %q: %s", tmplText, jsonDoc, msg)
		}
	})
}

// runStdRecovered is runStd, reporting false if text/template panics.
func runStdRecovered(text string, d jsontmpl.Data) (o outcome, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return runStd(text, d), true
}
