package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/tools"
)

// Attribute values of the MCP semantic conventions (semconv v1.41.0).
const (
	// MethodToolsCall is mcp.method.name of a tool call.
	MethodToolsCall = "tools/call"
	// ErrorTypeTool is error.type of a call whose result is an error
	// (isError: true).
	ErrorTypeTool = "tool_error"
	// TransportPipe and TransportTCP are the network.transport of stdio
	// and of the HTTP transports.
	TransportPipe = "pipe"
	TransportTCP  = "tcp"
)

// ErrorKindKey is the attribute that carries a failed call's tools.Kind
// next to error.type.
const ErrorKindKey = attribute.Key("mcp_tools.error.kind")

// Request is what the server knows of the MCP request a call came in:
// the span's attributes and its remote parent. Every field may be empty.
type Request struct {
	// ID is the JSON-RPC request id, as text (jsonrpc.request.id).
	ID string
	// ProtocolVersion is the request's MCP protocol version.
	ProtocolVersion string
	// SessionID is the MCP session id (mcp.session.id). Set it only for
	// protocol versions that have sessions.
	SessionID string
	// Transport is network.transport: TransportPipe or TransportTCP.
	Transport string
	// TraceParent and TraceState are the W3C trace context the client
	// sent: params._meta traceparent and tracestate (SEP-414) or, when
	// _meta has none, the HTTP headers of the same names.
	TraceParent, TraceState string
}

type requestKey struct{}

// WithRequest returns ctx carrying r, for the Middleware of the call run
// under it.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the Request WithRequest put into ctx, or nil.
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// carrier reads a Request's trace context for a propagator.
type carrier struct{ r *Request }

func (c carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.r.TraceParent
	case "tracestate":
		return c.r.TraceState
	}
	return ""
}
func (c carrier) Set(string, string) {}
func (c carrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

// Middleware measures and traces every call of the tool info describes:
// the calls, outcome and duration metrics, the in-flight gauge and the
// budget refusals; with tracing on, a SERVER span named
// "tools/call <tool>" whose parent is the request's trace context (see
// Request), linked to the context ctx carried before (when another), with
// the MCP attributes; with tracing off, the client's trace
// context alone is passed on, so that remote tools still propagate it.
//
// Put it outermost in the chain: it then counts every call, refused ones
// included, and times the whole call. The label series are made here,
// once per tool. On a nil Telemetry it returns next.
func (t *Telemetry) Middleware(info tools.Info, next tools.Func) tools.Func {
	if t == nil {
		return next
	}
	m := t.forTool(info.Name)
	if t.tracer == nil && !t.otelMetr {
		return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
			if r := RequestFrom(ctx); r != nil && r.TraceParent != "" {
				ctx = propagation.TraceContext{}.Extract(ctx, carrier{r})
			}
			m.inFlight.Inc()
			start := time.Now()
			res, err := next(ctx, args)
			m.done(time.Since(start), res, err)
			return res, err
		}
	}
	return t.traced(info, m, next)
}

// done records a finished call and returns its outcome: nil on success.
func (m *toolMetrics) done(d time.Duration, res tools.Result, err error) *tools.Error {
	m.inFlight.Dec()
	m.duration.Observe(d.Seconds())
	switch {
	case err == nil:
		m.ok.Inc()
		return nil
	case isTaskStarted(err):
		m.task.Inc()
		return nil
	case tools.IsSuspended(err):
		m.suspended.Inc()
		return nil
	}
	e := tools.AsError(err)
	if c, ok := m.outcomes[e.Kind]; ok {
		c.Inc()
	} else {
		m.other.Inc()
	}
	if e.Kind == tools.KindBudgetExhausted {
		m.budget.Inc()
	}
	return e
}

func (t *Telemetry) traced(info tools.Info, m *toolMetrics, next tools.Func) tools.Func {
	name := info.Name
	spanName := MethodToolsCall + " " + name
	static := []attribute.KeyValue{
		keyMCPMethodName.String(MethodToolsCall),
		keyGenAIOperationName.String(operationExecuteTool),
		keyGenAIToolName.String(name),
	}
	metricAttrs := []attribute.KeyValue{keyGenAIToolName.String(name),
		keyGenAIOperationName.String(operationExecuteTool)}
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		r := RequestFrom(ctx)
		ambient := trace.SpanContextFromContext(ctx)
		if r != nil && r.TraceParent != "" {
			ctx = propagation.TraceContext{}.Extract(ctx, carrier{r})
		}
		var span trace.Span
		if t.tracer != nil {
			attrs := append(make([]attribute.KeyValue, 0, len(static)+6), static...)
			if r != nil {
				attrs = appendRequest(attrs, r)
			}
			if t.cfg.RecordArguments {
				attrs = append(attrs, keyGenAIToolCallArguments.String(clip(tools.ShowArgsN(info, args, t.cfg.MaxAttributeBytes), t.cfg.MaxAttributeBytes)))
			}
			if ambient.IsValid() && !ambient.Equal(trace.SpanContextFromContext(ctx)) {
				// The context current when the call arrived (an HTTP
				// server span) is linked, its parent being the client's.
				ctx, span = t.tracer.Start(ctx, spanName, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...),
					trace.WithLinks(trace.Link{SpanContext: ambient}))
			} else {
				ctx, span = t.tracer.Start(ctx, spanName, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
			}
		}
		m.inFlight.Inc()
		start := time.Now()
		res, err := next(ctx, args)
		d := time.Since(start)
		failed := m.done(d, res, err)
		if t.otelMetr {
			attrs := metricAttrs
			if r != nil && r.Transport != "" {
				attrs = append(attrs[:len(attrs):len(attrs)], keyNetworkTransport.String(r.Transport))
			}
			if failed != nil {
				attrs = append(attrs[:len(attrs):len(attrs)], keyErrorType.String(ErrorTypeTool))
			}
			t.opDur.record(ctx, d.Seconds(), attrs)
		}
		if span != nil {
			if failed != nil {
				span.SetAttributes(keyErrorType.String(ErrorTypeTool), ErrorKindKey.String(string(failed.Kind)))
				span.SetStatus(codes.Error, string(failed.Kind))
			} else if t.cfg.RecordArguments && err == nil {
				span.SetAttributes(keyGenAIToolCallResult.String(clip(res.Text, t.cfg.MaxAttributeBytes)))
			}
			span.End()
		}
		return res, err
	}
}

// appendRequest adds the request's attributes to attrs.
func appendRequest(attrs []attribute.KeyValue, r *Request) []attribute.KeyValue {
	if r.ID != "" {
		attrs = append(attrs, keyJSONRPCRequestID.String(r.ID))
	}
	if r.ProtocolVersion != "" {
		attrs = append(attrs, keyMCPProtocolVersion.String(r.ProtocolVersion))
	}
	if r.SessionID != "" {
		attrs = append(attrs, keyMCPSessionID.String(r.SessionID))
	}
	if r.Transport != "" {
		attrs = append(attrs, keyNetworkTransport.String(r.Transport))
	}
	return attrs
}

// clip makes s an attribute value: valid UTF-8 (invalid bytes become
// U+FFFD) of at most n bytes, a cut marked with "…" within them. The
// arguments come to it from tools.ShowArgsN bounded to n characters, at
// least n bytes: it never converts a long text whole.
func clip(s string, n int) string {
	const mark = "…"
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	cut := len(s) > n
	if cut {
		s = s[:runeStart(s, n)]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !cut && len(s) <= n {
		return s
	}
	if n < len(mark) {
		return s[:runeStart(s, min(n, len(s)))]
	}
	return s[:runeStart(s, min(n-len(mark), len(s)))] + mark
}

// runeStart is i, or the start of the character s[i] is inside (at most
// three bytes back: stray continuation bytes are not a character).
func runeStart(s string, i int) int {
	for j := i; j > 0 && j > i-utf8.UTFMax && j < len(s); j-- {
		if utf8.RuneStart(s[j]) {
			return j
		}
	}
	return i
}

// isTaskStarted reports whether err says the call became a task (an error
// with a TaskStarted method, as the server's is).
func isTaskStarted(err error) bool {
	var t interface{ TaskStarted() }
	return errors.As(err, &t)
}
