package jsontmpl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/template/parse"
)

// Data is what a template executes on: {{.Text}} and {{.Structured}}.
// Structured holds plain JSON values: nil, bool, string, json.Number (as
// json.Decoder.UseNumber decodes numbers), float64 (as it decodes them
// otherwise), []any and map[string]any, nested. Execute refuses any other
// type before it starts.
type Data struct {
	Text       string // the step's text
	Structured any    // the step's structured output, or nil
}

// Template is a parsed template and the templates it defines ({{define}},
// {{block}}). It is not changed by Execute, which may be called
// concurrently.
type Template struct {
	name  string
	trees map[string]*parse.Tree
}

// Parse parses text as a template named name, with text/template's default
// delimiters and builtin functions. Its errors are those of
// template.New(name).Parse(text), like
// "template: adapter:1: function "foo" not defined". It refuses a text
// longer than MaxTemplateBytes.
func Parse(name, text string) (*Template, error) {
	if len(text) > MaxTemplateBytes {
		return nil, fmt.Errorf("template: %s: the text is %d bytes long; the most allowed is %d", name, len(text), MaxTemplateBytes)
	}
	funcs := make(map[string]any, len(builtinNames))
	for _, n := range builtinNames {
		funcs[n] = true // the parser only asks whether a name is defined
	}
	trees, err := parse.Parse(name, text, "", "", funcs)
	if err != nil {
		return nil, err
	}
	return &Template{name: name, trees: trees}, nil
}

// Execute writes the template applied to data to w. Its semantics are
// text/template's Execute with Option("missingkey=error") on a value of type
// struct{ Text string; Structured any }. An error stops the execution; part
// of the output may have been written. An error writing to w is returned as
// it is; every other error reads like text/template's. When a limit is
// reached it wraps a *LimitError, and when ctx is done (checked every
// thousand steps or so) it wraps ctx.Err().
func (t *Template) Execute(ctx context.Context, w io.Writer, data Data) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkData(data.Structured); err != nil {
		return err
	}
	tree := t.trees[t.name]
	s := &state{
		t:    t,
		name: t.name,
		tree: tree,
		w:    w,
		b:    &budget{ctx: ctx, nextCheck: ctxCheckSteps},
		vars: []variable{{"$", value{x: root(data)}}},
	}
	defer s.recover(&err)
	if tree == nil || tree.Root == nil {
		s.errorf("%q is an incomplete or empty template", t.name)
	}
	s.walk(s.vars[0].value, tree.Root)
	return nil
}

// execError carries an execution error up the stack in a panic, as
// text/template does; writeError carries an error of the writer.
type (
	execError  struct{ err error }
	writeError struct{ err error }
)

// recover turns the panics of errorf and writeError into Execute's error.
// Any other panic is a bug and goes on.
func (s *state) recover(errp *error) {
	switch e := recover().(type) {
	case nil:
	case execError:
		*errp = e.err
	case writeError:
		*errp = e.err
	default:
		panic(e)
	}
}

// errUnsupported is the error of checkData.
var errUnsupported = errors.New("jsontmpl: unsupported type in data")

// checkData reports whether v holds only the types Data allows.
func checkData(v any) error {
	stack := []any{v}
	for len(stack) > 0 {
		v, stack = stack[len(stack)-1], stack[:len(stack)-1]
		switch v := v.(type) {
		case nil, bool, string, jsonNumber, float64:
		case []any:
			stack = append(stack, v...)
		case map[string]any:
			for _, e := range v {
				stack = append(stack, e)
			}
		default:
			return fmt.Errorf("%w: %T", errUnsupported, v)
		}
	}
	return nil
}
