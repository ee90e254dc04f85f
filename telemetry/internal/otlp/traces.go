package otlp

import (
	"context"
	"fmt"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// traceMethod is the OTLP/gRPC trace service's Export method.
const traceMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// TraceExporter is a span exporter of the OpenTelemetry trace SDK that
// sends to one collector. It behaves as OpenTelemetry's otlptrace
// exporter does: an empty batch sends nothing, errors start with "traces
// export: ", only the first Shutdown shuts down. Build it with
// NewTraceExporter; its methods may be called concurrently.
type TraceExporter struct {
	c    *client
	once sync.Once
}

var _ sdktrace.SpanExporter = (*TraceExporter)(nil)

// NewTraceExporter makes a span exporter that sends to s. It connects
// when the first export needs it.
func NewTraceExporter(s Settings) *TraceExporter {
	return &TraceExporter{c: newClient(s, traceMethod)}
}

// ExportSpans sends spans as one ExportTraceServiceRequest, retrying as
// the client's policy says until the export's timeout. After Shutdown it
// fails.
func (e *TraceExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.c.stop.Err() != nil {
		return fmt.Errorf("traces export: %w", errStopped) // before the encoding's work
	}
	msg := traceRequest(spans)
	if len(msg) == 0 {
		return nil
	}
	if err := e.c.export(ctx, msg); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown ends exports under way, waits for them until ctx is done, and
// closes the connections; later exports fail. Calls after the first do
// nothing.
func (e *TraceExporter) Shutdown(ctx context.Context) error {
	var err error
	e.once.Do(func() { err = e.c.shutdown(ctx) })
	return err
}
