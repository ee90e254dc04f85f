// Package otlpexport exports a server's traces and its OpenTelemetry
// metric over OTLP, with the OpenTelemetry SDK, as the standard
// OTEL_EXPORTER_OTLP_* variables say: give FromEnv to telemetry.Config's
// OTLP field.
//
// It is a package of its own so that a program that does not export
// (the mcp-tools command's default build, serving Claude Desktop over
// stdio) does not link the SDK: its package initialisers and code cost
// every process about a megabyte of idle memory, exporting or not.
package otlpexport

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/telemetry/internal/otlp"
)

// FromEnv is a telemetry.OTLPFunc: it builds an OTLP exporter for each
// signal asked for (telemetry.New asks for those telemetry.OTLPWanted
// reports and its Config leaves without a provider):
//
//   - OTEL_EXPORTER_OTLP_{TRACES_,METRICS_,}PROTOCOL picks "grpc" or
//     "http/protobuf" (the default);
//   - the endpoint, headers, timeout, compression and TLS variables are
//     read through getenv; the trace provider reads
//     OTEL_TRACES_SAMPLER(_ARG), and the resource OTEL_SERVICE_NAME and
//     OTEL_RESOURCE_ATTRIBUTES, from the process environment.
//
// A variable it cannot use is an error naming it; nothing is started then.
func FromEnv(ctx context.Context, getenv func(string) string, traces, metrics bool) (telemetry.OTLPProviders, error) {
	var o telemetry.OTLPProviders
	if !traces && !metrics {
		return o, nil
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", telemetry.DefaultServiceName)),
		resource.WithFromEnv(), // after the default: the environment wins
	)
	if err != nil {
		return o, fmt.Errorf("otlp: resource: %w", err)
	}
	var tp *sdktrace.TracerProvider
	if traces {
		st, err := otlp.FromEnv(getenv, "TRACES", "/v1/traces")
		if err != nil {
			return o, fmt.Errorf("otlp: traces: %w", err)
		}
		tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(otlp.NewTraceExporter(st)), sdktrace.WithResource(res))
		o.TracerProvider = tp
	}
	var mp *sdkmetric.MeterProvider
	if metrics {
		exp, err := metricExporter(getenv)
		if err != nil {
			if tp != nil {
				_ = tp.Shutdown(ctx)
			}
			return telemetry.OTLPProviders{}, fmt.Errorf("otlp: metrics: %w", err)
		}
		mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		o.MeterProvider = mp
	}
	o.Shutdown = func(ctx context.Context) error {
		var errs []error
		if tp != nil {
			errs = append(errs, tp.Shutdown(ctx))
		}
		if mp != nil {
			errs = append(errs, mp.Shutdown(ctx))
		}
		return errors.Join(errs...)
	}
	return o, nil
}

// metricExporter makes the OTLP metric exporter the variables describe.
func metricExporter(getenv func(string) string) (*otlp.MetricExporter, error) {
	st, err := otlp.FromEnv(getenv, "METRICS", "/v1/metrics")
	if err != nil {
		return nil, err
	}
	return otlp.NewMetricExporter(getenv, st)
}
