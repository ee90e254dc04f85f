package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// reapConfig declares a tool that leaves an orphan on every call, and one
// that counts the zombie children of PID 1.
const reapConfig = `
tools:
  - name: orphaner
    description: Answers, leaving a background child that exits after it.
    process:
      command: ["sh", "-c", "(sleep 0.05 &) ; echo '{\"output\": \"ok\", \"success\": true}'"]
  - name: zombies
    description: Counts the zombie children of PID 1.
    process:
      command: ["sh", "-c", "n=$(cat /proc/[0-9]*/stat 2>/dev/null | awk '$3 == \"Z\" && $4 == 1' | wc -l); echo \"{\\\"output\\\": \\\"$n\\\", \\\"success\\\": true}\""]
`

// TestServeAsPID1ReapsOrphans runs the server as PID 1 of a new PID
// namespace, where every orphan of its tools becomes its child.
func TestServeAsPID1ReapsOrphans(t *testing.T) {
	if err := exec.Command("unshare", "-fp", "--mount-proc", "true").Run(); err != nil {
		t.Skipf("cannot make a PID namespace here (unshare -fp --mount-proc: %v)", err)
	}
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(cfg, []byte(reapConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{b: new(bytes.Buffer)}
	c := client.NewClient(transport.NewStdioWithOptions("unshare", nil,
		[]string{"-fp", "--mount-proc", binary, "serve", "--config", cfg}, transport.WithCommandStderrWriter(logs)))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-06-18"
	init.Params.ClientInfo = mcp.Implementation{Name: "reap-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v\n%s", err, logs.String())
	}
	call := func(name string) string {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = map[string]any{"input": ""}
		r, err := c.CallTool(ctx, req)
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %q\n%s", name, err, text(r), logs.String())
		}
		return text(r)
	}
	const calls = 50
	for range calls {
		if got := call("orphaner"); got != "ok" {
			t.Fatalf("orphaner = %q, want ok", got)
		}
	}
	// The orphans exit within 50ms; the reaper takes them on SIGCHLD.
	var n int
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, _ = strconv.Atoi(call("zombies"))
		if n == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n != 0 {
		t.Errorf("got %d zombies in the server's namespace after %d calls, want 0", n, calls)
	}
}
