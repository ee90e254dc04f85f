package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateOnePass puts a problem of every kind in one file and expects
// validate to list them all at once, each once.
func TestValidateOnePass(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "tool.sh")
	if err := os.WriteFile(notExec, []byte("echo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "tools.yaml")
	src := `server:
  call_timeout: 30
  bogus: 1
tools:
  - name: a.b
    description: Bad name, a type error, a missing program and folder.
    timeout: 30
    process: {command: [no-such-program-here], dir: ./no-such-dir}
  - name: a.b
    description: Duplicate.
    process: {command: [./tool.sh]}
  - name: p
    description: Pipeline.
    pipeline:
      steps:
        - tool: ghost
  - name: q
    description: Unset variable.
    http: {url: "https://example.com", headers: {Authorization: "Bearer ${NO_SUCH_VAR_FOR_TEST}"}}
`
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runBinary(t, "validate", "--config", cfg)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitUsage, out, errOut)
	}
	for _, want := range []string{
		"tools.yaml:2: server.call_timeout: want a duration like 30s (or 5m, 1h30m), got 30",
		`tools.yaml:3: server.bogus: unknown field "server.bogus"`,
		`tools.yaml:5: tools[0].name: tool "a.b": name may hold only letters, digits, '_' and '-'`,
		"tools.yaml:7: tools[0].timeout: want a duration like 30s (or 5m, 1h30m), got 30",
		`tools[0].process.command[0]: "no-such-program-here" is not found in PATH`,
		`tools[0].process.dir: "` + filepath.Join(dir, "no-such-dir") + `" is not a folder`,
		`tools[1].process.command[0]: "` + notExec + `" is not executable`,
		`tools[3].http.headers.Authorization: environment variable NO_SUCH_VAR_FOR_TEST is not set`,
		`tools[2].pipeline.steps[0].tool: unknown tool "ghost"`,
	} {
		if strings.Count(errOut, want) != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", want, strings.Count(errOut, want), errOut)
		}
	}
}

// TestValidatePrintsPrograms checks that validate names the program each
// subprocess tool runs.
func TestValidatePrintsPrograms(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(cfg, []byte("tools:\n  - name: s\n    description: S.\n    process: {command: [sh, -c, 'echo {}']}\n"), 0o644)
	out, errOut, code := runBinary(t, "validate", "--config", cfg)
	if code != 0 || !strings.Contains(out, "  s runs "+sh+"\n") {
		t.Errorf("exit %d, stdout %q, stderr %q; want ok and \"s runs %s\"", code, out, errOut, sh)
	}
}

// TestPipelineBuiltins: a pipeline may name any built-in the server serves,
// the defaults included when the file has no builtins section; one whose
// built-in is filtered out by --builtins is told so, not called a cycle.
func TestPipelineBuiltins(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(cfg, []byte(`tools:
  - name: p
    description: Calculates.
    pipeline:
      steps:
        - tool: calculator
approval:
  require: [calculator]
`), 0o644)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"validate with the defaults", []string{"validate", "--config", cfg}, 0, "ok, 5 tools", ""},
		{"call with the defaults", []string{"call", "--config", cfg, "--approval-fallback", "allow", "p", `{"input": "1+2"}`}, 0, "3", ""},
		{"filtered out", []string{"validate", "--config", cfg, "--builtins", "datetime"}, 2, "",
			`tool "p": step 1: built-in "calculator" is not served; add it to --builtins (or to builtins: in the file)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runBinary(t, tt.args...)
			if code != tt.wantCode || !strings.Contains(out, tt.wantStdout) || !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errOut, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if strings.Contains(errOut, "cycle") {
				t.Errorf("stderr calls it a cycle: %s", errOut)
			}
		})
	}
}
