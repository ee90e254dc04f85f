package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/telemetry/internal/prom"
)

// DefaultMaxAttributeBytes caps an argument or result attribute recorded
// with Config.RecordArguments.
const DefaultMaxAttributeBytes = 1024

// DefaultDurationBuckets are the buckets, in seconds, of the duration
// histograms: from 1 ms (an in-process tool) to 5 minutes (a person's
// approval, a slow subprocess).
var DefaultDurationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// OperationDurationBuckets are the buckets, in seconds, of the
// OpenTelemetry histogram mcp.server.operation.duration when
// Config.DurationBuckets is not set: the ExplicitBucketBoundaries the MCP
// semantic conventions advise for it.
var OperationDurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// scope is the instrumentation scope of the spans and metrics made here.
const scope = "github.com/mcp-tools/mcp-tools/telemetry"

// Config configures a Telemetry. The zero value works: Prometheus metrics
// (with the standard go_* and process_* ones), and no traces or
// OpenTelemetry metrics; with OTLP set to otlpexport.FromEnv, those are
// exported when the OTEL_EXPORTER_OTLP_* variables ask for them.
type Config struct {
	// OmitRuntimeMetrics leaves out of the Prometheus metrics the Go
	// runtime and process families (go_*, process_*) and the handler's
	// promhttp_metric_handler_errors_total: for a program that embeds the
	// server and serves those from a registry of its own, beside
	// WriteMetrics. False: they are written, with the names, types and
	// help texts of the Prometheus Go client's default collectors.
	OmitRuntimeMetrics bool
	// TracerProvider makes the spans. Nil: OTLP's when the environment
	// asks for an OTLP export of traces (see OTLPWanted) and OTLP is set,
	// else no spans at all.
	TracerProvider trace.TracerProvider
	// MeterProvider records the OpenTelemetry metric
	// mcp.server.operation.duration. Nil: OTLP's when the environment asks
	// for an OTLP export of metrics and OTLP is set, else the metric is not
	// recorded (the Prometheus metrics are, always).
	MeterProvider metric.MeterProvider
	// RecordArguments puts each call's arguments (as tools.ShowArgsN shows
	// them: secret fields hidden) and its result text on its span, as
	// gen_ai.tool.call.arguments and gen_ai.tool.call.result. False:
	// argument and result values are never recorded.
	RecordArguments bool
	// MaxAttributeBytes caps each of those two attributes, "…" marking a
	// cut included; both are valid UTF-8. Zero: DefaultMaxAttributeBytes.
	MaxAttributeBytes int
	// DurationBuckets are the buckets, in seconds, of the duration
	// histograms, increasing (New fails otherwise). Nil or empty:
	// DefaultDurationBuckets for the Prometheus histograms, and
	// OperationDurationBuckets (the semantic conventions' own) for
	// mcp.server.operation.duration.
	DurationBuckets []float64
	// OTLP builds the OTLP exporters the environment asks for (see
	// OTLPWanted), for the signals left without a provider above; New
	// fails with its error, and Shutdown stops what it started.
	// otlpexport.FromEnv is the one to use: this package does not link
	// the OpenTelemetry SDK itself. Nil: nothing is exported over OTLP,
	// whatever the environment says.
	OTLP OTLPFunc
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
	reg      *prom.Registry
	handler  http.Handler
	tracer   trace.Tracer // nil: tracing off
	opDur    operationDuration
	otelMetr bool // opDur records somewhere

	calls         *prom.CounterVec
	duration      *prom.HistogramVec
	inFlight      *prom.GaugeVec
	sessions      *prom.Gauge
	approvals     *prom.CounterVec
	approvalWait  *prom.HistogramVec
	budget        *prom.CounterVec
	exits         *prom.CounterVec
	httpResponses *prom.CounterVec

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
	opBuckets := cfg.DurationBuckets
	if len(cfg.DurationBuckets) == 0 {
		cfg.DurationBuckets = DefaultDurationBuckets
		opBuckets = OperationDurationBuckets
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	t := &Telemetry{cfg: cfg, reg: prom.NewRegistry()}
	var handlerErrors *prom.CounterVec
	if !cfg.OmitRuntimeMetrics {
		handlerErrors = prom.NewHandlerErrors()
		t.reg.MustRegister(prom.NewGoCollector(), prom.NewProcessCollector(), handlerErrors)
	}
	if err := t.register(); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	t.handler = prom.Handler(t.reg, handlerErrors)

	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if cfg.OTLP != nil && (tp == nil || mp == nil) {
		traces, metrics := OTLPWanted(cfg.Getenv)
		traces, metrics = traces && tp == nil, metrics && mp == nil
		if traces || metrics {
			o, err := cfg.OTLP(context.Background(), cfg.Getenv, traces, metrics)
			if err != nil {
				return nil, fmt.Errorf("telemetry: %w", err)
			}
			if traces && o.TracerProvider != nil {
				tp = o.TracerProvider
			}
			if metrics && o.MeterProvider != nil {
				mp = o.MeterProvider
			}
			if o.Shutdown != nil {
				t.shutdown = append(t.shutdown, o.Shutdown)
			}
		}
	}
	if tp != nil {
		t.tracer = tp.Tracer(scope)
	}
	if mp != nil {
		d, err := newOperationDuration(mp.Meter(scope), opBuckets)
		if err != nil {
			_ = t.Shutdown(context.Background()) // the exporters OTLP started
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		t.opDur, t.otelMetr = d, true
	}
	return t, nil
}

// Handler serves the Prometheus metrics in the text exposition format
// 0.0.4 (mounted at /metrics by the server): to GET and HEAD, gzipped when
// the request accepts gzip. On a nil Telemetry it answers 404.
func (t *Telemetry) Handler() http.Handler {
	if t == nil {
		return http.NotFoundHandler()
	}
	return t.handler
}

// WriteMetrics writes the Prometheus metrics to w in the text exposition
// format 0.0.4, as Handler serves them: for a program that embeds the
// server and serves them beside metrics of its own (set
// Config.OmitRuntimeMetrics when those include the go_* and process_*
// families). It writes nothing on a nil Telemetry.
func (t *Telemetry) WriteMetrics(w io.Writer) error {
	if t == nil {
		return nil
	}
	if err := t.reg.WriteText(w); err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	return nil
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
