package otlp

import (
	"context"
	"fmt"
	"math"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// traceMethod is the OTLP/gRPC trace service's Export method.
const traceMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// The span flags OTLP adds to the W3C trace flags (trace.v1.SpanFlags).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// TraceExporter is a span exporter of the OpenTelemetry SDK that sends to
// one collector, as OpenTelemetry's otlptrace exporter does. Build it with
// NewTraceExporter.
type TraceExporter struct {
	c        *client
	shutdown sync.Once
}

var _ sdktrace.SpanExporter = (*TraceExporter)(nil)

// NewTraceExporter makes a span exporter that sends to s.
func NewTraceExporter(s Settings) *TraceExporter {
	return &TraceExporter{c: newClient(s, traceMethod)}
}

// ExportSpans sends spans as one ExportTraceServiceRequest; none: nothing
// is sent.
func (e *TraceExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	body := traceRequest(spans)
	if body == nil {
		return nil
	}
	if err := e.c.export(ctx, body); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown ends exports under way, waits for them until ctx is done, and
// closes the connections; later exports fail. Only the first call does
// anything.
func (e *TraceExporter) Shutdown(ctx context.Context) error {
	var err error
	e.shutdown.Do(func() { err = e.c.shutdown(ctx) })
	return err
}

// traceRequest encodes spans as an ExportTraceServiceRequest, grouped by
// resource and then by instrumentation scope in the order they first
// appear; nil when there are no spans.
func traceRequest(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		r attribute.Distinct
		s instrumentation.Scope
	}
	type group struct {
		first  sdktrace.ReadOnlySpan
		scopes []scopeKey
	}
	groups := map[attribute.Distinct]*group{}
	var order []attribute.Distinct
	members := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, sd := range spans {
		if sd == nil {
			continue
		}
		r := sd.Resource().Equivalent()
		g, ok := groups[r]
		if !ok {
			g = &group{first: sd}
			groups[r] = g
			order = append(order, r)
		}
		k := scopeKey{r, sd.InstrumentationScope()}
		if _, ok := members[k]; !ok {
			g.scopes = append(g.scopes, k)
		}
		members[k] = append(members[k], sd)
	}
	if len(order) == 0 {
		return nil
	}
	var b []byte
	for _, r := range order {
		g := groups[r]
		b = msg(b, 1, func(b []byte) []byte { // ResourceSpans
			if res := g.first.Resource(); res != nil {
				b = msg(b, 1, func(b []byte) []byte { return iterated(b, 1, res.Iter()) })
			}
			for _, k := range g.scopes {
				b = msg(b, 2, func(b []byte) []byte { // ScopeSpans
					if k.s != (instrumentation.Scope{}) {
						b = msg(b, 1, func(b []byte) []byte { return scope(b, k.s.Name, k.s.Version, k.s.Attributes.Iter()) })
					}
					for _, sd := range members[k] {
						b = msg(b, 2, func(b []byte) []byte { return span(b, sd) })
					}
					return str(b, 3, k.s.SchemaURL)
				})
			}
			if res := g.first.Resource(); res != nil {
				b = str(b, 3, res.SchemaURL())
			}
			return b
		})
	}
	return b
}

// span appends the body of one Span (trace.v1).
func span(b []byte, sd sdktrace.ReadOnlySpan) []byte {
	sc := sd.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = byts(b, 1, tid[:])
	b = byts(b, 2, sid[:])
	b = str(b, 3, sc.TraceState().String())
	if psid := sd.Parent().SpanID(); psid.IsValid() {
		b = byts(b, 4, psid[:])
	}
	b = str(b, 5, sd.Name())
	b = varint(b, 6, uint64(spanKind(sd.SpanKind())))
	b = fixed64(b, 7, unixNano(sd.StartTime()))
	b = fixed64(b, 8, unixNano(sd.EndTime()))
	b = keyValues(b, 9, sd.Attributes())
	b = varint(b, 10, uint64(clampUint32(sd.DroppedAttributes())))
	for _, ev := range sd.Events() {
		b = msg(b, 11, func(b []byte) []byte {
			b = fixed64(b, 1, unixNano(ev.Time))
			b = str(b, 2, ev.Name)
			b = keyValues(b, 3, ev.Attributes)
			return varint(b, 4, uint64(clampUint32(ev.DroppedAttributeCount)))
		})
	}
	b = varint(b, 12, uint64(clampUint32(sd.DroppedEvents())))
	for _, l := range sd.Links() {
		b = msg(b, 13, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = byts(b, 1, ltid[:])
			b = byts(b, 2, lsid[:])
			// No trace_state (3): OpenTelemetry's exporter sends none for a
			// link either.
			b = keyValues(b, 4, l.Attributes)
			b = varint(b, 5, uint64(clampUint32(l.DroppedAttributeCount)))
			return fixed32(b, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		})
	}
	b = varint(b, 14, uint64(clampUint32(sd.DroppedLinks())))
	b = msg(b, 15, func(b []byte) []byte { // Status
		st := sd.Status()
		b = str(b, 2, st.Description)
		return varint(b, 3, uint64(statusCode(st.Code)))
	})
	return fixed32(b, 16, spanFlags(sc.TraceFlags(), sd.Parent()))
}

// spanFlags are the W3C trace flags with OTLP's bits saying whether the
// parent is remote (always known here).
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind is k as trace.v1.Span.SpanKind.
func spanKind(k trace.SpanKind) int32 {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	}
	return 0
}

// statusCode is c as trace.v1.Status.StatusCode.
func statusCode(c codes.Code) int32 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func clampUint32(v int) uint32 {
	if v < 0 {
		return 0
	}
	if int64(v) > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(v)
}
