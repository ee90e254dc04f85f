package telemetry

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// DefaultServiceName is the service.name of exported telemetry unless
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says
// otherwise.
const DefaultServiceName = "mcp-tools"

// OTLPFunc builds providers that export over OTLP the signals asked for
// (traces, metrics: at least one is true), configured by the standard
// variables read through getenv. Package otlpexport's FromEnv is one; a
// program can pass its own, or one that refuses (the mcp-tools command
// built without its service mode does).
type OTLPFunc func(ctx context.Context, getenv func(string) string, traces, metrics bool) (OTLPProviders, error)

// OTLPProviders are what an OTLPFunc builds: a provider for each signal it
// was asked for (nil for the others) and Shutdown, which flushes and stops
// them (nil: nothing to stop).
type OTLPProviders struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Shutdown       func(context.Context) error
}

// OTLPWanted reports which signals the standard variables, read through
// getenv, ask to export over OTLP:
//
//   - a signal is exported when OTEL_EXPORTER_OTLP_ENDPOINT or its own
//     OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT is set (not blank),
//   - unless OTEL_SDK_DISABLED is "true" or OTEL_{TRACES,METRICS}_EXPORTER
//     is "none" (or names an exporter other than "otlp").
func OTLPWanted(getenv func(string) string) (traces, metrics bool) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, false
	}
	return wants(getenv, "TRACES"), wants(getenv, "METRICS")
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
