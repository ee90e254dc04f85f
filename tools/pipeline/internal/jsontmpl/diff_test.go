package jsontmpl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/template"

	"github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl"
)

// adapterData is the data text/template executed in the pipeline adapter.
type adapterData = struct {
	Text       string
	Structured any
}

// doc is one data document of the differential tests.
type doc struct {
	name string
	data jsontmpl.Data
}

// decode decodes raw as the pipeline adapter does: JSON with numbers as
// json.Number.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// loadDocs returns the documents in testdata/docs, each as the step's text
// and structured output, and one step with text only.
func loadDocs(t testing.TB) []doc {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "docs", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no documents in testdata/docs: %v", err)
	}
	docs := []doc{{name: "text-only", data: jsontmpl.Data{Text: `plain <text> & 'quotes' 100%`}}}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		v, err := decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		docs = append(docs, doc{name: filepath.Base(p), data: jsontmpl.Data{Text: strings.TrimSpace(string(raw)), Structured: v}})
	}
	return docs
}

// outcome is what a template engine did with a template and a document.
type outcome struct {
	parseErr error
	out      string
	err      error
}

func (o outcome) String() string {
	switch {
	case o.parseErr != nil:
		return fmt.Sprintf("parse error %q", o.parseErr)
	case o.err != nil:
		return fmt.Sprintf("error %q (output %q)", o.err, o.out)
	}
	return fmt.Sprintf("output %q", o.out)
}

// runStd runs text as text/template ran it in the pipeline adapter.
func runStd(text string, d jsontmpl.Data) outcome {
	t, err := template.New("adapter").Option("missingkey=error").Parse(text)
	if err != nil {
		return outcome{parseErr: err}
	}
	var b bytes.Buffer
	err = t.Execute(&b, adapterData(d))
	return outcome{out: b.String(), err: err}
}

// runOurs runs text with jsontmpl.
func runOurs(text string, d jsontmpl.Data) outcome {
	t, err := jsontmpl.Parse("adapter", text)
	if err != nil {
		return outcome{parseErr: err}
	}
	var b bytes.Buffer
	err = t.Execute(context.Background(), &b, d)
	return outcome{out: b.String(), err: err}
}

// differ returns how ours differs from std, or "": the same parse error,
// or the same output, or both an execution error with the same text.
func differ(std, ours outcome) string {
	switch {
	case (std.parseErr == nil) != (ours.parseErr == nil):
		return fmt.Sprintf("text/template: %v; jsontmpl: %v", std, ours)
	case std.parseErr != nil:
		if std.parseErr.Error() != ours.parseErr.Error() {
			return fmt.Sprintf("parse errors differ: text/template: %v; jsontmpl: %v", std, ours)
		}
		return ""
	case (std.err == nil) != (ours.err == nil):
		return fmt.Sprintf("text/template: %v; jsontmpl: %v", std, ours)
	case std.err == nil && std.out != ours.out:
		return fmt.Sprintf("outputs differ: text/template: %v; jsontmpl: %v", std, ours)
	case std.err != nil && std.err.Error() != ours.err.Error():
		return fmt.Sprintf("errors differ: text/template: %v; jsontmpl: %v", std, ours)
	}
	return ""
}

// TestDifferential runs every template of differentialCases on every
// document with text/template and with jsontmpl: where text/template
// succeeds, jsontmpl gives the same output; where it fails, jsontmpl fails
// with the same message.
func TestDifferential(t *testing.T) {
	docs := loadDocs(t)
	seen := map[string]bool{}
	var ok, failed int
	for _, c := range differentialCases {
		if seen[c.name] {
			t.Fatalf("two cases named %q", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			reported := 0
			for _, d := range docs {
				std, ours := runStd(c.text, d.data), runOurs(c.text, d.data)
				if msg := differ(std, ours); msg != "" && reported < 3 {
					t.Errorf("%s on %s: %s", c.text, d.name, msg)
					reported++
				}
				if std.parseErr == nil && std.err == nil {
					ok++
				} else {
					failed++
				}
			}
		})
	}
	// The table exercises both sides: outputs and errors.
	t.Logf("%d template×document pairs succeeded, %d failed", ok, failed)
	if total := ok + failed; ok < total/4 || failed < total/4 {
		t.Errorf("got %d successes and %d failures; want at least a quarter of each", ok, failed)
	}
}

// TestDifferentialCoversDocs checks that each document makes a difference:
// some template gives it an output no other document gets.
func TestDifferentialCoversDocs(t *testing.T) {
	docs := loadDocs(t)
	outs := map[string]map[string]bool{} // output → documents
	for _, c := range differentialCases {
		for _, d := range docs {
			o := runOurs(c.text, d.data)
			key := c.name + "\x00" + o.String()
			if outs[key] == nil {
				outs[key] = map[string]bool{}
			}
			outs[key][d.name] = true
		}
	}
	distinct := map[string]bool{}
	for _, ds := range outs {
		if len(ds) == 1 {
			for n := range ds {
				distinct[n] = true
			}
		}
	}
	var missing []string
	for _, d := range docs {
		if !distinct[d.name] {
			missing = append(missing, d.name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("documents %v get no outcome of their own; want each to test something", missing)
	}
}
