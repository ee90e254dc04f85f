package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/tools"
)

// BenchmarkMiddleware is the per-call cost of the middleware around an
// echo: none (the floor), metrics only (tracing off, the default), and
// metrics with tracing at 100% sampling into a no-op exporter.
func BenchmarkMiddleware(b *testing.B) {
	echo := func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Text("hello"), nil }
	info := tools.Info{Name: "echo", Description: "d"}
	req := &telemetry.Request{ID: "1", ProtocolVersion: "2025-06-18", Transport: telemetry.TransportPipe}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	metricsOnly, err := telemetry.New(telemetry.Config{Getenv: noEnv})
	if err != nil {
		b.Fatal(err)
	}
	traced, err := telemetry.New(telemetry.Config{Getenv: noEnv, TracerProvider: tp})
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		fn   tools.Func
	}{
		{"bare", echo},
		{"metrics", metricsOnly.Middleware(info, echo)},
		{"metrics+tracing", traced.Middleware(info, echo)},
	}
	args := json.RawMessage(`{"text":"hello"}`)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := telemetry.WithRequest(context.Background(), req)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.fn(ctx, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
