package server_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := server.NewLogger(server.LogConfig{Level: "trace", Format: "json", Output: &buf})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := tools.NewRegistry(testTools()...)
	if _, err := server.New(reg, server.Options{Logger: log}); err != nil {
		t.Fatal(err)
	}
	descriptors := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("--log-format json wrote a line that is not JSON: %q", line)
		}
		if rec["msg"] == "tool descriptor" && rec["level"] == "TRACE" {
			descriptors++
		}
	}
	if descriptors != len(testTools()) {
		t.Errorf("%d descriptors logged at TRACE, want one per tool (%d)", descriptors, len(testTools()))
	}

	buf.Reset()
	log, _ = server.NewLogger(server.LogConfig{Level: "debug", Output: &buf})
	server.New(reg, server.Options{Logger: log})
	if strings.Contains(buf.String(), "tool descriptor") {
		t.Error("descriptors logged above TRACE")
	}
	for _, bad := range []server.LogConfig{{Level: "loud"}, {Format: "xml"}} {
		if _, err := server.NewLogger(bad); err == nil {
			t.Errorf("NewLogger(%+v) accepted", bad)
		}
	}
}
