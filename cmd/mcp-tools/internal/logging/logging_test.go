package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/cmd/mcp-tools/internal/logging"
	"github.com/mcp-tools/mcp-tools/server"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     logging.Config
		trace   bool   // a LevelTrace record is written
		debug   bool   // a DEBUG record is written
		wantSub string // in the TRACE line, when written
	}{
		{name: "trace json", cfg: logging.Config{Level: "trace", Format: "json"}, trace: true, debug: true, wantSub: `"level":"TRACE"`},
		{name: "trace text", cfg: logging.Config{Level: "TRACE"}, trace: true, debug: true, wantSub: "level=TRACE"},
		{name: "debug", cfg: logging.Config{Level: "debug"}, debug: true},
		{name: "zero value is info", cfg: logging.Config{}},
		{name: "warning", cfg: logging.Config{Level: "warning", Format: "text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.cfg.Output = &buf
			log, err := logging.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			log.Log(context.Background(), server.LevelTrace, "traced")
			log.Debug("debugged")
			out := buf.String()
			if got := strings.Contains(out, "traced"); got != tt.trace {
				t.Errorf("trace record written = %v, want %v; output:\n%s", got, tt.trace, out)
			}
			if got := strings.Contains(out, "debugged"); got != tt.debug {
				t.Errorf("debug record written = %v, want %v; output:\n%s", got, tt.debug, out)
			}
			if tt.wantSub != "" && !strings.Contains(out, tt.wantSub) {
				t.Errorf("output = %q, want it to contain %q", out, tt.wantSub)
			}
			if tt.cfg.Format == "json" {
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					if !json.Valid([]byte(line)) {
						t.Errorf("json format wrote a line that is not JSON: %q", line)
					}
				}
			}
		})
	}
}

func TestNewRefusesUnknown(t *testing.T) {
	tests := []struct {
		name string
		cfg  logging.Config
		want string
	}{
		{name: "level", cfg: logging.Config{Level: "loud"}, want: `unknown log level "loud"`},
		{name: "format", cfg: logging.Config{Format: "xml"}, want: `unknown log format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := logging.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New(%+v) error = %v, want one containing %q", tt.cfg, err, tt.want)
			}
		})
	}
}

// TestTintEscapesControls: on a terminal, text a model wrote (a tool's
// input, an error quoting it) must not reach it as escape sequences or
// line breaks; only tint's own colours (SGR sequences) may.
func TestTintEscapesControls(t *testing.T) {
	const hostile = "\x1b[2J\x1b[1A\x1b[2K\x1b]0;title\x07forged\nINF fake line\r\x9b31m\x7f"
	var buf bytes.Buffer
	log := logging.NewTint(&buf, server.LevelTrace)
	log.Debug("call detail "+hostile, "tool", hostile, "input", hostile, "text", `a literal \x1b[2J, quoted`, "err", errors.New(hostile),
		"args", []string{hostile}, hostile, 1, slog.Group("g", "k", hostile))
	log.Log(context.Background(), server.LevelTrace, "traced")
	out := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(buf.String(), "")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Errorf("wrote %d lines, want 2:\n%q", len(lines), out)
	}
	for _, r := range strings.TrimSuffix(out, "\n") {
		if r != '\n' && (r < ' ' || r == 0x7f || r >= 0x80 && r <= 0x9f) {
			t.Fatalf("control character %q reached the terminal: %q", r, out)
		}
	}
	if !strings.Contains(out, `\x1B[2J`) || !strings.Contains(lines[1], "TRACE") {
		t.Errorf("escaped text or the TRACE level missing: %q", out)
	}
}
