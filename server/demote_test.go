package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestLibraryInfoDemoted: mcp-go's own INFO notes reach our log at DEBUG
// only, so INFO stays one line per call; its warnings stay warnings.
func TestLibraryInfoDemoted(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(demoted{slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo})})
	log.Info("Sweeping expired session")
	log.Warn("something is wrong")
	if strings.Contains(b.String(), "Sweeping") || !strings.Contains(b.String(), "level=WARN") {
		t.Errorf("at INFO the log shows %q; want only the warning", b.String())
	}
}
