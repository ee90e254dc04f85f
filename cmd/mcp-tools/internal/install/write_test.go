package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteKeepsEveryBackup: a second install does not overwrite the first
// backup, which holds the file as the user had it.
func TestWriteKeepsEveryBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	original := `{"mcpServers": {"mine": {"command": "/bin/mine"}}}`
	os.WriteFile(path, []byte(original), 0o600)
	c := mustClient(t, "cursor")
	r1, err := WriteFile(c, path, "one", Entry{Command: "/x"}, false)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := WriteFile(c, path, "two", Entry{Command: "/y"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Backup == r2.Backup {
		t.Fatalf("both installs wrote the backup %s", r1.Backup)
	}
	if b, _ := os.ReadFile(r1.Backup); string(b) != original {
		t.Errorf("first backup = %q, want the original", b)
	}
}

// TestWriteFollowsSymlink: a config file that is a symlink (a dotfiles
// setup) stays a link, and the file it names is the one updated.
func TestWriteFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "mcp.json")
	os.MkdirAll(filepath.Dir(target), 0o700)
	os.WriteFile(target, []byte(`{"mcpServers": {}}`), 0o600)
	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	r, err := WriteFile(mustClient(t, "cursor"), link, "mcp-tools", entry, false)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "mcp-tools") || r.Path != target {
		t.Errorf("target = %s, result path %s; want the entry in %s", b, r.Path, target)
	}
}

// TestWriteRefusesReadOnly: a file without write permission is left as it
// is, with an error that says why.
func TestWriteRefusesReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {}}`), 0o444)
	_, err := WriteFile(mustClient(t, "cursor"), path, "mcp-tools", entry, false)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("WriteFile on a read-only file = %v, want refused", err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"mcpServers": {}}` {
		t.Errorf("file changed: %s", b)
	}
}

// TestWriteFollowsDanglingSymlink: a config file that is a link to a file
// not made yet (a dotfiles repository set up before the client ran) stays
// a link, and the file it names is created.
func TestWriteFollowsDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "cursor", "mcp.json")
	link := filepath.Join(dir, "home", ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink(filepath.Join("..", "..", "dotfiles", "cursor", "mcp.json"), link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	r, err := WriteFile(mustClient(t, "cursor"), link, "mcp-tools", entry, false)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file (%v)", err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "mcp-tools") || r.Path != target || !r.Created {
		t.Errorf("target = %q, result %+v; want the entry created in %s", b, r, target)
	}
}

// TestWriteKeepsAConcurrentChange: when the client saves the file while
// install is writing it, install gives up rather than overwrite that
// save with the merge of the older content.
func TestWriteKeepsAConcurrentChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	os.WriteFile(path, []byte(`{"numStartups": 1, "mcpServers": {}}`), 0o600)
	theirs := `{"numStartups": 2, "mcpServers": {}}`
	testHookBeforeRename = func() { os.WriteFile(path, []byte(theirs), 0o600) }
	defer func() { testHookBeforeRename = nil }()
	r, err := WriteFile(mustClient(t, "claude-code"), path, "mcp-tools", entry, false)
	if err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("WriteFile = %v, want an error saying the file changed", err)
	}
	if b, _ := os.ReadFile(path); string(b) != theirs {
		t.Errorf("the client's save was overwritten: %s", b)
	}
	if _, err := os.Lstat(r.Backup); r.Backup != "" && err == nil {
		t.Errorf("a backup %s was left for an install that did not happen", r.Backup)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
}

// TestWriteKeepsAConcurrentCreate: the same when the client creates the
// file install is creating.
func TestWriteKeepsAConcurrentCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	theirs := `{"mcpServers": {"theirs": {"command": "t"}}}`
	testHookBeforeRename = func() { os.WriteFile(path, []byte(theirs), 0o600) }
	defer func() { testHookBeforeRename = nil }()
	if _, err := WriteFile(mustClient(t, "cursor"), path, "mcp-tools", entry, false); err == nil {
		t.Error("WriteFile overwrote a file created meanwhile")
	}
	if b, _ := os.ReadFile(path); string(b) != theirs {
		t.Errorf("the client's file was overwritten: %s", b)
	}
}
