package telemetry_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/tools"
)

// operationDurationBounds collects mcp.server.operation.duration after one
// call and returns its bucket boundaries.
func operationDurationBounds(t *testing.T, cfg telemetry.Config) []float64 {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	cfg.MeterProvider, cfg.Getenv = mp, noEnv
	tel, err := telemetry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tool := tools.Wrap(tools.New(tools.Info{Name: "echo", Description: "d"}, func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Text("ok"), nil
	}), tel.Middleware)
	if _, err := tool.Call(context.Background(), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || len(h.DataPoints) != 1 {
				t.Fatalf("mcp.server.operation.duration: got %#v, want one histogram point", m.Data)
			}
			return h.DataPoints[0].Bounds
		}
	}
	t.Fatal("mcp.server.operation.duration not recorded")
	return nil
}

// TestOperationDurationBuckets holds mcp.server.operation.duration to the
// ExplicitBucketBoundaries the MCP semantic conventions advise, unless the
// Config sets buckets of its own.
func TestOperationDurationBuckets(t *testing.T) {
	semconvBounds := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
	if got := operationDurationBounds(t, telemetry.Config{}); !slices.Equal(got, semconvBounds) {
		t.Errorf("default buckets: got %v, want the semantic conventions' %v", got, semconvBounds)
	}
	own := []float64{0.5, 1, 2}
	if got := operationDurationBounds(t, telemetry.Config{DurationBuckets: own}); !slices.Equal(got, own) {
		t.Errorf("Config.DurationBuckets %v: got %v", own, got)
	}
}

// TestServerSpanLinksAmbientContext: the server span's parent is the
// client's context from params._meta, and the context current when the
// call arrived (an HTTP server span, say) is linked, as the MCP semantic
// conventions ask; with no ambient context there is no link.
func TestServerSpanLinksAmbientContext(t *testing.T) {
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	ambient := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xaa, 1}, SpanID: trace.SpanID{0xbb, 2}, TraceFlags: trace.FlagsSampled, Remote: true})
	for _, tt := range []struct {
		name     string
		ambient  bool
		wantLink bool
	}{
		{"ambient span", true, true},
		{"no ambient span", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(context.Background())
			tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			tool := tools.Wrap(tools.New(tools.Info{Name: "echo", Description: "d"}, func(context.Context, json.RawMessage) (tools.Result, error) {
				return tools.Text("ok"), nil
			}), tel.Middleware)
			ctx := context.Background()
			if tt.ambient {
				ctx = trace.ContextWithSpanContext(ctx, ambient)
			}
			ctx = telemetry.WithRequest(ctx, &telemetry.Request{TraceParent: "00-" + clientTrace + "-" + clientSpan + "-01"})
			if _, err := tool.Call(ctx, json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("got %d spans, want 1", len(spans))
			}
			s := spans[0]
			if s.Parent.TraceID().String() != clientTrace || s.Parent.SpanID().String() != clientSpan {
				t.Errorf("parent: got %s/%s, want the client's %s/%s", s.Parent.TraceID(), s.Parent.SpanID(), clientTrace, clientSpan)
			}
			var linked bool
			for _, l := range s.Links {
				if l.SpanContext.Equal(ambient) {
					linked = true
				}
			}
			if linked != tt.wantLink || len(s.Links) > 1 {
				t.Errorf("links: got %v, want a link to the ambient span: %v", s.Links, tt.wantLink)
			}
		})
	}
}
