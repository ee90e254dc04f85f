package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestVersionBuildInfo builds the binary as a release would and checks that
// version prints what the build recorded: the version set at link time, or
// else the module version, and the VCS revision.
func TestVersionBuildInfo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := filepath.Join(t.TempDir(), "mcp-tools")
	build := exec.Command("go", "build", "-buildvcs=true", "-ldflags", "-X main.version=v9.8.7", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot build with VCS information here: %v\n%s", err, out)
	}
	// Go stamps a revision only from a .git directory: in a git worktree
	// (.git is a file) or an exported tree it builds without one, and
	// version then prints none.
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	stamped := slices.ContainsFunc(info.Settings, func(s debug.BuildSetting) bool { return s.Key == "vcs.revision" })
	for _, arg := range []string{"version", "-v", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		m := regexp.MustCompile(`^mcp-tools v9\.8\.7( \(revision ([0-9a-f]{12}), [0-9T:Z-]+(, modified)?\))?\nembedded build: [^\n]*\n$`).FindStringSubmatch(string(out))
		if m == nil || (m[1] != "") != stamped {
			t.Fatalf("mcp-tools %s = %q, want \"mcp-tools v9.8.7 (revision <12 hex>, <time>[, modified])\" (the revision only when the build recorded one: %v) and the build's line", arg, out, stamped)
		}
		if !stamped {
			continue
		}
		if err := exec.Command("git", "cat-file", "-e", m[2]+"^{commit}").Run(); err != nil {
			t.Errorf("mcp-tools %s printed revision %s, which is not a commit of this repository", arg, m[2])
		}
	}
	if !stamped {
		t.Log("the build recorded no VCS revision here (a git worktree?): the revision was not checked")
	}
}

// TestCallArguments passes arguments the three ways: argv, stdin and a
// file, the last two with arguments too large for a command line.
func TestCallArguments(t *testing.T) {
	big := `{"json_path": "$.n", "json": "{\"pad\": \"` + strings.Repeat("x", 200<<10) + `\", \"n\": 42}"}`
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "argv", args: []string{"call", "calculator", `{"input": "2 ** 10"}`}, wantStdout: "1024"},
		{name: "stdin", stdin: `{"input": "2 ** 10"}`, args: []string{"call", "calculator", "-"}, wantStdout: "1024"},
		{name: "200 KB from stdin", stdin: big, args: []string{"call", "json_query", "-"}, wantStdout: "42"},
		{name: "200 KB from a file", args: []string{"call", "json_query", "@" + file}, wantStdout: "42"},
		{name: "file then flags", args: []string{"call", "json_query", "@" + file, "--json"}, wantStdout: `"count": 1`},
		{name: "bad JSON on stdin", stdin: `{"input": `, args: []string{"call", "calculator", "-"}, wantCode: 2, wantStderr: "arguments from stdin are not valid JSON"},
		{name: "stdin past the cap", stdin: `"` + strings.Repeat("x", maxArgumentsBytes) + `"`, args: []string{"call", "calculator", "-"}, wantCode: 2, wantStderr: fmt.Sprintf("arguments from stdin are larger than %d bytes", maxArgumentsBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runBinaryIn(t, tt.stdin, nil, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit status = %d, want %d\nstderr: %s", code, tt.wantCode, errOut)
			}
			if !strings.Contains(out, tt.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", clip(out, 300), tt.wantStdout)
			}
			if !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", clip(errOut, 300), tt.wantStderr)
			}
		})
	}
}

// TestErrorsOnce checks that each problem is printed once, that only
// usage errors point at --help, and that nothing says "usage:".
func TestErrorsOnce(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("tools:\n  - name: x\n    process: {command: [sh]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		wantLines []string // the whole of stderr, line by line
	}{
		{"unknown flag", []string{"serve", "--no-such-flag"}, []string{
			"mcp-tools serve: flag provided but not defined: -no-such-flag",
			"Run 'mcp-tools serve --help' for usage."}},
		{"unknown command", []string{"frobnicate"}, []string{
			`mcp-tools: unknown command "frobnicate"`,
			"Run 'mcp-tools --help' for the commands."}},
		{"file tools without a root", []string{"list", "--builtins", "file_read,file_write,file_list"}, []string{
			`mcp-tools list: built-in "file_read" needs a root folder (--root DIR)`,
			`built-in "file_write" needs a root folder (--root DIR)`,
			`built-in "file_list" needs a root folder (--root DIR)`}},
		{"config problem", []string{"list", "--config", bad}, []string{
			"mcp-tools list: " + bad + ": 1 problem",
			"  " + bad + `:2: tools[0].description: missing required field "tools[0].description"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runBinary(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit status = %d, want %d", code, exitUsage)
			}
			got := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tt.wantLines, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.wantLines, "\n"))
			}
		})
	}
}

// TestListAligns checks that the description column lines up when a name
// is longer than the built-ins'.
func TestListAligns(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("a_very_long_tool_name_", 2) + "x"
	cfg := filepath.Join(dir, "tools.yaml")
	yaml := "builtins: {calculator: {}}\ntools:\n  - name: " + long + "\n    description: Long.\n    process: {command: [sh, -c, 'echo {}']}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runBinary(t, "list", "--config", cfg)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("list printed %d lines, want 2:\n%s", len(lines), out)
	}
	want := len(long) + 2
	for _, l := range lines {
		if got := len(l) - len(strings.TrimLeft(l[len(strings.Fields(l)[0]):], " ")); got != want {
			t.Errorf("description of %q starts at column %d, want %d:\n%s", strings.Fields(l)[0], got, want, out)
		}
	}
}

func TestConfirm(t *testing.T) {
	tests := []struct {
		input string
		want  bool
	}{
		{"y\n", true},
		{"YES\n", true},
		{" y \n", true},
		{"\n", false},
		{"n\n", false},
		{"yep\n", false},
		{"", false},
		{"y", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.input), func(t *testing.T) {
			var out bytes.Buffer
			got := confirm(bufio.NewReader(strings.NewReader(tt.input)), &out, `Allow "x" to run?`)
			if got != tt.want {
				t.Errorf("confirm(%q) = %v, want %v", tt.input, got, tt.want)
			}
			if !strings.HasPrefix(out.String(), `Allow "x" to run? [y/N] `) {
				t.Errorf("prompt = %q, want the question then [y/N]", out.String())
			}
		})
	}
}

// onTerminal runs the binary on a pseudo-terminal (script(1)), typing
// input once the prompt appears, and returns what the terminal showed.
func onTerminal(t *testing.T, input string, env []string, args ...string) string {
	t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed")
	}
	quoted := []string{binary}
	for _, a := range args {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "-qec", strings.Join(quoted, " "), "/dev/null")
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	out.b = &bytes.Buffer{}
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if input != "" {
		// Type only once asked: a terminal's input typed early would be
		// echoed before the prompt.
		for !strings.Contains(out.String(), "[y/N]") && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		stdin.Write([]byte(input))
	}
	err = cmd.Wait()
	stdin.Close()
	if ctx.Err() != nil {
		t.Fatalf("%v: timed out; terminal showed:\n%s", args, out.String())
	}
	_ = err // the exit status is checked through what was printed
	return strings.ReplaceAll(out.String(), "\r", "")
}

// TestCallOnTerminal answers the approval question on a real
// pseudo-terminal, and checks progress and NO_COLOR there.
func TestCallOnTerminal(t *testing.T) {
	gated := []string{"call", "--require-approval", "calculator", "calculator", `{"input": "2 + 3"}`}
	t.Run("approve", func(t *testing.T) {
		got := onTerminal(t, "y\n", nil, gated...)
		if !strings.Contains(got, `Allow "calculator" to run with input = "2 + 3"? [y/N] y`) || !strings.Contains(got, "\n5\n") {
			t.Errorf("terminal showed %q, want the summary, a [y/N] prompt and the result 5", got)
		}
	})
	t.Run("refuse", func(t *testing.T) {
		got := onTerminal(t, "\n", nil, gated...)
		if !strings.Contains(got, "Rejected by reviewer") || strings.Contains(got, "\n5\n") {
			t.Errorf("terminal showed %q, want a rejection and no result", got)
		}
	})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tools.yaml")
	slow := `printf '{"progress": 1, "total": 2, "message": "halfway there"}\n' >&2; sleep 1; cat >/dev/null; echo '{"output": "done", "success": true}'`
	yaml := "builtins: {calculator: {}}\ntools:\n  - name: slow\n    description: Slow.\n    process: {command: [sh, -c, '" + strings.ReplaceAll(slow, "'", "''") + "']}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("progress on a terminal", func(t *testing.T) {
		got := onTerminal(t, "", nil, "call", "--config", cfg, "slow", `{"input": "x"}`)
		if !strings.Contains(got, "halfway there (1/2)") || !strings.Contains(got, "done") {
			t.Errorf("terminal showed %q, want the progress line and the result", got)
		}
	})
	t.Run("no progress on a pipe", func(t *testing.T) {
		out, errOut, code := runBinary(t, "call", "--config", cfg, "slow", `{"input": "x"}`)
		if code != 0 || strings.TrimSpace(out) != "done" || errOut != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0, \"done\" and nothing on stderr", code, out, errOut)
		}
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		for _, env := range [][]string{nil, {"NO_COLOR=1"}} {
			got := onTerminal(t, "", env, "list", "--log-level", "info")
			colour := strings.Contains(got, "\x1b[")
			if want := env == nil; colour != want {
				t.Errorf("env %v: colour on a terminal = %v, want %v:\n%q", env, colour, want, got)
			}
		}
	})
}

// TestServeWarnsOpenToTheNetwork starts HTTP serving on every interface
// without a token, and on loopback, and looks for the warning in the log.
func TestServeWarnsOpenToTheNetwork(t *testing.T) {
	tests := []struct {
		name     string
		addr     string
		env      []string
		wantWarn bool
	}{
		{"all interfaces, no token", "0.0.0.0:0", nil, true},
		{"all interfaces, a token", "0.0.0.0:0", []string{tokenEnv + "=s3cret"}, false},
		{"loopback, no token", "127.0.0.1:0", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "serve", "--transport", "http", "--addr", tt.addr, "--log-format", "json")
			cmd.Env = append(os.Environ(), append([]string{tokenEnv + "="}, tt.env...)...)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			// Read the log up to the line that says the server is serving:
			// the warning, if any, comes before it.
			var log []string
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				log = append(log, sc.Text())
				if strings.Contains(sc.Text(), `"msg":"serving"`) {
					break
				}
			}
			all := strings.Join(log, "\n")
			if !strings.Contains(all, `"msg":"serving"`) {
				t.Fatalf("the server never said it was serving:\n%s", all)
			}
			warned := strings.Contains(all, `"level":"WARN","msg":"listening on a non-loopback address with no bearer token`)
			if warned != tt.wantWarn {
				t.Errorf("warned = %v, want %v; log:\n%s", warned, tt.wantWarn, all)
			}
		})
	}
}
