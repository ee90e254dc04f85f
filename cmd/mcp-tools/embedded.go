//go:build !service

package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/telemetry"
)

// This file is the default build's side of service.go: one process, its
// state in memory, no OTLP export. It links neither go-redis nor the
// OpenTelemetry SDK (about 2 MiB of idle memory), and says how to get the
// build that has them when asked for either.

// serviceBuild reports whether this is the service build.
const serviceBuild = false

// buildName names this build in `mcp-tools version`.
const buildName = "embedded build: state in memory, no OTLP export (-tags service adds them)"

// openShared refuses: this build keeps its state in memory.
func openShared(string, *slog.Logger) (state.Store, error) {
	return nil, errNoSharedState
}

// otlpExport refuses, naming the variable that asks for an export, rather
// than serving without the traces an operator configured.
func otlpExport(_ context.Context, getenv func(string) string, traces, metrics bool) (telemetry.OTLPProviders, error) {
	name := "OTEL_EXPORTER_OTLP_ENDPOINT"
	if strings.TrimSpace(getenv(name)) == "" {
		if name = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"; !traces {
			name = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
		}
	}
	return telemetry.OTLPProviders{}, fmt.Errorf("%s asks for an OTLP export, which is not in this build (unset it, or set OTEL_SDK_DISABLED=true); %s", name, serviceHint)
}
