package toolstest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

type searchIn struct {
	Query string    `json:"query" jsonschema:"minLength=2"`
	Limit int       `json:"limit,omitempty" jsonschema:"minimum=1,maximum=50"`
	Since time.Time `json:"since"`
	Kinds []string  `json:"kinds" jsonschema:"enum=file,enum=dir"`
	Exact bool      `json:"exact,omitempty"`
}

// waitForCtx is a well-behaved slow tool: it waits for its context.
func waitForCtx(ctx context.Context, in searchIn) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func TestCheckGoodTools(t *testing.T) {
	for _, tool := range []tools.Tool{
		typed.MustNew("search", "Search the index.", waitForCtx, typed.WithAnnotations(tools.Annotations{ReadOnly: true})),
		typed.MustNew("search_strict", "Search the index.", waitForCtx, typed.Strict()),
		typed.MustNew("no_args", "Say hi.", func(ctx context.Context, in struct{}) (string, error) { return "hi", nil }),
		tools.NewPlain(tools.Info{Name: "echo", Description: "Repeat the input."},
			func(ctx context.Context, input string) (tools.Result, error) { return tools.Text(input), nil }),
	} {
		t.Run(tool.Info().Name, func(t *testing.T) { Check(t, tool) })
	}
}

func TestRunFindsBrokenTools(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	plain := func(name, desc string, a tools.Annotations) tools.Tool {
		return tools.NewPlain(tools.Info{Name: name, Description: desc, Annotations: a},
			func(ctx context.Context, input string) (tools.Result, error) { return tools.Text(input), nil })
	}
	raw := func(schema string, fn tools.Func) tools.Tool {
		if fn == nil {
			fn = func(ctx context.Context, args json.RawMessage) (tools.Result, error) { return tools.Result{}, nil }
		}
		return tools.New(tools.Info{Name: "raw", Description: "d", InputSchema: json.RawMessage(schema)}, fn)
	}
	tests := []struct {
		name string
		tool tools.Tool
		want string
	}{
		{name: "bad name", tool: plain("bad.name", "d", tools.Annotations{}), want: "name may hold only"},
		{name: "no description", tool: plain("p", " ", tools.Annotations{}), want: "description is empty"},
		{name: "contradicting annotations", tool: plain("p", "d", tools.Annotations{ReadOnly: true, Destructive: true}), want: "both read-only and destructive"},
		{name: "array schema", tool: raw(`{"type":"array"}`, nil), want: `"type" is array, want "object"`},
		{name: "schema not JSON", tool: raw(`{`, nil), want: "input schema is not a JSON object"},
		{name: "schema does not compile", tool: raw(`{"type":"object","properties":{"a":{"type":"text"}}}`, nil), want: "input schema does not compile"},
		{name: "panics on wrong types", tool: raw(`{"type":"object","properties":{"n":{"type":"integer"}}}`,
			func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
				var in struct{ N int }
				if json.Unmarshal(args, &in) != nil {
					panic("unchecked decode")
				}
				return tools.Result{}, nil
			}), want: "bypassing the validator panicked"},
		{name: "panics on null arguments", tool: raw(`{"type":"object","properties":{"n":{"type":"integer"}}}`,
			func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
				var in *struct{ N int }
				if err := json.Unmarshal(args, &in); err != nil {
					return tools.Result{}, tools.InvalidArgs("%v", err)
				}
				return tools.Text(fmt.Sprint(in.N)), nil // nil for null
			}), want: "Call(null) bypassing the validator panicked"},
		{name: "ignores cancellation", tool: raw(`{"type":"object","properties":{}}`,
			func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
				<-release
				return tools.Result{}, nil
			}), want: "with a cancelled context did not return"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found := run(tt.tool, 50*time.Millisecond)
			if !strings.Contains(strings.Join(found, "\n"), tt.want) {
				t.Errorf("run found %q, want a finding containing %q", found, tt.want)
			}
		})
	}
}

func TestSample(t *testing.T) {
	tool := typed.MustNew("search", "Search.", waitForCtx)
	var root map[string]any
	if err := json.Unmarshal(tool.Info().InputSchema, &root); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(sample(root))
	if want := `{"kinds":[],"query":"aa","since":"2024-01-02T15:04:05Z"}`; string(got) != want {
		t.Errorf("sample = %s, want %s", got, want)
	}
}
