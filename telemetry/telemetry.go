package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxAttributeBytes caps an argument or result attribute recorded
// with Config.RecordArguments.
const DefaultMaxAttributeBytes = 1024

// DefaultDurationBuckets are the buckets, in seconds, of the duration
// histograms: from 1 ms (an in-process tool) to 5 minutes (a person's
// approval, a slow subprocess).
var DefaultDurationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// scope is the instrumentation scope of the spans and metrics made here.
const scope = "github.com/mcp-tools/mcp-tools/telemetry"

// Config configures a Telemetry. The zero value works: Prometheus metrics
// in a registry of their own (with the Go and process collectors), and
// traces and OpenTelemetry metrics only when the OTEL_EXPORTER_OTLP_*
// variables ask for them.
type Config struct {
	// Registry holds the Prometheus metrics; Handler serves it. Nil: a new
	// registry with the Go runtime and process collectors.
	Registry *prometheus.Registry
	// TracerProvider makes the spans. Nil: an OTLP exporter when the
	// environment asks for one (see the package documentation), else no spans at all.
	TracerProvider trace.TracerProvider
	// MeterProvider records the OpenTelemetry metric
	// mcp.server.operation.duration. Nil: an OTLP exporter when the
	// environment asks for one, else the metric is not recorded (the
	// Prometheus metrics are, always).
	MeterProvider metric.MeterProvider
	// RecordArguments puts each call's arguments (as tools.ShowArgs shows
	// them: secret fields hidden) and its result text on its span, as
	// gen_ai.tool.call.arguments and gen_ai.tool.call.result. False:
	// argument and result values are never recorded.
	RecordArguments bool
	// MaxAttributeBytes caps each of those two attributes. Zero:
	// DefaultMaxAttributeBytes.
	MaxAttributeBytes int
	// DurationBuckets are the buckets, in seconds, of the duration
	// histograms. Nil: DefaultDurationBuckets.
	DurationBuckets []float64
	// Getenv reads the OTEL_EXPORTER_OTLP_* variables: whether to export
	// over OTLP, where and how. Nil: os.Getenv. (The sampler and the
	// resource read the process environment.)
	Getenv func(string) string
}

// Telemetry holds a server's metrics and tracer. Build it with New; it is
// safe for concurrent use, and every method does nothing on a nil
// *Telemetry.
type Telemetry struct {
	cfg      Config
	reg      *prometheus.Registry
	handler  http.Handler
	tracer   trace.Tracer // nil: tracing off
	opDur    mcpconv.ServerOperationDuration
	otelMetr bool // opDur records somewhere

	calls         *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	inFlight      *prometheus.GaugeVec
	sessions      prometheus.Gauge
	approvals     *prometheus.CounterVec
	approvalWait  *prometheus.HistogramVec
	budget        *prometheus.CounterVec
	exits         *prometheus.CounterVec
	httpResponses *prometheus.CounterVec

	// known holds the tool names a Middleware was built for: the only
	// values a tool label takes.
	known sync.Map // string -> struct{}

	// shutdown ends the exporters New started.
	shutdown []func(context.Context) error
}

// New registers the metrics and sets up tracing as cfg says. Exporters it
// starts (only when the environment asks for OTLP) run until Shutdown.
func New(cfg Config) (*Telemetry, error) {
	if cfg.MaxAttributeBytes <= 0 {
		cfg.MaxAttributeBytes = DefaultMaxAttributeBytes
	}
	if cfg.DurationBuckets == nil {
		cfg.DurationBuckets = DefaultDurationBuckets
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	t := &Telemetry{cfg: cfg, reg: cfg.Registry}
	if t.reg == nil {
		t.reg = prometheus.NewRegistry()
		t.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if err := t.register(); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	t.handler = promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{Registry: t.reg})

	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil || mp == nil {
		otlp, err := otlpFromEnv(context.Background(), cfg.Getenv, tp == nil, mp == nil)
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		if otlp.traces != nil {
			tp = otlp.traces
			t.shutdown = append(t.shutdown, otlp.traces.Shutdown)
		}
		if otlp.metrics != nil {
			mp = otlp.metrics
			t.shutdown = append(t.shutdown, otlp.metrics.Shutdown)
		}
	}
	if tp != nil {
		t.tracer = tp.Tracer(scope)
	}
	if mp != nil {
		d, err := mcpconv.NewServerOperationDuration(mp.Meter(scope), metric.WithExplicitBucketBoundaries(cfg.DurationBuckets...))
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		t.opDur, t.otelMetr = d, true
	}
	return t, nil
}

// Handler serves the Prometheus metrics in the text exposition format
// (mounted at /metrics by the server). On a nil Telemetry it answers 404.
func (t *Telemetry) Handler() http.Handler {
	if t == nil {
		return http.NotFoundHandler()
	}
	return t.handler
}

// Tracing reports whether spans are made.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }

// Shutdown flushes and stops the exporters New started, waiting at most
// until ctx is done. It does nothing when none was started.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, fn := range t.shutdown {
		if err := fn(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}
