package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/theory/jsonpath"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl"
)

// JSONPath returns an adapter that selects expr (RFC 9535 JSONPath) from a
// step's structured output (or its text, when that is JSON). One scalar
// match becomes the next step's text; one object match its structured
// input; several matches a JSON array as text. No match is an error, and
// so is an array longer than twice the step's output or 1 MiB
// (jsontmpl.MaxOutput), whichever is more: matches may nest ($..name on
// data nested a thousand deep selects each level's whole subtree), so the
// JSON of several can be thousands of times the output they come from.
func JSONPath(expr string) (Adapter, error) {
	p, err := jsonpath.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("jsonpath %q: %w", expr, err)
	}
	return func(_ context.Context, r tools.Result) (tools.Result, error) {
		doc, size, err := structuredValue(r)
		if err != nil {
			return tools.Result{}, err
		}
		nodes := p.Select(doc)
		switch len(nodes) {
		case 0:
			return tools.Result{}, fmt.Errorf("jsonpath %q matched nothing in the step's output", expr)
		case 1:
			switch v := nodes[0].(type) {
			case string:
				return tools.Text(v), nil
			case map[string]any:
				b, _ := json.Marshal(v)
				return tools.Result{Text: string(b), Structured: v}, nil
			case json.Number:
				return tools.Text(v.String()), nil
			case float64:
				return tools.Text(strconv.FormatFloat(v, 'f', -1, 64)), nil
			default:
				b, _ := json.Marshal(v)
				return tools.Text(string(b)), nil
			}
		default:
			b, err := marshalNodes(nodes, max(jsontmpl.MaxOutput, 2*size))
			if err != nil {
				return tools.Result{}, fmt.Errorf("jsonpath %q: %w", expr, err)
			}
			return tools.Text(string(b)), nil
		}
	}, nil
}

// marshalNodes is json.Marshal of nodes as an array, or an error once it
// passes limit bytes: each node is marshalled on its own, so no more than
// limit and one node's JSON is ever made.
func marshalNodes(nodes []any, limit int) ([]byte, error) {
	b := []byte{'['}
	for i, n := range nodes {
		nb, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		if len(b)+len(nb)+1 > limit {
			return nil, fmt.Errorf("the %d matches make more than %d bytes of JSON", len(nodes), limit)
		}
		b = append(b, nb...)
	}
	return append(b, ']'), nil
}

// structuredValue is a result's structured output decoded as plain JSON
// values, or its text parsed as JSON, and the length of that JSON.
func structuredValue(r tools.Result) (any, int, error) {
	var raw []byte
	if r.Structured != nil {
		b, err := json.Marshal(r.Structured)
		if err != nil {
			return nil, 0, err
		}
		raw = b
	} else {
		raw = []byte(r.Text)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, 0, fmt.Errorf("the step's output is not structured (nor JSON text): %w", err)
	}
	return v, len(raw), nil
}

// Template returns an adapter that renders text (a text/template) with
// {{.Text}}, the step's text, and {{.Structured}}, its structured output as
// plain JSON values; the rendering is the next step's text. A missing map
// key is an error (text/template's missingkey=error). The template runs on
// jsontmpl, text/template's semantics without its executor (whose method
// lookup by name keeps every exported method in the binary), within
// jsontmpl's limits, so that no template on any data can hang or exhaust
// the server:
//   - text longer than jsontmpl.MaxTemplateBytes (64 KiB) is refused here;
//   - a rendering writes at most jsontmpl.MaxOutput bytes (1 MiB);
//   - it takes at most jsontmpl.MaxSteps steps (about 4 million, each a
//     constant amount of work, including the work that grows with the
//     data: comparing long strings, measuring values before printing
//     them);
//   - print, printf, println, html, js and urlquery make at most
//     jsontmpl.MaxMadeBytes bytes of strings in all (16 MiB), checked
//     before each call formats;
//   - at most jsontmpl.MaxDepth frames (10000: nested ifs, withs, ranges,
//     template calls, parenthesized pipelines) are active at once.
//
// Going past one is an error wrapping a *jsontmpl.LimitError. The
// rendering also stops with the adapter's ctx, with an error wrapping
// ctx.Err().
func Template(text string) (Adapter, error) {
	t, err := jsontmpl.Parse("adapter", text)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	return func(ctx context.Context, r tools.Result) (tools.Result, error) {
		data := jsontmpl.Data{Text: r.Text}
		if r.Structured != nil {
			v, _, err := structuredValue(tools.Result{Structured: r.Structured})
			if err != nil {
				return tools.Result{}, err
			}
			data.Structured = v
		}
		var b bytes.Buffer
		if err := t.Execute(ctx, &b, data); err != nil {
			return tools.Result{}, fmt.Errorf("template: %w", err)
		}
		return tools.Text(b.String()), nil
	}, nil
}
