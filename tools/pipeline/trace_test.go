package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
)

func TestStepSpans(t *testing.T) {
	seen := map[string]trace.SpanContext{}
	step := func(name string, fail bool) tools.Tool {
		return tools.New(tools.Info{Name: name, Description: "d"}, func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			seen[name] = trace.SpanContextFromContext(ctx)
			if fail {
				return tools.Result{}, tools.Failed("{}")
			}
			return tools.Text(`{"ok":true}`), nil
		})
	}
	p, err := pipeline.New(pipeline.Config{Name: "pipe", Description: "d", OnError: pipeline.Continue,
		Steps: []pipeline.Step{{Tool: step("first", true)}, {Tool: step("second", false)}}})
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, root := tp.Tracer("test").Start(context.Background(), "tools/call pipe")
	if _, err := p.Call(ctx, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	root.End()

	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want 3", len(spans))
	}
	for i, want := range []string{"first", "second"} {
		s := spans[i]
		if s.Name != "execute_tool "+want || s.Parent.SpanID() != root.SpanContext().SpanID() {
			t.Errorf("span %d: got %q under %s, want %q under the pipeline's span", i, s.Name, s.Parent.SpanID(), "execute_tool "+want)
		}
		if seen[want].SpanID() != s.SpanContext.SpanID() {
			t.Errorf("step %s ran under span %s, want its own %s", want, seen[want].SpanID(), s.SpanContext.SpanID())
		}
	}
	if got := spans[0].Status.Code.String(); got != "Error" {
		t.Errorf("failed step's status: got %s, want Error", got)
	}
	if got := spans[1].Status.Code.String(); got != "Unset" {
		t.Errorf("good step's status: got %s, want Unset", got)
	}

	// Untraced: the steps see no span.
	clear(seen)
	if _, err := p.Call(context.Background(), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if seen["first"].IsValid() || len(exp.GetSpans()) != 3 {
		t.Errorf("an untraced call made spans")
	}
}
