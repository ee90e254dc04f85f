package otlp

import (
	"bytes"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// TestMsgLengths: a sub-message's length prefix is right whatever its
// size, when the body outgrows the one byte msg first reserves.
func TestMsgLengths(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 16383, 16384, 1 << 21, 1<<21 + 5} {
		body := bytes.Repeat([]byte{0xab}, n)
		prefix := []byte{9, 9, 9}
		got := msg(append([]byte(nil), prefix...), 7, func(b []byte) []byte { return append(b, body...) })
		want := protowire.AppendBytes(protowire.AppendTag(append([]byte(nil), prefix...), 7, protowire.BytesType), body)
		if !bytes.Equal(got, want) {
			t.Errorf("body of %d bytes: got %d bytes, want %d", n, len(got), len(want))
		}
	}
}

// TestTraceRequestGroups: spans are grouped by resource, then by scope, in
// the order they first appear; no spans, no request.
func TestTraceRequestGroups(t *testing.T) {
	ra := resource.NewSchemaless(attribute.String("service.name", "a"))
	rb := resource.NewSchemaless(attribute.String("service.name", "b"))
	s1, s2 := instrumentation.Scope{Name: "s1"}, instrumentation.Scope{Name: "s2"}
	stub := func(id byte, r *resource.Resource, s instrumentation.Scope) tracetest.SpanStub {
		return tracetest.SpanStub{Name: string('0' + id), Resource: r, InstrumentationScope: s,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{id}})}
	}
	spans := tracetest.SpanStubs{stub(1, ra, s1), stub(2, rb, s1), stub(3, ra, s2), stub(4, ra, s1), stub(5, rb, s1)}.Snapshots()
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(traceRequest(spans), &req); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rs := range req.ResourceSpans {
		g := rs.Resource.Attributes[0].Value.GetStringValue() + ":"
		for _, ss := range rs.ScopeSpans {
			g += " " + ss.Scope.Name + "["
			for _, s := range ss.Spans {
				g += s.Name
			}
			g += "]"
		}
		got = append(got, g)
	}
	want := []string{"a: s1[14] s2[3]", "b: s1[25]"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %q, want %q", got, want)
	}
	if b := traceRequest(nil); b != nil {
		t.Errorf("no spans: got %x, want nothing", b)
	}
}
