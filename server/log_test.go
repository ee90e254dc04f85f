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
	log := testLogger(&buf, "trace", "json")
	reg, _ := tools.NewRegistry(testTools()...)
	if _, err := server.New(reg, server.Options{Logger: log}); err != nil {
		t.Fatal(err)
	}
	descriptors := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("the JSON handler wrote a line that is not JSON: %q", line)
		}
		if rec["msg"] == "tool descriptor" && rec["level"] == "TRACE" {
			descriptors++
		}
	}
	if descriptors != len(testTools()) {
		t.Errorf("%d descriptors logged at TRACE, want one per tool (%d)", descriptors, len(testTools()))
	}

	buf.Reset()
	log = testLogger(&buf, "debug", "text")
	server.New(reg, server.Options{Logger: log})
	if strings.Contains(buf.String(), "tool descriptor") {
		t.Error("descriptors logged above TRACE")
	}
}
