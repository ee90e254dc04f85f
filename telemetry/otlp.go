package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultServiceName is the service.name of exported telemetry unless
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says
// otherwise.
const DefaultServiceName = "mcp-tools"

// otlp holds the providers built from the environment; a nil one was not
// asked for.
type otlp struct {
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
//   - the exporters read the endpoint, headers, timeout and TLS variables
//     themselves; the trace provider reads OTEL_TRACES_SAMPLER(_ARG), and
//     the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func otlpFromEnv(ctx context.Context, getenv func(string) string, traces, metrics bool) (otlp, error) {
	var o otlp
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
		var exp sdktrace.SpanExporter
		switch p := protocol(getenv, "TRACES"); p {
		case "grpc":
			exp, err = otlptracegrpc.New(ctx)
		case "http/protobuf":
			exp, err = otlptracehttp.New(ctx)
		default:
			return o, fmt.Errorf("otlp: traces: protocol %q is not supported: use grpc or http/protobuf", p)
		}
		if err != nil {
			return o, fmt.Errorf("otlp: traces: %w", err)
		}
		o.traces = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if metrics {
		var exp sdkmetric.Exporter
		switch p := protocol(getenv, "METRICS"); p {
		case "grpc":
			exp, err = otlpmetricgrpc.New(ctx)
		case "http/protobuf":
			exp, err = otlpmetrichttp.New(ctx)
		default:
			err = fmt.Errorf("protocol %q is not supported: use grpc or http/protobuf", p)
		}
		if err != nil {
			if o.traces != nil {
				_ = o.traces.Shutdown(ctx)
			}
			return otlp{}, fmt.Errorf("otlp: metrics: %w", err)
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
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
}

// protocol is the OTLP protocol for signal, the signal's own variable
// first.
func protocol(getenv func(string) string, signal string) string {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	return "http/protobuf"
}
