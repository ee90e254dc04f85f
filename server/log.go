package server

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
)

// LevelTrace is a level below DEBUG: each tool descriptor's JSON is logged
// at start-up.
const LevelTrace = slog.Level(-8)

// LogConfig chooses how the server logs. The zero value logs at INFO, as
// plain text, to os.Stderr.
type LogConfig struct {
	// Level is trace, debug, info (the default), warn or error.
	Level string
	// Format is text (the default: coloured by tint when the output is a
	// terminal, plain otherwise) or json.
	Format string
	// Output is where logs go; nil means os.Stderr. In stdio mode stdout is
	// the protocol, so logs must never go there.
	Output io.Writer
}

// ParseLevel parses a level name as LogConfig.Level accepts it.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "trace":
		return LevelTrace, nil
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

// NewLogger returns the logger cfg describes.
func NewLogger(cfg LogConfig) (*slog.Logger, error) {
	level, err := ParseLevel(cfg.Level)
	if err != nil {
		return nil, err
	}
	w := cfg.Output
	if w == nil {
		w = os.Stderr
	}
	replace := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.LevelKey {
			if l, ok := a.Value.Any().(slog.Level); ok && l <= LevelTrace {
				a.Value = slog.StringValue("TRACE")
			}
		}
		return a
	}
	switch strings.ToLower(cfg.Format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: replace})), nil
	case "", "text":
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly, ReplaceAttr: replace})), nil
		}
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: replace})), nil
	}
	return nil, fmt.Errorf("unknown log format %q: use text or json", cfg.Format)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
