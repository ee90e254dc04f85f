package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// binary is the mcp-tools binary built for these tests: the default,
// embedded build.
var binary string

// binDir holds the binaries built for these tests.
var binDir string

// The service build (-tags service), built the first time a test asks.
var (
	serviceOnce sync.Once
	serviceBin  string
	serviceErr  error
)

// serviceBinary returns the service build of mcp-tools (go build -race
// -tags service): the one with --state redis:// and OTLP export.
func serviceBinary(t *testing.T) string {
	t.Helper()
	serviceOnce.Do(func() {
		serviceBin = filepath.Join(binDir, "mcp-tools-service")
		out, err := exec.Command("go", "build", "-race", "-tags", "service", "-o", serviceBin, ".").CombinedOutput()
		if err != nil {
			serviceErr = fmt.Errorf("go build -tags service: %v\n%s", err, out)
		}
	})
	if serviceErr != nil {
		t.Fatal(serviceErr)
	}
	return serviceBin
}

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "mcp-tools-bin")
	if err != nil {
		panic(err)
	}
	binDir = dir
	binary = filepath.Join(dir, "mcp-tools")
	build := exec.Command("go", "build", "-race", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("go build: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runBinary runs the built binary and returns stdout, stderr and the exit
// status.
func runBinary(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runBinaryIn(t, "", nil, args...)
}

// runBinaryIn runs the built binary with stdin and env added to the
// test's environment.
func runBinaryIn(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runBin(t, binary, stdin, env, args...)
}

// runBin runs the binary bin with stdin and env added to the test's
// environment, and returns stdout, stderr and the exit status.
func runBin(t *testing.T, bin, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func TestCLI(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"version", []string{"version"}, 0, "mcp-tools ", ""},
		{"version -v", []string{"-v"}, 0, "mcp-tools ", ""},
		{"version --version", []string{"--version"}, 0, "mcp-tools ", ""},
		{"help", []string{"--help"}, 0, "Usage:", ""},
		{"serve help", []string{"serve", "--help"}, 0, "Examples:", ""},
		{"call help", []string{"call", "--help"}, 0, "@FILE", ""},
		{"call flags after the arguments", []string{"call", "echo", `{"text":"hi"}`, "--builtins", "echo"}, 0, "hi", ""},
		{"call flags after the name", []string{"call", "calculator", "--json", `{"input": "6*7"}`}, 0, `"text": "42"`, ""},
		{"call file tool without --root names the flag", []string{"call", "file_read", `{"path": "x"}`}, 2, "", `tool "file_read" is off: no root folder is configured: pass --root DIR`},
		{"call echo not served names the flag", []string{"call", "echo", `{"text": "x"}`}, 2, "", "pass --builtins echo"},
		{"call unknown tool lists the served ones", []string{"call", "nope", `{}`}, 2, "", `no tool "nope": the tools served are calculator, datetime`},
		{"call arguments from a missing file", []string{"call", "calculator", "@no-such-file.json"}, 2, "", "no-such-file.json"},
		{"call ok", []string{"call", "calculator", `{"input": "(178.15 - 150) * 100"}`}, 0, "2815", ""},
		{"call error result", []string{"call", "calculator", `{"input": "1/0"}`}, 1, "Error: ", ""},
		{"call invalid arguments", []string{"call", "calculator", `{}`}, 1, `"input"`, ""},
		{"call echo when named", []string{"call", "--builtins", "echo", "echo", `{"text":"hi"}`}, 0, "hi", ""},
		{"call bad json", []string{"call", "calculator", `{`}, 2, "", "not valid JSON"},
		{"unknown builtin", []string{"list", "--builtins", "calculator,nope"}, 2, "", `unknown built-in "nope"`},
		{"duplicate builtin", []string{"list", "--builtins", "calculator,calculator"}, 2, "", "registered more than once"},
		{"unknown command", []string{"frobnicate"}, 2, "", "unknown command"},
		{"bad flag", []string{"serve", "--no-such-flag"}, 2, "", "no-such-flag"},
		{"bad log level", []string{"list", "--log-level", "loud"}, 2, "", "unknown log level"},
		{"require approval, not a terminal", []string{"call", "--require-approval", "calculator", "calculator", `{"input": "1+1"}`}, 1, "", `tool "calculator" requires approval and stdin is not a terminal, so no one can be asked; the tool did not run. Run it on a terminal to answer y/N, or pass --no-approval calculator or --approval-fallback allow`},
		{"require approval, opened with --no-approval", []string{"call", "--require-approval", "calculator", "--no-approval", "calculator", "calculator", `{"input": "1+1"}`}, 0, "2", ""},
		{"require approval, allow fallback", []string{"call", "--require-approval", "calculator", "--approval-fallback", "allow", "calculator", `{"input": "1+1"}`}, 0, "2", ""},
		{"require approval of an unknown tool", []string{"list", "--require-approval", "ghost"}, 2, "", `unknown tool "ghost"`},
		{"budget flag", []string{"call", "--max-calls-per-session", "1", "calculator", `{"input": "1+1"}`}, 0, "2", ""},
		{"file_write is gated by default", []string{"call", "--root", "testdata-none", "file_write", `{"path": "x.txt", "content": "y"}`}, 2, "", "testdata-none"},
		{"file_write gated: denied without a terminal", []string{"call", "--root", ".", "file_write", `{"path": "never-written.txt", "content": "y"}`}, 1, "", "--no-approval file_write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runBinary(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit status = %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(out, tt.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", out, tt.wantStdout)
			}
			if !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", errOut, tt.wantStderr)
			}
		})
	}
}

// TestListGolden pins every published descriptor: a change to a schema,
// a description or an annotation shows up in review as a golden diff.
func TestListGolden(t *testing.T) {
	root := t.TempDir()
	out, errOut, code := runBinary(t, "list", "--json", "--builtins", "calculator,datetime,json_query,file_read,file_write,file_list,web_fetch,echo", "--root", root)
	if code != 0 {
		t.Fatalf("list --json: exit %d: %s", code, errOut)
	}
	var descs []map[string]any
	if err := json.Unmarshal([]byte(out), &descs); err != nil {
		t.Fatalf("list --json output is not a JSON array: %v", err)
	}
	for _, d := range descs {
		ann, _ := d["annotations"].(map[string]any)
		for _, hint := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[hint]; !ok {
				t.Errorf("tool %v: annotation %s is not set explicitly", d["name"], hint)
			}
		}
	}
	golden := filepath.Join("..", "..", "testdata", "list.golden.json")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/mcp-tools -update to create it)", err)
	}
	if out != string(want) {
		t.Errorf("mcp-tools list --json differs from %s; if the change is intended, run go test ./cmd/mcp-tools -update\ngot:\n%s", golden, out)
	}
}

// serveClient starts the built binary with args over stdio (env added to
// the test's environment) and returns an initialized client, a context for
// its calls, and the server's stderr.
func serveClient(t *testing.T, env []string, opts []client.ClientOption, args ...string) (*client.Client, context.Context, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{b: &bytes.Buffer{}}
	c := client.NewClient(transport.NewStdioWithOptions(binary, env, args, transport.WithCommandStderrWriter(logs)), opts...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-06-18"
	init.Params.ClientInfo = mcp.Implementation{Name: "cli-test", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize: %v\n%s", err, logs.String())
	}
	if res.ServerInfo.Name != "mcp-tools" {
		t.Errorf("server name = %q", res.ServerInfo.Name)
	}
	return c, ctx, logs
}

// TestServeStdio drives the real binary over a real pipe with mcp-go's
// client.
func TestServeStdio(t *testing.T) {
	c, ctx, _ := serveClient(t, nil, nil, "serve", "--log-level", "debug")
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"calculator", "datetime", "json_query", "web_fetch"} {
		if !names[want] {
			t.Errorf("default built-ins lack %s (have %v)", want, names)
		}
	}
	for _, off := range []string{"echo", "file_read", "web_search"} {
		if names[off] {
			t.Errorf("%s is served by default, want it off", off)
		}
	}
	call := func(args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = "calculator"
		req.Params.Arguments = args
		r, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("calculator %v: %v", args, err)
		}
		return r
	}
	if r := call(map[string]any{"input": "2 ** 10"}); r.IsError || text(r) != "1024" {
		t.Errorf("2 ** 10 = %q (isError %v)", text(r), r.IsError)
	}
	deep := strings.Repeat("(", 200000) + "1" + strings.Repeat(")", 200000)
	if r := call(map[string]any{"input": deep}); !r.IsError {
		t.Errorf("a deeply nested expression was not refused: %q", text(r))
	}
	if r := call(map[string]any{"input": "1 + 1"}); text(r) != "2" {
		t.Errorf("after the deep expression 1 + 1 = %q: the server is not alive", text(r))
	}
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
