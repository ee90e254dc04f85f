package otlp

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// traceMethod is the OTLP/gRPC trace service's Export method.
const traceMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// NewTraceExporter starts a span exporter that sends to s.
func NewTraceExporter(ctx context.Context, s Settings) (*otlptrace.Exporter, error) {
	return otlptrace.New(ctx, traceClient{newClient(s, traceMethod)})
}

// traceClient is otlptrace's Client over this package's client.
type traceClient struct{ c *client }

// Start does nothing: connections are made as exports need them.
func (traceClient) Start(context.Context) error { return nil }

// Stop ends exports under way, waits for them until ctx is done, and
// closes the connections.
func (t traceClient) Stop(ctx context.Context) error { return t.c.shutdown(ctx) }

// UploadTraces sends one ExportTraceServiceRequest.
func (t traceClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	msg, err := envelope(spans)
	if err != nil {
		return err
	}
	return t.c.export(ctx, msg)
}
