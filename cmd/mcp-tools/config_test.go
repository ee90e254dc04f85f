package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestExampleConfigEndToEnd serves the commented example of testdata/ with
// the real binary over stdio: a shell tool, a Go tool with a typed schema,
// a pipeline over both, and the file built-ins. It runs on a copy of what a
// fresh clone has (git ls-files), so nothing built before can help it.
func TestExampleConfigEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	clone := t.TempDir()
	files, err := exec.Command("git", "ls-files", "../../testdata/tools.yaml", "../../testdata/tools", "../../testdata/data").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	for _, f := range strings.Fields(string(files)) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(clone, strings.TrimPrefix(filepath.ToSlash(f), "../../testdata/"))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(clone, "tools.yaml")
	out, errOut, code := runBinary(t, "validate", "--config", cfg)
	if code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}

	c, ctx, _ := serveClient(t, nil, nil, "serve", "--config", cfg)
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"sentiment", map[string]any{"input": "What a great day"}, "positive"},
		{"sentiment", map[string]any{"input": "an awful day"}, "negative"},
		{"word_count", map[string]any{"text": "the cat and the hat"}, "5 words"},
		{"word_count", map[string]any{"text": "the cat and the hat", "unique": true}, "4 words"},
		{"words_times_ten", map[string]any{"text": "one two three"}, "30"},
		{"file_read", map[string]any{"path": "hello.txt"}, "Hello from the example data folder"},
		{"calculator", map[string]any{"input": "6 * 7"}, "42"},
	}
	for _, tt := range tests {
		res := call(tt.tool, tt.args)
		if res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s %v = %q (isError %v), want %q", tt.tool, tt.args, text(res), res.IsError, tt.want)
		}
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == "web_fetch" {
			t.Error("web_fetch is served although the file's builtins section leaves it out")
		}
	}
}

func TestBadConfigListsEveryProblem(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src := `server:
  call_timeout: soon
tools:
  - name: a.b
    description: Bad name.
    process: {command: [echo]}
  - name: nothing
    description: No kind.
approval:
  require: [ghost]
`
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"validate", "serve", "list"} {
		_, errOut, code := runBinary(t, cmd, "--config", bad)
		if code != 2 {
			t.Errorf("%s with a bad file: exit %d, want 2", cmd, code)
		}
		for _, want := range []string{"bad.yaml:2: server.call_timeout", "bad.yaml:4: tools[0].name", "tools[1]: a tool needs exactly one", `approval.require[0]: unknown tool "ghost"`} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", cmd, want, errOut)
			}
		}
	}
}
