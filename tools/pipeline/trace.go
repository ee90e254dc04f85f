package pipeline

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/tools"
)

// tracerScope names the spans made here.
const tracerScope = "github.com/mcp-tools/mcp-tools/tools/pipeline"

// Attributes of a step's span: the GenAI execute_tool conventions, and the
// step's place in its pipeline.
const (
	keyOperation = attribute.Key("gen_ai.operation.name")
	keyToolName  = attribute.Key("gen_ai.tool.name")
	keyErrorType = attribute.Key("error.type")
	// KeyPipeline and KeyStep name the pipeline a step span belongs to and
	// the step's number, from 1.
	KeyPipeline = attribute.Key("mcp_tools.pipeline.name")
	KeyStep     = attribute.Key("mcp_tools.pipeline.step")
)

// runStep calls step i. When the pipeline's call is traced, the step is a
// child span named "execute_tool <tool>", made by the parent span's own
// tracer provider, and the step's call (a remote tool's request, say) is
// under it. An untraced call costs nothing more.
func (p *Pipeline) runStep(ctx context.Context, i int, s step, args json.RawMessage, call tools.Caller) (tools.Result, error) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return call(ctx, s.info.Name, args)
	}
	ctx, span := parent.TracerProvider().Tracer(tracerScope).Start(ctx, "execute_tool "+s.info.Name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(keyOperation.String("execute_tool"), keyToolName.String(s.info.Name),
			KeyPipeline.String(p.info.Name), KeyStep.Int(i+1)))
	defer span.End()
	r, err := call(ctx, s.info.Name, args)
	if tools.IsSuspended(err) {
		return r, err
	}
	if out := tools.Settle(r, err); out.Err != nil {
		span.SetAttributes(keyErrorType.String("tool_error"))
		span.SetStatus(codes.Error, string(out.Err.Kind))
	}
	return r, err
}
