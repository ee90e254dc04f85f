package server_test

import (
	"io"
	"log/slog"
	"strings"

	"github.com/mcp-tools/mcp-tools/server"
)

// testLogger is the tests' logger: level is trace, debug, info, warn or
// error (trace: server.LevelTrace); format is text or json. Records at
// LevelTrace are named TRACE, as the command names them.
func testLogger(w io.Writer, level, format string) *slog.Logger {
	l := map[string]slog.Level{"trace": server.LevelTrace, "debug": slog.LevelDebug, "info": slog.LevelInfo,
		"warn": slog.LevelWarn, "error": slog.LevelError}[strings.ToLower(level)]
	opts := &slog.HandlerOptions{Level: l, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if lv, ok := a.Value.Any().(slog.Level); ok && a.Key == slog.LevelKey && lv <= server.LevelTrace {
			a.Value = slog.StringValue("TRACE")
		}
		return a
	}}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
