package otlp

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Span flags of OTLP (the SpanFlags enum) above the W3C trace flags.
const (
	flagHasIsRemote = 0x100 // the next bit is known
	flagIsRemote    = 0x200 // the parent (or linked span) is remote
)

// spanGroup is the spans of one resource, by instrumentation scope, in
// the order the spans came.
type spanGroup struct {
	res    *resource.Resource // the first span's
	scopes []instrumentation.Scope
	spans  map[instrumentation.Scope][]sdktrace.ReadOnlySpan
}

// traceRequest encodes spans as an ExportTraceServiceRequest, grouped by
// resource then by instrumentation scope as OpenTelemetry's otlptrace
// exporter groups them (resources in the order they first come: otlptrace
// leaves theirs in a map's order). It is nil when there is no span.
func traceRequest(spans []sdktrace.ReadOnlySpan) []byte {
	var order []attribute.Distinct
	groups := map[attribute.Distinct]*spanGroup{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		key := s.Resource().Equivalent()
		g := groups[key]
		if g == nil {
			g = &spanGroup{res: s.Resource(), spans: map[instrumentation.Scope][]sdktrace.ReadOnlySpan{}}
			groups[key] = g
			order = append(order, key)
		}
		scope := s.InstrumentationScope()
		if _, ok := g.spans[scope]; !ok {
			g.scopes = append(g.scopes, scope)
		}
		g.spans[scope] = append(g.spans[scope], s)
	}
	var b []byte
	for _, key := range order {
		b = appendMessage(b, 1, func(b []byte) []byte { return appendResourceSpans(b, groups[key]) })
	}
	return b
}

// appendResourceSpans appends the fields of a ResourceSpans: resource
// (1), scope_spans (2), schema_url (3).
func appendResourceSpans(b []byte, g *spanGroup) []byte {
	if g.res != nil {
		b = appendMessage(b, 1, func(b []byte) []byte { return appendAttributes(b, 1, g.res.Iter()) })
	}
	for _, scope := range g.scopes {
		b = appendMessage(b, 2, func(b []byte) []byte {
			// ScopeSpans: scope (1, left out when zero), spans (2),
			// schema_url (3).
			if scope != (instrumentation.Scope{}) {
				b = appendMessage(b, 1, func(b []byte) []byte {
					return appendScope(b, scope.Name, scope.Version, scope.Attributes.Iter())
				})
			}
			for _, s := range g.spans[scope] {
				b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
			}
			return appendString(b, 3, scope.SchemaURL)
		})
	}
	return appendString(b, 3, g.res.SchemaURL())
}

// appendSpan appends the fields of a Span.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, 4, psid[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendVarint(b, 6, spanKind(s.SpanKind()))
	b = appendFixed64(b, 7, unixNano(s.StartTime()))
	b = appendFixed64(b, 8, unixNano(s.EndTime()))
	b = appendKeyValues(b, 9, s.Attributes())
	b = appendVarint(b, 10, clampUint32(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = appendMessage(b, 11, func(b []byte) []byte {
			// Span.Event: time_unix_nano (1), name (2), attributes (3),
			// dropped_attributes_count (4).
			b = appendFixed64(b, 1, unixNano(e.Time))
			b = appendString(b, 2, e.Name)
			b = appendKeyValues(b, 3, e.Attributes)
			return appendVarint(b, 4, clampUint32(e.DroppedAttributeCount))
		})
	}
	b = appendVarint(b, 12, clampUint32(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = appendMessage(b, 13, func(b []byte) []byte {
			// Span.Link: trace_id (1), span_id (2), attributes (4),
			// dropped_attributes_count (5), flags (6). Its trace_state
			// (3) is left out, as otlptrace leaves it.
			tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytes(b, 1, tid[:])
			b = appendBytes(b, 2, sid[:])
			b = appendKeyValues(b, 4, l.Attributes)
			b = appendVarint(b, 5, clampUint32(l.DroppedAttributeCount))
			return appendFixed32(b, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		})
	}
	b = appendVarint(b, 14, clampUint32(s.DroppedLinks()))
	st := s.Status()
	b = appendMessage(b, 15, func(b []byte) []byte {
		// Status: message (2), code (3). Always written, as otlptrace
		// writes it.
		b = appendString(b, 2, st.Description)
		return appendVarint(b, 3, statusCode(st.Code))
	})
	return appendFixed32(b, 16, spanFlags(sc.TraceFlags(), parent))
}

// spanFlags are the W3C trace flags and the bits that tell whether the
// parent (for a link: the linked span) is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		flags |= flagIsRemote
	}
	return flags
}

// spanKind is k as OTLP's Span.SpanKind enum.
func spanKind(k trace.SpanKind) uint64 {
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
	return 0 // SPAN_KIND_UNSPECIFIED
}

// statusCode is c as OTLP's Status.StatusCode enum.
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0 // STATUS_CODE_UNSET
}

// clampUint32 is a count as a uint32 field holds it.
func clampUint32(v int) uint64 {
	if v < 0 {
		return 0
	}
	return min(uint64(v), math.MaxUint32)
}
