// Package logging builds the command's logger from its flags: a level name,
// a format, and where the lines go. Text goes through tint, in colour, when
// the output is a terminal. The library packages never build a logger; they
// take a *slog.Logger in their options.
package logging

import (
	"encoding"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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
			return newTint(w, level), nil
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

// newTint returns the coloured logger for a terminal. tint writes the
// message as it is, and puts a value's ESC bytes back after quoting it (so
// that values may carry colours): a model's text in a log line (a tool
// call's input and output at debug level, a panic's message) could clear
// the screen, move the cursor or rewrite the lines above. Every control
// character in a message, a key or a value is written escaped instead
// (\x1b, \n), so only tint's own colours reach the terminal.
func newTint(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr { return escapeControls(nameTrace(groups, a)) }}))
}

// escapeControls escapes the control characters of a's key and value.
func escapeControls(a slog.Attr) slog.Attr {
	a.Key = escape(a.Key)
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(escape(a.Value.String()))
	case slog.KindAny:
		// An error, a slice of arguments...: tint prints it with %+v (or
		// MarshalText) and restores its ESC bytes too.
		v := a.Value.Any()
		s := fmt.Sprintf("%+v", v)
		if m, ok := v.(encoding.TextMarshaler); ok {
			if b, err := m.MarshalText(); err == nil {
				s = string(b)
			}
		}
		if e := escape(s); e != s {
			a.Value = slog.StringValue(e)
		}
	}
	return a
}

// escape writes each control character of s (C0, DEL, C1) as Go would
// quote it, and each invalid byte as \xNN. ESC is written \x1B, and so is
// the text \x1b: tint, after quoting a value, turns every \x1b in it back
// into an ESC byte, even one that was text (a backslash, then x1b).
func escape(s string) string {
	if !strings.Contains(s, `\x1b`) && !strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || unicode.IsControl(r) }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return strings.ReplaceAll(b.String(), `\x1b`, `\x1B`)
}
