package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
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
