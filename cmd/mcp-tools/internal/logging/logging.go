// Package logging builds the command's logger from its flags: a level name,
// a format, and where the lines go. Text goes through tint, in colour, when
// the output is a terminal. The library packages never build a logger; they
// take a *slog.Logger in their options.
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"

	"github.com/mcp-tools/mcp-tools/server"
)

// Config chooses how the command logs. The zero value logs at INFO, as
// plain text, to os.Stderr.
type Config struct {
	// Level is trace, debug, info (the default), warn or error, in any
	// case. trace is server.LevelTrace: each tool descriptor's JSON is
	// logged at start-up.
	Level string
	// Format is text (the default: coloured by tint when the output is a
	// terminal, plain otherwise) or json.
	Format string
	// Output is where logs go; nil means os.Stderr. In stdio mode stdout is
	// the protocol, so logs must never go there.
	Output io.Writer
}

// ParseLevel parses a level name as Config.Level accepts it.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "trace":
		return server.LevelTrace, nil
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q: use trace, debug, info, warn or error", s)
}

// New returns the logger cfg describes. Records at server.LevelTrace and
// below are named TRACE. It fails on an unknown level or format.
func New(cfg Config) (*slog.Logger, error) {
	level, err := ParseLevel(cfg.Level)
	if err != nil {
		return nil, err
	}
	w := cfg.Output
	if w == nil {
		w = os.Stderr
	}
	switch strings.ToLower(cfg.Format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: nameTrace})), nil
	case "", "text":
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly, ReplaceAttr: nameTrace})), nil
		}
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: nameTrace})), nil
	}
	return nil, fmt.Errorf("unknown log format %q: use text or json", cfg.Format)
}

// nameTrace names levels at server.LevelTrace and below TRACE (slog would
// write DEBUG-4).
func nameTrace(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok && l <= server.LevelTrace {
			a.Value = slog.StringValue("TRACE")
		}
	}
	return a
}
