package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcp-tools/mcp-tools/telemetry/internal/otlp"
)

// DefaultServiceName is the service.name of exported telemetry unless
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says
// otherwise.
const DefaultServiceName = "mcp-tools"

// otlpProviders holds the providers built from the environment; a nil
// one was not asked for.
type otlpProviders struct {
	traces  *sdktrace.TracerProvider
	metrics *sdkmetric.MeterProvider
}

// otlpFromEnv builds an OTLP exporter for each signal the standard
// variables ask for, and nothing else:
//
//   - a signal is exported when OTEL_EXPORTER_OTLP_ENDPOINT or its own
//     OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT is set, unless
//     OTEL_SDK_DISABLED is "true" or OTEL_{TRACES,METRICS}_EXPORTER is
//     "none";
//   - OTEL_EXPORTER_OTLP_{TRACES_,METRICS_,}PROTOCOL picks "grpc" or
//     "http/protobuf" (the default);
//   - the endpoint, headers, timeout, compression and TLS variables are
//     read through getenv (see internal/otlp); the trace provider reads
//     OTEL_TRACES_SAMPLER(_ARG), and the resource OTEL_SERVICE_NAME and
//     OTEL_RESOURCE_ATTRIBUTES, from the process environment.
func otlpFromEnv(ctx context.Context, getenv func(string) string, traces, metrics bool) (otlpProviders, error) {
	var o otlpProviders
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return o, nil
	}
	traces = traces && wants(getenv, "TRACES")
	metrics = metrics && wants(getenv, "METRICS")
	if !traces && !metrics {
		return o, nil
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithFromEnv(), // after the default: the environment wins
	)
	if err != nil {
		return o, fmt.Errorf("otlp: resource: %w", err)
	}
	if traces {
		st, err := otlp.FromEnv(getenv, "TRACES", "/v1/traces")
		if err != nil {
			return o, fmt.Errorf("otlp: traces: %w", err)
		}
		o.traces = sdktrace.NewTracerProvider(sdktrace.WithBatcher(otlp.NewTraceExporter(st)), sdktrace.WithResource(res))
	}
	if metrics {
		exp, err := metricExporter(getenv)
		if err != nil {
			if o.traces != nil {
				_ = o.traces.Shutdown(ctx)
			}
			return otlpProviders{}, fmt.Errorf("otlp: metrics: %w", err)
		}
		o.metrics = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
	}
	return o, nil
}

// wants reports whether the variables ask for signal ("TRACES" or
// "METRICS") to be exported over OTLP.
func wants(getenv func(string) string, signal string) bool {
	switch strings.ToLower(strings.TrimSpace(getenv("OTEL_" + signal + "_EXPORTER"))) {
	case "", "otlp":
	default:
		return false // "none", or an exporter this server does not have
	}
	return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" ||
		strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT")) != ""
}

// metricExporter makes the OTLP metric exporter the variables describe.
func metricExporter(getenv func(string) string) (*otlp.MetricExporter, error) {
	st, err := otlp.FromEnv(getenv, "METRICS", "/v1/metrics")
	if err != nil {
		return nil, err
	}
	return otlp.NewMetricExporter(getenv, st)
}
