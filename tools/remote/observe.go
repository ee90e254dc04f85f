package remote

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/tools"
)

// Observer is told how remote calls end, for metrics (telemetry.Telemetry
// is one). Its methods are called on the call's goroutine, concurrently
// for concurrent calls: they must be quick and must not block. A tool is
// named by its configured Name.
type Observer interface {
	// Exited reports that a subprocess of tool ended with exit code code,
	// or was ended by a signal (code -1).
	Exited(tool string, code int)
	// Responded reports the HTTP status an HTTP tool's endpoint answered
	// (the last one, after redirects).
	Responded(tool string, status int)
}

// tracerScope names the spans made here.
const tracerScope = "github.com/mcp-tools/mcp-tools/tools/remote"

// Attribute keys of the OpenTelemetry semantic conventions used on the
// spans of remote calls.
const (
	keyToolName   = attribute.Key("gen_ai.tool.name")
	keyErrorType  = attribute.Key("error.type")
	keyMethod     = attribute.Key("http.request.method")
	keyStatus     = attribute.Key("http.response.status_code")
	keyURL        = attribute.Key("url.full")
	keyServer     = attribute.Key("server.address")
	keyExecutable = attribute.Key("process.executable.name")
	keyExitCode   = attribute.Key("process.exit.code")
	keyPID        = attribute.Key("process.pid")
)

// startSpan starts a child of the call's span, when that one is being
// recorded; otherwise it returns ctx and a nil span, and costs nothing.
// The tracer is the parent's own provider's: no global is read.
func startSpan(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, nil
	}
	return parent.TracerProvider().Tracer(tracerScope).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// endSpan ends span (nil: nothing), marking a failure with its kind.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		kind := string(tools.KindExecutionFailed)
		var e *tools.Error
		if errors.As(err, &e) {
			kind = string(e.Kind)
		}
		span.SetAttributes(keyErrorType.String(kind))
		span.SetStatus(codes.Error, kind)
	}
	span.End()
}

// traceEnv is the W3C trace context of ctx as environment entries,
// TRACEPARENT and, when there is one, TRACESTATE; nil when ctx carries no
// valid span context.
func traceEnv(ctx context.Context) []string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	env := []string{"TRACEPARENT=" + c["traceparent"]}
	if ts := c["tracestate"]; ts != "" {
		env = append(env, "TRACESTATE="+ts)
	}
	return env
}

// injectHeaders sets the traceparent and tracestate headers of ctx's span
// context on h; nothing when ctx carries none.
func injectHeaders(ctx context.Context, h propagation.HeaderCarrier) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		propagation.TraceContext{}.Inject(ctx, h)
	}
}
