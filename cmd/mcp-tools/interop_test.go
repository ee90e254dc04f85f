package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// interopDir holds the official TypeScript SDK client scripts.
var interopDir = filepath.Join("..", "..", "interop", "ts")

// node runs a script of interopDir with the official TypeScript SDK, and
// returns its output. The test is skipped when the SDK is not installed
// (cd interop/ts && npm ci), unless MCP_TOOLS_REQUIRE_INTEROP=1 (CI sets it
// when it could install it).
func node(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("MCP_TOOLS_REQUIRE_INTEROP") == "1" {
			t.Fatalf("the TypeScript SDK is not installed in %s: %v", interopDir, err)
		}
		t.Skip("the official TypeScript SDK is not installed: cd interop/ts && npm ci")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = interopDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the TypeScript client's output lacks %q:\n%s", w, out)
		}
	}
}

// TestInteropTypeScriptSDK drives the binary with the official TypeScript
// SDK client: its experimental 2025-11-25 tasks client over stdio and
// streamable HTTP (a subprocess tool run as a task with progress, then
// cancelled), and a session with an approval remembered and ended.
func TestInteropTypeScriptSDK(t *testing.T) {
	binPath, err := filepath.Abs(binary)
	if err != nil {
		t.Fatal(err)
	}
	tasks := []string{
		`train execution {"taskSupport":"optional"}`,
		"taskCreated ", "taskStatus working epoch ",
		`result [{"type":"text","text":"trained"}]`,
		"cancelTask cancelled", "after cancel cancelled",
	}
	t.Run("tasks over stdio", func(t *testing.T) {
		out := node(t, "tasks.mjs", "stdio", binPath, "serve", "--config", "train.yaml")
		wantLines(t, out, tasks...)
	})
	t.Run("tasks over streamable HTTP", func(t *testing.T) {
		url, _ := startServe(t, "serving", nil, "--transport", "http", "--addr", "127.0.0.1:"+freePort(t), "--config", filepath.Join(interopDir, "train.yaml"))
		wantLines(t, node(t, "tasks.mjs", url), tasks...)
	})
	t.Run("a session with an approval", func(t *testing.T) {
		url, _ := startServe(t, "serving", nil, "--transport", "http", "--addr", "127.0.0.1:"+freePort(t), "--require-approval", "datetime")
		wantLines(t, node(t, "fleet.mjs", url, "datetime"),
			"calculator ok 60 of 60", "gated 0 ok asked so far 1", "gated 3 ok asked so far 1", "after DELETE: refused")
	})
}
