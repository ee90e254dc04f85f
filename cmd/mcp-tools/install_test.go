package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// tempHome returns the environment of a user whose home is a fresh
// temporary folder.
func tempHome(t *testing.T) (home string, env []string) {
	home = t.TempDir()
	return home, []string{"HOME=" + home, "XDG_CONFIG_HOME=", "APPDATA=" + filepath.Join(home, "AppData")}
}

// TestInstallClaudeDesktopWalkthrough is the newcomer's path: install into
// Claude Desktop's config in a fresh home, keeping what was there, then
// start the server exactly as Claude Desktop would from that entry and call
// a tool.
func TestInstallClaudeDesktopWalkthrough(t *testing.T) {
	home, env := tempHome(t)
	notes := filepath.Join(home, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("buy milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	before := `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
  }
}
`
	if err := os.WriteFile(cfg, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}

	// --root is given relative to where the user stands: run from home.
	t.Chdir(home)
	out, errOut, code := runBinaryIn(t, "", env, "install", "claude-desktop", "--", "--root", "notes", "--no-approval", "file_write")
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, `Added "mcp-tools" in Claude Desktop's configuration: `+cfg) || !strings.Contains(out, cfg+".bak") {
		t.Errorf("install said %q, want the file it changed and its backup", out)
	}
	if bak, _ := os.ReadFile(cfg + ".bak"); string(bak) != before {
		t.Errorf("backup = %q, want the file as it was", bak)
	}
	var doc struct {
		GlobalShortcut string `json:"globalShortcut"`
		MCPServers     map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(cfg)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the config is not JSON any more: %v\n%s", err, b)
	}
	if doc.GlobalShortcut != "Ctrl+Space" || doc.MCPServers["memory"].Command != "npx" {
		t.Errorf("install lost what was there:\n%s", b)
	}
	e, ok := doc.MCPServers["mcp-tools"]
	if !ok {
		t.Fatalf("no mcp-tools entry:\n%s", b)
	}
	if want := []string{"serve", "--root", notes, "--no-approval", "file_write"}; strings.Join(e.Args, " ") != strings.Join(want, " ") {
		t.Errorf("args = %q, want %q", e.Args, want)
	}
	if !filepath.IsAbs(e.Command) {
		t.Errorf("command %q is not absolute", e.Command)
	}
	if st, err := os.Stat(e.Command); err != nil || st.IsDir() {
		t.Errorf("command %q is not the binary: %v", e.Command, err)
	}

	// Start it as Claude Desktop would, from another folder, and call tools.
	t.Chdir(t.TempDir())
	c, ctx, _ := serveClient(t, env, nil, e.Args...)
	callTool := func(name string, args map[string]any) string {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Errorf("%s: error result %q", name, text(res))
		}
		return text(res)
	}
	if got := callTool("file_read", map[string]any{"path": "todo.txt"}); !strings.Contains(got, "buy milk") {
		t.Errorf("file_read todo.txt = %q, want the note", got)
	}
	callTool("file_write", map[string]any{"path": "done.txt", "content": "milk"})
	if b, err := os.ReadFile(filepath.Join(notes, "done.txt")); err != nil || string(b) != "milk" {
		t.Errorf("file_write through the installed entry: %q, %v", b, err)
	}
}

func TestInstall(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		existing   map[string]string // path under home → content
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
		wantFile   string // path under home
		wantIn     []string
	}{
		{name: "list", args: []string{"install", "--list"}, wantStdout: "vscode          VS Code (user profile)    "},
		{name: "claude code keeps its state", existing: map[string]string{".claude.json": `{"numStartups": 12, "projects": {"/x": {}}}`},
			args: []string{"install", "claude-code", "--name", "tools"}, wantFile: ".claude.json",
			wantIn: []string{`"numStartups": 12`, `"projects": {"/x": {}}`, `"tools": {`, `"type": "stdio"`}},
		{name: "update keeps the entry's env", existing: map[string]string{".cursor/mcp.json": `{"mcpServers": {"mcp-tools": {"command": "/old/mcp-tools", "args": ["serve"], "env": {"MCP_TOOLS_STATE_KEY": "k"}}}}`},
			args: []string{"install", "cursor", "--", "--builtins", "calculator"}, wantStdout: `Replaced "mcp-tools"`, wantFile: ".cursor/mcp.json",
			wantIn: []string{`"env": {"MCP_TOOLS_STATE_KEY": "k"}`, `"calculator"]`}},
		{name: "state key file made absolute", args: []string{"install", "cursor", "--", "--state-key-file", "install_test.go", "--config=testdata/../install_test.go"},
			wantFile: ".cursor/mcp.json", wantIn: []string{jsonString(filepath.Join(cwd, "install_test.go")) + ",", jsonString("--config=" + filepath.Join(cwd, "install_test.go"))}},
		{name: "state key file missing", args: []string{"install", "cursor", "--", "--state-key-file", "no-such-key"}, wantCode: 2, wantStderr: "--state-key-file: "},
		{name: "empty root refused, not made the working folder", args: []string{"install", "cursor", "--", "--root", ""}, wantCode: 2, wantStderr: "--root is empty"},
		{name: "empty config refused", args: []string{"install", "cursor", "--", "--config="}, wantCode: 2, wantStderr: "--config is empty"},
		{name: "cursor, new file", args: []string{"install", "cursor"}, wantFile: ".cursor/mcp.json", wantIn: []string{`"mcpServers": {`, `"serve"`}},
		{name: "windsurf", args: []string{"install", "windsurf", "--", "--builtins", "calculator"}, wantFile: ".codeium/windsurf/mcp_config.json", wantIn: []string{`"--builtins",`, `"calculator"`}},
		{name: "vscode keeps comments", existing: map[string]string{".config/Code/User/mcp.json": "{\n  // mine\n  \"servers\": {},\n}\n"},
			args: []string{"install", "vscode"}, wantFile: ".config/Code/User/mcp.json", wantIn: []string{"// mine", `"servers": {`, `"mcp-tools": {`, "\n}\n"}},
		{name: "refuses a file it cannot parse", existing: map[string]string{".cursor/mcp.json": "{ broken"},
			args: []string{"install", "cursor"}, wantCode: 2, wantStderr: "cannot parse the file", wantFile: ".cursor/mcp.json", wantIn: []string{"{ broken"}},
		{name: "dry run writes nothing", args: []string{"install", "cursor", "--dry-run"}, wantStdout: "Would write "},
		{name: "bad serve flag", args: []string{"install", "cursor", "--", "--roots", "x"}, wantCode: 2, wantStderr: "serve flags after --: flag provided but not defined: -roots"},
		{name: "root is not a folder", args: []string{"install", "cursor", "--", "--root", "/no/such/folder"}, wantCode: 2, wantStderr: "--root /no/such/folder: not a folder"},
		{name: "unknown client", args: []string{"install", "emacs"}, wantCode: 2, wantStderr: `unknown client "emacs": use claude-desktop, claude-code, cursor, vscode, windsurf`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, env := tempHome(t)
			for p, content := range tt.existing {
				p = filepath.Join(home, p)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, errOut, code := runBinaryIn(t, "", env, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit status = %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(out, tt.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", out, tt.wantStdout)
			}
			if !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", errOut, tt.wantStderr)
			}
			if tt.name == "dry run writes nothing" {
				if _, err := os.Stat(filepath.Join(home, ".cursor")); !os.IsNotExist(err) {
					t.Errorf("a dry run created %s", filepath.Join(home, ".cursor"))
				}
			}
			if tt.wantFile == "" {
				return
			}
			b, err := os.ReadFile(filepath.Join(home, tt.wantFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s = %s\nwant it to contain %q", tt.wantFile, b, w)
				}
			}
		})
	}
}

// TestInstallRefusesGoRunBuild: a binary that go run built lives in a
// temporary folder deleted when go run exits, so an entry naming it would
// stop working at once: install refuses to write it.
func TestInstallRefusesGoRunBuild(t *testing.T) {
	home, env := tempHome(t)
	exe := filepath.Join(t.TempDir(), "go-build1234567", "b001", "exe", filepath.Base(binary))
	os.MkdirAll(filepath.Dir(exe), 0o755)
	if err := os.Link(binary, exe); err != nil {
		b, err := os.ReadFile(binary)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(exe, "install", "cursor")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Errorf("install from a go run build succeeded: %s", out)
	}
	if !strings.Contains(string(out), "temporary go run build") {
		t.Errorf("output %q does not say why", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor", "mcp.json")); !os.IsNotExist(err) {
		t.Errorf("the entry was written anyway: %v", err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestInstallRefusesStateWithoutTheServiceBuild: an entry whose server
// could never start is not written.
func TestInstallRefusesStateWithoutTheServiceBuild(t *testing.T) {
	home, env := tempHome(t)
	for _, args := range [][]string{{"--state", "redis://:hunter2@127.0.0.1:6379/0"}, {"-state=redis://127.0.0.1:6379/0"}} {
		out, errOut, code := runBinaryIn(t, "", env, append([]string{"install", "cursor", "--"}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "--state: shared state (Redis) is not in this build; only the service build has it") {
			t.Errorf("install %v: exit %d, want %d and the service build named\n%s%s", args, code, exitUsage, out, errOut)
		}
		if strings.Contains(out+errOut, "hunter2") {
			t.Errorf("install printed the password:\n%s%s", out, errOut)
		}
		if _, err := os.Stat(filepath.Join(home, ".cursor", "mcp.json")); err == nil {
			t.Errorf("install wrote an entry that could never start")
		}
	}
}

// TestInstallHidesStatePassword: the entry holds the --state URL as given
// (the server needs it), but what install prints hides its password, as
// the server's own log does.
func TestInstallHidesStatePassword(t *testing.T) {
	home, env := tempHome(t)
	for _, args := range [][]string{{"--state", "redis://:hunter2@127.0.0.1:6379/0"}, {"-state=redis://u:hunter2@127.0.0.1:6379/0"}} {
		out, errOut, code := runBin(t, serviceBinary(t), "", env, append([]string{"install", "cursor", "--"}, args...)...)
		if code != 0 {
			t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
		}
		if strings.Contains(out+errOut, "hunter2") || !strings.Contains(out, "127.0.0.1:6379/0") {
			t.Errorf("install printed the password, or not the URL:\n%s%s", out, errOut)
		}
		if b, _ := os.ReadFile(filepath.Join(home, ".cursor", "mcp.json")); !strings.Contains(string(b), "hunter2@127.0.0.1") {
			t.Errorf("the entry lacks the URL as given:\n%s", b)
		}
	}
}

// TestInstallRefusesConfigStateWithoutTheServiceBuild: a config file whose
// server.state names Redis makes an entry the embedded build could never
// start, as --state does.
func TestInstallRefusesConfigStateWithoutTheServiceBuild(t *testing.T) {
	home, env := tempHome(t)
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  state: redis://127.0.0.1:6379/0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runBinaryIn(t, "", env, "install", "cursor", "--", "--config", cfg)
	if code != exitUsage || !strings.Contains(errOut, "server.state: shared state (Redis) is not in this build; only the service build has it") {
		t.Errorf("install: exit %d, want %d and the service build named\n%s%s", code, exitUsage, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor", "mcp.json")); err == nil {
		t.Errorf("install wrote an entry that could never start")
	}
}

// TestHidePasswords: the printed command line never shows the --state
// URL's password, whatever it holds: one Go's parser refuses (a { ), or
// an unencoded # or / that ends the user information early.
func TestHidePasswords(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"--state", "redis://u:hunter2@h:6379/0"}, []string{"--state", "redis://u:xxxxx@h:6379/0"}},
		{[]string{"--state=redis://u:hunt{er2@h:6379/0"}, []string{"--state=redis://xxxxx@h:6379/0"}},
		{[]string{"-state", "redis://u:#hunter2@h:6379/0"}, []string{"-state", "redis://xxxxx@h:6379/0"}},
		{[]string{"--state", "redis://:${PASS}@h:6379/0"}, []string{"--state", "redis://xxxxx@h:6379/0"}},
		{[]string{"--state", "redis://h:6379/0", "--root", "/srv"}, []string{"--state", "redis://h:6379/0", "--root", "/srv"}},
	}
	for _, tt := range tests {
		got := hidePasswords(tt.in)
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("hidePasswords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
