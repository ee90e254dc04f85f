package telemetry_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

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
