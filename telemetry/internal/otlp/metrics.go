package otlp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// metricsMethod is the OTLP/gRPC metrics service's Export method.
const metricsMethod = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"

// MetricExporter is a push exporter of the OpenTelemetry metrics SDK that
// sends to one collector. Build it with NewMetricExporter.
type MetricExporter struct {
	c           *client
	temporality sdkmetric.TemporalitySelector
	aggregation sdkmetric.AggregationSelector
}

var _ sdkmetric.Exporter = (*MetricExporter)(nil)

// NewMetricExporter makes an exporter that sends to s, with the
// temporality and histogram aggregation that
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE and
// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION ask for.
func NewMetricExporter(getenv func(string) string, s Settings) (*MetricExporter, error) {
	e := &MetricExporter{temporality: sdkmetric.DefaultTemporalitySelector, aggregation: sdkmetric.DefaultAggregationSelector}
	switch v := strings.ToLower(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"))); v {
	case "", "cumulative":
	case "delta":
		e.temporality = sdkmetric.DeltaTemporalitySelector
	case "lowmemory":
		e.temporality = sdkmetric.LowMemoryTemporalitySelector
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: %q is not supported: use cumulative, delta or lowmemory", v)
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"))); v {
	case "", "explicit_bucket_histogram":
	case "base2_exponential_bucket_histogram":
		e.aggregation = func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
			if k == sdkmetric.InstrumentKindHistogram {
				return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
			}
			return sdkmetric.DefaultAggregationSelector(k)
		}
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION: %q is not supported: use explicit_bucket_histogram or base2_exponential_bucket_histogram", v)
	}
	e.c = newClient(s, metricsMethod)
	return e, nil
}

// Temporality returns the temporality of instruments of kind k.
func (e *MetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

// Aggregation returns the aggregation of instruments of kind k.
func (e *MetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return e.aggregation(k)
}

// Export sends rm as one ExportMetricsServiceRequest. Metrics of an
// aggregation OTLP cannot carry are left out and reported in the error;
// the others are sent.
func (e *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if e.c.stop.Err() != nil {
		return errStopped // before the encoding's work
	}
	msg, err := metricsRequest(rm)
	return errors.Join(err, e.c.export(ctx, msg))
}

// ForceFlush does nothing: Export sends at once.
func (e *MetricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

// Shutdown ends exports under way, waiting for them until ctx is done;
// later ones fail.
func (e *MetricExporter) Shutdown(ctx context.Context) error { return e.c.shutdown(ctx) }
