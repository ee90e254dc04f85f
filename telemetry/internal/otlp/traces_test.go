package otlp

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestTraceExporterBehavesAsOtlptrace: on empty batches, after Shutdown,
// on a second Shutdown and on errors, TraceExporter does what
// OpenTelemetry's otlptracehttp exporter does.
func TestTraceExporterBehavesAsOtlptrace(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		answer   func(int, http.ResponseWriter)
		run      func(sdktrace.SpanExporter) error
		err      bool
		requests int
	}{
		{"no span", nil, func(e sdktrace.SpanExporter) error { return e.ExportSpans(ctx, nil) }, false, 0},
		{"only a nil span", nil, func(e sdktrace.SpanExporter) error { return e.ExportSpans(ctx, []sdktrace.ReadOnlySpan{nil}) }, false, 0},
		{"spans", nil, func(e sdktrace.SpanExporter) error { return e.ExportSpans(ctx, testSpans()) }, false, 1},
		{"after Shutdown", nil, func(e sdktrace.SpanExporter) error {
			if err := e.Shutdown(ctx); err != nil {
				return err
			}
			return e.ExportSpans(ctx, testSpans())
		}, true, 0},
		{"a second Shutdown", nil, func(e sdktrace.SpanExporter) error {
			if err := e.Shutdown(ctx); err != nil {
				return err
			}
			return e.Shutdown(ctx)
		}, false, 0},
		{"a collector's error", func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) },
			func(e sdktrace.SpanExporter) error { return e.ExportSpans(ctx, testSpans()) }, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			theirs, ours := newHTTPCollector(t, tt.answer), newHTTPCollector(t, tt.answer)
			te, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(theirs.URL+"/v1/traces"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = te.Shutdown(ctx) })
			oe := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ours.URL}, "TRACES", "/v1/traces"))
			for _, c := range []struct {
				who string
				exp sdktrace.SpanExporter
				col *httpCollector
			}{{"otlptracehttp", te, theirs}, {"ours", oe, ours}} {
				err := tt.run(c.exp)
				if (err != nil) != tt.err {
					t.Errorf("%s: got error %v, want an error: %v", c.who, err, tt.err)
				}
				if err != nil && !strings.HasPrefix(err.Error(), "traces export: ") {
					t.Errorf("%s: got error %q, want it to start with \"traces export: \"", c.who, err)
				}
				if n := len(c.col.requests()); n != tt.requests {
					t.Errorf("%s: got %d requests, want %d", c.who, n, tt.requests)
				}
			}
		})
	}
}
