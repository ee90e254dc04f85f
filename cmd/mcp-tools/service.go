//go:build service

package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/state/redisstore"
	"github.com/mcp-tools/mcp-tools/telemetry/otlpexport"
)

// This file is the service build (go build -tags service): state shared
// through Redis (--state) and OTLP export (OTEL_EXPORTER_OTLP_*), the two
// things a fleet of replicas needs that one process on a desktop does
// not. They are a build of their own because their libraries (go-redis,
// the OpenTelemetry SDK) cost every process about 2 MiB of idle memory,
// used or not; embedded.go is the default build's side.

// serviceBuild reports whether this is the service build.
const serviceBuild = true

// buildName names this build in `mcp-tools version`.
const buildName = "service build: --state redis://, OTLP export"

// openShared opens the Redis store url names (--state, expanded).
func openShared(url string, log *slog.Logger) (state.Store, error) {
	st, err := redisstore.Open(url, redisstore.Options{})
	if err != nil {
		return nil, err
	}
	// go-redis reports each failed connection on its own; the server
	// reports the store's state (a WARN when it goes, /readyz): its lines
	// are DEBUG in our log, never its own lines on stderr.
	redis.SetLogger(redisLog{log})
	return st, nil
}

// redisLog passes go-redis's log lines to the server's log at DEBUG.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// otlpExport builds the OTLP exporters the environment asks for.
var otlpExport = otlpexport.FromEnv
