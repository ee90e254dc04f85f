package otlp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// captureClient is an otlptrace.Client that keeps what it is given.
type captureClient struct{ got []*tracepb.ResourceSpans }

func (*captureClient) Start(context.Context) error { return nil }
func (*captureClient) Stop(context.Context) error  { return nil }
func (c *captureClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	c.got = rs
	return nil
}

// theirTraceRequest is the ExportTraceServiceRequest OpenTelemetry's
// otlptrace exporter makes of spans, its resources put in the order they
// first come (otlptrace leaves them in a map's order). The spans' ids
// must be unique.
func theirTraceRequest(t testing.TB, spans []sdktrace.ReadOnlySpan) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	c := new(captureClient)
	exp, err := otlptrace.New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	place := func(rs *tracepb.ResourceSpans) int {
		first := rs.ScopeSpans[0].Spans[0]
		return slices.IndexFunc(spans, func(s sdktrace.ReadOnlySpan) bool {
			if s == nil {
				return false
			}
			sid := s.SpanContext().SpanID()
			return bytes.Equal(sid[:], first.SpanId)
		})
	}
	slices.SortFunc(c.got, func(a, b *tracepb.ResourceSpans) int { return place(a) - place(b) })
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: c.got}
}

// compareEncodings fails t unless ours decodes into want and is, byte for
// byte, proto.Marshal's encoding of want.
func compareEncodings(t testing.TB, ours []byte, want proto.Message) {
	t.Helper()
	got := want.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(ours, got); err != nil {
		t.Fatalf("the generated types cannot read our encoding: %v", err)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("our message differs:\ngot  %v\nwant %v", got, want)
	}
	theirs, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, theirs) {
		i := 0
		for i < len(ours) && i < len(theirs) && ours[i] == theirs[i] {
			i++
		}
		t.Fatalf("same message, other bytes (%d and %d bytes, first difference at %d):\ngot  %x\nwant %x", len(ours), len(theirs), i, ours, theirs)
	}
}

// everyValue holds an attribute of every type, zero and not, with long
// values whose lengths take two and three bytes.
func everyValue() []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Bool("t", true), attribute.Bool("f", false),
		attribute.Int64("i", -7), attribute.Int64("i0", 0), attribute.Int64("max", math.MaxInt64),
		attribute.Float64("x", 1.5), attribute.Float64("x0", 0), attribute.Float64("neg0", math.Copysign(0, -1)),
		attribute.Float64("inf", math.Inf(-1)),
		attribute.String("s", "é"), attribute.String("empty", ""), attribute.String("", "no key"),
		attribute.String("s127", strings.Repeat("a", 127)), attribute.String("s128", strings.Repeat("b", 128)),
		attribute.String("s20000", strings.Repeat("c", 20000)),
		attribute.ByteSlice("raw", []byte{0, 1, 255}), attribute.ByteSlice("noraw", nil),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.BoolSlice("nobs", nil),
		attribute.Int64Slice("is", []int64{1, -2, 0}), attribute.Float64Slice("fs", []float64{0.5, 0}),
		attribute.StringSlice("ss", []string{"a", "", strings.Repeat("d", 300)}), attribute.StringSlice("noss", []string{}),
		attribute.Slice("mixed", attribute.StringValue("x"), attribute.IntValue(2), attribute.Value{},
			attribute.SliceValue(attribute.BoolValue(true)), attribute.MapValue(attribute.String("k", "v"))),
		attribute.Slice("noslice"),
		attribute.Map("m", attribute.String("k", "v"), attribute.Map("inner", attribute.Int("n", 1)), attribute.KeyValue{Key: "nothing"}),
		attribute.Map("nomap"),
		{Key: "emptyvalue"},
	}
}

// richSpans are spans (and a nil one) of every field, from three resources (one nil, two
// with the same attributes but other schema URLs, which otlptrace
// groups) and several scopes (the zero one included).
func richSpans() []sdktrace.ReadOnlySpan {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, _ := trace.ParseTraceState("vendor=a,other=b")
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.41.0", attribute.String("service.name", "test"), attribute.Int("n", 3))
	sameAttrs := resource.NewWithAttributes("https://other", attribute.String("service.name", "test"), attribute.Int("n", 3))
	other := resource.NewSchemaless(attribute.String("service.name", "other"))
	scope := instrumentation.Scope{Name: "scope", Version: "1", SchemaURL: "https://scope", Attributes: attribute.NewSet(attribute.String("a", "b"))}
	start := time.Unix(1700000000, 5)
	sc := func(id byte, flags trace.TraceFlags, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{id}, TraceFlags: flags, TraceState: ts, Remote: remote})
	}
	spans := tracetest.SpanStubs{
		{
			Name:        "every field",
			SpanContext: sc(1, trace.FlagsSampled, false),
			Parent:      sc(9, 0, true),
			SpanKind:    trace.SpanKindServer,
			StartTime:   start, EndTime: start.Add(time.Millisecond),
			Attributes: everyValue(),
			Events: []sdktrace.Event{
				{Name: "e", Time: start, Attributes: everyValue(), DroppedAttributeCount: 3},
				{},
			},
			Links: []sdktrace.Link{
				{SpanContext: sc(7, trace.FlagsSampled, true), Attributes: []attribute.KeyValue{attribute.String("k", "v")}, DroppedAttributeCount: 1},
				{SpanContext: sc(8, 0, false)},
				{},
			},
			Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
			DroppedAttributes:    2,
			DroppedEvents:        math.MaxInt32,
			DroppedLinks:         -1,
			Resource:             res,
			InstrumentationScope: scope,
		},
		{Name: "local parent", SpanContext: sc(2, 0, false), Parent: sc(1, trace.FlagsSampled, false), SpanKind: trace.SpanKindClient,
			Status: sdktrace.Status{Code: codes.Ok}, Resource: sameAttrs, InstrumentationScope: scope},
		{Name: "zero scope", SpanContext: sc(3, 0, false), SpanKind: trace.SpanKindProducer, Resource: other},
		{Name: "back to the first resource", SpanContext: sc(4, 0, false), SpanKind: trace.SpanKindConsumer, Resource: res,
			InstrumentationScope: instrumentation.Scope{Name: "second"}},
		{Name: "no resource", SpanContext: sc(5, 0, false), SpanKind: trace.SpanKindInternal,
			InstrumentationScope: instrumentation.Scope{Attributes: attribute.NewSet(attribute.Bool("only", true))}},
		{Name: "before 1970", SpanContext: sc(6, 0, false), StartTime: time.Unix(-5, 0), EndTime: time.Time{}, SpanKind: trace.SpanKind(42), Resource: other,
			Status: sdktrace.Status{Code: codes.Code(9)}},
		{Name: "same scope again", SpanContext: sc(10, 0, false), Resource: res, InstrumentationScope: scope},
	}.Snapshots()
	return slices.Insert(spans, 3, nil) // otlptrace skips a nil span
}

// recordedSpans are spans the SDK made, through its span limits and a
// remote parent.
func recordedSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "recorded"))),
		sdktrace.WithSpanLimits(sdktrace.SpanLimits{AttributeCountLimit: 3, EventCountLimit: 1, LinkCountLimit: 1,
			AttributePerEventCountLimit: 1, AttributePerLinkCountLimit: 1, AttributeValueLengthLimit: -1}))
	ts, _ := trace.ParseTraceState("k=v")
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{7}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	tr := tp.Tracer("recorder", trace.WithInstrumentationVersion("v2"), trace.WithSchemaURL("https://s"))
	ctx, parent := tr.Start(ctx, "parent", trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(everyValue()...),
		trace.WithLinks(trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.Int("a", 1), attribute.Int("b", 2)}}, trace.Link{SpanContext: remote}))
	_, child := tr.Start(ctx, "child")
	child.AddEvent("one", trace.WithAttributes(attribute.Int("a", 1), attribute.Int("b", 2)))
	child.AddEvent("two")
	child.RecordError(errors.New("failed"))
	child.SetStatus(codes.Error, "failed")
	child.End()
	parent.SetStatus(codes.Ok, "ignored")
	parent.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rec.Ended()
}

// TestTraceRequestMatchesOtlptrace: our encoding of spans is, byte for
// byte, otlptrace's message as proto.Marshal writes it.
func TestTraceRequestMatchesOtlptrace(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spans []sdktrace.ReadOnlySpan
	}{
		{"stubs of every field", richSpans()},
		{"recorded by the SDK", recordedSpans(t)},
		{"the export test's", testSpans()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			compareEncodings(t, traceRequest(tt.spans), theirTraceRequest(t, tt.spans))
		})
	}
}

// TestTraceRequestGroups: spans are grouped by resource, then scope, in
// the order they first come.
func TestTraceRequestGroups(t *testing.T) {
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(traceRequest(richSpans()), &req); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			var names []string
			for _, s := range ss.Spans {
				names = append(names, s.Name)
			}
			got = append(got, ss.GetScope().GetName()+": "+strings.Join(names, ", "))
		}
		got = append(got, "|")
	}
	want := []string{"scope: every field, local parent, same scope again", "second: back to the first resource", "|",
		": zero scope, before 1970", "|", ": no resource", "|"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if traceRequest(nil) != nil || traceRequest([]sdktrace.ReadOnlySpan{nil}) != nil {
		t.Error("no span made a request")
	}
}

// richMetrics are metrics of every aggregation, int and float, in both
// temporalities, with exemplars, extrema set and not, zero values, and
// several scopes (the zero one included).
func richMetrics() *metricdata.ResourceMetrics {
	rm := testMetrics()
	t0, t1 := time.Unix(1700000000, 0), time.Unix(1700000010, 123)
	attrs := attribute.NewSet(everyValue()...)
	fex := []metricdata.Exemplar[float64]{{FilteredAttributes: everyValue(), Time: t1, Value: 0.25, SpanID: []byte{1, 2, 3, 4, 5, 6, 7, 8},
		TraceID: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}, {}}
	iex := []metricdata.Exemplar[int64]{{Time: t1, Value: -3, SpanID: []byte{9}}, {Value: 0}}
	many := make([]uint64, 300)
	for i := range many {
		many[i] = uint64(i * i * i)
	}
	rm.ScopeMetrics = append(rm.ScopeMetrics,
		metricdata.ScopeMetrics{Metrics: []metricdata.Metrics{
			{Name: "empty gauge", Data: metricdata.Gauge[float64]{}},
			{Name: "empty sum", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality}},
			{Name: "empty histogram", Data: metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality}},
			{Name: "empty summary", Data: metricdata.Summary{}},
		}},
		metricdata.ScopeMetrics{
			Scope: instrumentation.Scope{Name: "second", Attributes: attribute.NewSet(attribute.Int("n", 1))},
			Metrics: []metricdata.Metrics{
				{Name: "zeros", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{}, {Value: math.MinInt64, Exemplars: iex}}}},
				{Name: "float zeros", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{}, {Value: math.Copysign(0, -1)}, {Value: math.Inf(1), Exemplars: fex}}}},
				{Name: "int sum", Unit: "{call}", Data: metricdata.Sum[int64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.DataPoint[int64]{{Attributes: attrs, StartTime: t0, Time: t1, Value: 1 << 40, Exemplars: iex}}}},
				{Name: "float sum", Data: metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[float64]{{Time: t1, Value: 2.5, Exemplars: fex}, {Time: t0}}}},
				{Name: "float histogram", Data: metricdata.Histogram[float64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.HistogramDataPoint[float64]{
						{Attributes: attrs, StartTime: t0, Time: t1, Count: 600, Bounds: make([]float64, 299), BucketCounts: many,
							Min: metricdata.NewExtrema(0.0), Max: metricdata.NewExtrema(1e300), Sum: 0, Exemplars: fex},
						{Max: metricdata.NewExtrema(-1.0)},
					}}},
				{Name: "int histogram", Data: metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.HistogramDataPoint[int64]{{Count: 1, Bounds: []float64{1}, BucketCounts: []uint64{0, 1},
						Sum: -4, Min: metricdata.NewExtrema[int64](-4), Max: metricdata.NewExtrema[int64](-4), Exemplars: iex}}}},
				{Name: "int exponential", Data: metricdata.ExponentialHistogram[int64]{Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.ExponentialHistogramDataPoint[int64]{
						{Attributes: attrs, StartTime: t0, Time: t1, Count: 9, Sum: 40, Scale: -3, ZeroCount: 2, ZeroThreshold: math.Copysign(0, -1),
							PositiveBucket: metricdata.ExponentialBucket{Offset: -200, Counts: many}, NegativeBucket: metricdata.ExponentialBucket{Counts: []uint64{0}},
							Min: metricdata.NewExtrema[int64](0), Max: metricdata.NewExtrema[int64](30), Exemplars: iex},
						{},
					}}},
				{Name: "float exponential", Data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{{Count: 1, Sum: 0.5, Scale: 20, ZeroThreshold: 1e-9,
						PositiveBucket: metricdata.ExponentialBucket{Offset: math.MaxInt32, Counts: []uint64{1}},
						NegativeBucket: metricdata.ExponentialBucket{Offset: math.MinInt32}, Max: metricdata.NewExtrema(0.5), Exemplars: fex}}}},
				{Name: "summary", Description: "quantiles", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{
					{Attributes: attrs, StartTime: t0, Time: t1, Count: 5, Sum: 7.5,
						QuantileValues: []metricdata.QuantileValue{{Quantile: 0, Value: 0}, {Quantile: 0.99, Value: math.Copysign(0, -1)}}},
					{},
				}}},
			},
		})
	return rm
}

// theirMetricsRequest is the ExportMetricsServiceRequest OpenTelemetry's
// otlpmetrichttp exporter sends for rm, as a stand-in collector reads it.
func theirMetricsRequest(t *testing.T, rm *metricdata.ResourceMetrics) (*colmetricpb.ExportMetricsServiceRequest, []byte) {
	t.Helper()
	c := newHTTPCollector(t, nil)
	exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(c.URL+"/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Export(context.Background(), rm); err != nil {
		t.Fatal(err)
	}
	got := c.requests()
	if len(got) != 1 {
		t.Fatalf("got %d requests, want 1", len(got))
	}
	var req colmetricpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(got[0].body, &req); err != nil {
		t.Fatal(err)
	}
	return &req, got[0].body
}

// TestMetricsRequestMatchesOpenTelemetry: our encoding of metrics is, byte
// for byte, what otlpmetrichttp sends.
func TestMetricsRequestMatchesOpenTelemetry(t *testing.T) {
	for _, tt := range []struct {
		name string
		rm   *metricdata.ResourceMetrics
	}{
		{"every aggregation", richMetrics()},
		{"the export test's", testMetrics()},
		{"no resource, no scope", &metricdata.ResourceMetrics{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ours, err := metricsRequest(tt.rm)
			if err != nil {
				t.Fatal(err)
			}
			want, sent := theirMetricsRequest(t, tt.rm)
			compareEncodings(t, ours, want)
			if !bytes.Equal(ours, sent) {
				t.Error("our bytes differ from those otlpmetrichttp sent")
			}
		})
	}
}

// TestMetricsRequestLeavesOut: metrics OTLP cannot carry are left out and
// named; the rest is encoded as if they were not there.
func TestMetricsRequestLeavesOut(t *testing.T) {
	rm := richMetrics()
	want, err := metricsRequest(rm)
	if err != nil {
		t.Fatal(err)
	}
	sm := &rm.ScopeMetrics[len(rm.ScopeMetrics)-1]
	sm.Metrics = slices.Insert(sm.Metrics, 1,
		metricdata.Metrics{Name: "odd", Data: nil},
		metricdata.Metrics{Name: "no temporality", Description: strings.Repeat("long ", 100), Data: metricdata.Sum[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}}},
		metricdata.Metrics{Name: "histogram without", Data: metricdata.Histogram[float64]{}},
		metricdata.Metrics{Name: "exponential without", Data: metricdata.ExponentialHistogram[int64]{}},
	)
	got, err := metricsRequest(rm)
	for _, name := range []string{"odd (<nil>)", "no temporality (metricdata.Sum[int64])", "histogram without", "exponential without"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("got error %v, want one naming %q", err, name)
		}
	}
	if !bytes.Equal(got, want) {
		t.Error("the encoding of the other metrics changed")
	}
}

// TestAppendMessageLengths: a message's length takes as many bytes as its
// size needs, at each boundary.
func TestAppendMessageLengths(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21} {
		got := appendMessage([]byte{0xaa}, 3, func(b []byte) []byte { return append(b, make([]byte, n)...) })
		want := binary.AppendUvarint([]byte{0xaa, 3<<3 | 2}, uint64(n))
		want = append(want, make([]byte, n)...)
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes: got a %d-byte encoding, want %d", n, len(got), len(want))
		}
	}
}

// TestInvalidUTF8IsMended: a string that is not UTF-8, in any string
// field, is sent with U+FFFD in place of its bad bytes, where
// OpenTelemetry's exporters fail the whole request.
func TestInvalidUTF8IsMended(t *testing.T) {
	const bad = "caf\xe9 \xff\xfe!"
	good := strings.ToValidUTF8(bad, "\uFFFD")
	spans := func(s string) []sdktrace.ReadOnlySpan {
		ts, _ := trace.ParseTraceState("k=v")
		return tracetest.SpanStubs{{
			Name:        s,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceState: ts}),
			Attributes:  []attribute.KeyValue{attribute.String(s, s), attribute.StringSlice("ss", []string{s, "ok"}), attribute.Map("m", attribute.String("k", s))},
			Events:      []sdktrace.Event{{Name: s, Attributes: []attribute.KeyValue{attribute.String(s, s)}}},
			Links:       []sdktrace.Link{{Attributes: []attribute.KeyValue{attribute.String(s, s)}}},
			Status:      sdktrace.Status{Code: codes.Error, Description: s},
			Resource:    resource.NewWithAttributes(s, attribute.String("service.name", s)),
			InstrumentationScope: instrumentation.Scope{Name: s, Version: s, SchemaURL: s,
				Attributes: attribute.NewSet(attribute.String("a", s))},
		}}.Snapshots()
	}
	if _, err := proto.Marshal(theirTraceRequest(t, spans(bad))); err == nil {
		t.Fatal("proto.Marshal took a string that is not UTF-8: this test is out of date")
	}
	compareEncodings(t, traceRequest(spans(bad)), theirTraceRequest(t, spans(good)))

	metrics := func(s string) *metricdata.ResourceMetrics {
		return &metricdata.ResourceMetrics{
			Resource: resource.NewWithAttributes(s, attribute.String("service.name", s)),
			ScopeMetrics: []metricdata.ScopeMetrics{{
				Scope: instrumentation.Scope{Name: s, Version: s, SchemaURL: s},
				Metrics: []metricdata.Metrics{{Name: s, Description: s, Unit: s, Data: metricdata.Gauge[int64]{
					DataPoints: []metricdata.DataPoint[int64]{{Attributes: attribute.NewSet(attribute.String("k", s)), Value: 1,
						Exemplars: []metricdata.Exemplar[int64]{{FilteredAttributes: []attribute.KeyValue{attribute.String(s, s)}}}}},
				}}},
			}},
		}
	}
	ours, err := metricsRequest(metrics(bad))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := theirMetricsRequest(t, metrics(good))
	compareEncodings(t, ours, want)
}
