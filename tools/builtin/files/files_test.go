package files_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/files"
	"github.com/mcp-tools/mcp-tools/tools/toolstest"
)

// sandbox makes parent/root (the tools' root) and parent/root_evil beside
// it, and returns the tools by name.
func sandbox(t *testing.T, cfg files.Config) (string, map[string]tools.Tool) {
	t.Helper()
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	must(t, os.Mkdir(root, 0o755))
	must(t, os.Mkdir(filepath.Join(parent, "root_evil"), 0o755))
	must(t, os.WriteFile(filepath.Join(parent, "root_evil", "secret.txt"), []byte("secret"), 0o600))
	must(t, os.WriteFile(filepath.Join(parent, "outside.txt"), []byte("outside"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello, world\n"), 0o640))
	must(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "sub", "a.md"), []byte("# A"), 0o644))
	must(t, os.Symlink(filepath.Join(parent, "outside.txt"), filepath.Join(root, "link_out")))
	must(t, os.Symlink("hello.txt", filepath.Join(root, "link_in")))
	must(t, os.Symlink("/proc/self/environ", filepath.Join(root, "link_proc")))
	cfg.Root = root
	sb, err := files.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { must(t, sb.Close()) })
	m := map[string]tools.Tool{}
	for _, tl := range sb.Tools() {
		m[tl.Info().Name] = tl
	}
	return root, m
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func call(t *testing.T, tl tools.Tool, args any) tools.Outcome {
	t.Helper()
	b, _ := json.Marshal(args)
	done := make(chan tools.Outcome, 1)
	go func() { done <- tools.Settle(tl.Call(context.Background(), b)) }()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("%s %s hung", tl.Info().Name, b)
	}
	return tools.Outcome{}
}

func TestRead(t *testing.T) {
	root, ts := sandbox(t, files.Config{MaxReadBytes: 64})
	r := call(t, ts["file_read"], map[string]any{"path": "hello.txt"})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	var out files.ReadOutput
	must(t, json.Unmarshal([]byte(r.Text), &out))
	if out.Content != "hello, world\n" || out.Truncated {
		t.Errorf("read = %+v", out)
	}
	r = call(t, ts["file_read"], map[string]any{"path": "link_in", "offset": 7, "limit": 5})
	must(t, json.Unmarshal([]byte(r.Text), &out))
	if out.Content != "world" || !out.Truncated {
		t.Errorf("read through an inside symlink with offset and limit = %+v %v", out, r.Err)
	}
	must(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("a", 100)), 0o644))
	if r := call(t, ts["file_read"], map[string]any{"path": "big.txt"}); r.Err == nil || !strings.Contains(r.Err.Message, "offset and limit") {
		t.Errorf("over-cap read = %v", r.Err)
	}
	r = call(t, ts["file_read"], map[string]any{"path": "big.txt", "offset": 90})
	must(t, json.Unmarshal([]byte(r.Text), &out))
	if out.Bytes != 10 || out.Truncated {
		t.Errorf("tail read = %+v", out)
	}
}

func TestRefusals(t *testing.T) {
	root, ts := sandbox(t, files.Config{})
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "bin.dat"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o644))
	sock := filepath.Join(root, "s.sock")
	ln, err := net.Listen("unix", sock)
	must(t, err)
	defer ln.Close()
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"dot-dot", "file_read", map[string]any{"path": "../outside.txt"}, "leaves the root"},
		{"dot-dot inside", "file_read", map[string]any{"path": "sub/../../outside.txt"}, "leaves the root"},
		{"absolute", "file_read", map[string]any{"path": "/etc/passwd"}, "absolute path"},
		{"proc", "file_read", map[string]any{"path": "/proc/self/environ"}, "absolute path"},
		{"symlink out", "file_read", map[string]any{"path": "link_out"}, "outside the root"},
		{"symlink to proc", "file_read", map[string]any{"path": "link_proc"}, "outside the root"},
		{"sibling with the root's name as prefix", "file_read", map[string]any{"path": "../root_evil/secret.txt"}, "leaves the root"},
		{"fifo", "file_read", map[string]any{"path": "fifo"}, "FIFO"},
		{"socket", "file_read", map[string]any{"path": "s.sock"}, "socket"},
		{"device via dev", "file_read", map[string]any{"path": "/dev/zero"}, "absolute path"},
		{"binary", "file_read", map[string]any{"path": "bin.dat"}, "looks binary"},
		{"folder", "file_read", map[string]any{"path": "sub"}, "not a regular file"},
		{"missing", "file_read", map[string]any{"path": "nope.txt"}, "does not exist"},
		{"write out", "file_write", map[string]any{"path": "../x.txt", "content": "x"}, "leaves the root"},
		{"write through symlink out", "file_write", map[string]any{"path": "link_out", "content": "x"}, "not a regular file"},
		{"write to fifo", "file_write", map[string]any{"path": "fifo", "content": "x"}, "FIFO"},
		{"append to fifo", "file_write", map[string]any{"path": "fifo", "content": "x", "append": true}, "is a FIFO, not a regular file"},
		{"list out", "file_list", map[string]any{"path": ".."}, "leaves the root"},
		{"list a file", "file_list", map[string]any{"path": "hello.txt"}, "not a folder"},
		{"bad glob", "file_list", map[string]any{"glob": "["}, "bad glob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, ts[tt.tool], tt.args)
			if r.Err == nil || !strings.Contains(r.Err.Message, tt.want) {
				t.Errorf("%s %v = %q %v, want an error containing %q", tt.tool, tt.args, r.Text, r.Err, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(root, "..", "outside.txt")); string(b) != "outside" {
		t.Errorf("the file outside the root changed: %q", b)
	}
}

func TestDeviceRefused(t *testing.T) {
	root, ts := sandbox(t, files.Config{})
	must(t, os.Symlink("/dev/zero", filepath.Join(root, "link_dev")))
	if r := call(t, ts["file_read"], map[string]any{"path": "link_dev"}); r.Err == nil || !strings.Contains(r.Err.Message, "outside the root") {
		t.Errorf("read through a symlink to /dev/zero = %q %v, want a refusal", r.Text, r.Err)
	}
	// A device node inside the root: only a privileged test run can make one.
	if err := syscall.Mknod(filepath.Join(root, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot make a device node here: %v", err)
	}
	for _, tc := range []struct{ tool, want string }{
		{"file_read", "is a device, not a regular file"},
		{"file_write", "is a device, not a regular file"},
	} {
		r := call(t, ts[tc.tool], map[string]any{"path": "null", "content": "x"})
		if r.Err == nil || !strings.Contains(r.Err.Message, tc.want) {
			t.Errorf("%s on a device = %q %v, want an error containing %q", tc.tool, r.Text, r.Err, tc.want)
		}
	}
	r := call(t, ts["file_list"], map[string]any{"glob": "null"})
	var out files.ListOutput
	must(t, json.Unmarshal([]byte(r.Text), &out))
	if len(out.Entries) != 1 || out.Entries[0].Type != "other" {
		t.Errorf("list of a device = %+v, want one entry of type other", out.Entries)
	}
}

func TestWrite(t *testing.T) {
	root, ts := sandbox(t, files.Config{MaxWriteBytes: 32})
	w := ts["file_write"]
	if r := call(t, w, map[string]any{"path": "hello.txt", "content": "new"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	st, _ := os.Stat(filepath.Join(root, "hello.txt"))
	if b, _ := os.ReadFile(filepath.Join(root, "hello.txt")); string(b) != "new" || st.Mode().Perm() != 0o640 {
		t.Errorf("after write: %q mode %v, want \"new\" with the mode kept (0640)", b, st.Mode().Perm())
	}
	if r := call(t, w, map[string]any{"path": "hello.txt", "content": "+more", "append": true}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "hello.txt")); string(b) != "new+more" {
		t.Errorf("after append: %q", b)
	}
	if r := call(t, w, map[string]any{"path": "deep/er/new.txt", "content": "x"}); r.Err != nil {
		t.Fatalf("write with missing folders: %v", r.Err)
	}
	if st, err := os.Stat(filepath.Join(root, "deep", "er", "new.txt")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new file: %v %v", st, err)
	}
	// Over the cap: refused, and the old content is intact.
	if r := call(t, w, map[string]any{"path": "hello.txt", "content": strings.Repeat("z", 100)}); r.Err == nil {
		t.Error("an over-size write succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "hello.txt")); string(b) != "new+more" {
		t.Errorf("after a refused write: %q, want the old content", b)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestWriteFailureKeepsOldContent(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	root, ts := sandbox(t, files.Config{})
	must(t, os.Chmod(root, 0o555)) // no new files: the temporary file cannot be made
	defer os.Chmod(root, 0o755)
	if r := call(t, ts["file_write"], map[string]any{"path": "hello.txt", "content": "lost"}); r.Err == nil {
		t.Fatal("write succeeded in a read-only folder")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "hello.txt")); string(b) != "hello, world\n" {
		t.Errorf("content after a failed write = %q", b)
	}
}

func TestList(t *testing.T) {
	_, ts := sandbox(t, files.Config{MaxListEntries: 3})
	r := call(t, ts["file_list"], map[string]any{})
	var out files.ListOutput
	must(t, json.Unmarshal([]byte(r.Text), &out))
	if len(out.Entries) != 3 || !out.Truncated || out.Entries[0].Name != "hello.txt" || out.Entries[0].Size != 13 {
		t.Errorf("list = %+v", out)
	}
	r = call(t, ts["file_list"], map[string]any{"path": "sub", "glob": "*.md"})
	must(t, json.Unmarshal([]byte(r.Text), &out))
	if len(out.Entries) != 1 || out.Entries[0].Name != "a.md" || out.Entries[0].Type != "file" {
		t.Errorf("glob list = %+v", out)
	}
}

func TestNeedsRoot(t *testing.T) {
	if _, err := files.Open(files.Config{}); err == nil {
		t.Error("Open without a root succeeded")
	}
	f := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(f, nil, 0o644))
	if _, err := files.Open(files.Config{Root: f}); err == nil {
		t.Error("Open with a file as root succeeded")
	}
	if _, err := files.New(files.Config{Root: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("New with a missing root succeeded")
	}
}

func TestConformance(t *testing.T) {
	_, ts := sandbox(t, files.Config{})
	for _, tl := range ts {
		toolstest.Check(t, tl)
	}
}

func TestOversizeNewFileCreatesNoFolders(t *testing.T) {
	root, ts := sandbox(t, files.Config{MaxWriteBytes: 8})
	if r := call(t, ts["file_write"], map[string]any{"path": "new/deep/f.txt", "content": "far too long"}); r.Err == nil {
		t.Fatal("an over-size write succeeded")
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("a refused write left folders behind: %v", err)
	}
}

// TestReadInParts reads files of multi-byte text in parts: each part ends
// on a character boundary and holds as many whole characters as fit in the
// limit, and the parts put together are the file.
func TestReadInParts(t *testing.T) {
	tests := []struct{ name, text string }{
		{"ASCII", strings.Repeat("abc", 100)},
		{"2-byte characters", strings.Repeat("é", 150)},
		{"3-byte characters", strings.Repeat("中", 100)},
		{"4-byte characters", strings.Repeat("😀", 75)},
		{"mixed", strings.Repeat("a中é😀", 30)},
	}
	const limit = 64
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, ts := sandbox(t, files.Config{MaxReadBytes: limit})
			must(t, os.WriteFile(filepath.Join(root, "t.txt"), []byte(tt.text), 0o644))
			var got strings.Builder
			for off := 0; off < len(tt.text); {
				r := call(t, ts["file_read"], map[string]any{"path": "t.txt", "offset": off, "limit": limit})
				if r.Err != nil {
					t.Fatalf("read at %d: %v", off, r.Err)
				}
				var out files.ReadOutput
				must(t, json.Unmarshal([]byte(r.Text), &out))
				if out.Truncated && out.Bytes <= limit-utf8.UTFMax {
					t.Fatalf("read at %d returned %d bytes of a %d-byte limit, want all but at most a cut character", off, out.Bytes, limit)
				}
				if !utf8.ValidString(out.Content) || len(out.Content) != out.Bytes {
					t.Fatalf("read at %d: %d bytes %q, want whole characters", off, out.Bytes, out.Content)
				}
				got.WriteString(out.Content)
				off += out.Bytes
			}
			if got.String() != tt.text {
				t.Errorf("the parts put together = %q, want the file", got.String())
			}
		})
	}
}

// TestWriteLongNames: a file name as long as the file system allows
// (255 bytes) can be written and appended to; the temporary file beside it
// must not need a longer name.
func TestWriteLongNames(t *testing.T) {
	for _, name := range []string{
		strings.Repeat("a", 238),
		strings.Repeat("b", 255),
		strings.Repeat("é", 127) + "x", // 255 bytes, multi-byte
		"sub/" + strings.Repeat("c", 255),
	} {
		t.Run(fmt.Sprintf("%d bytes", len(name)), func(t *testing.T) {
			root, ts := sandbox(t, files.Config{})
			for _, args := range []map[string]any{
				{"path": name, "content": "one\n"},
				{"path": name, "content": "two\n", "append": true},
			} {
				if r := call(t, ts["file_write"], args); r.Err != nil {
					t.Fatalf("write %v: %v", args["append"], r.Err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(root, name)); err != nil || string(b) != "one\ntwo\n" {
				t.Errorf("file = %q %v, want %q", b, err, "one\ntwo\n")
			}
		})
	}
}

// TestListStopsWhenCancelled: listing a huge folder reads it in batches
// and stops when the call's context ends, rather than reading it whole
// whatever the call timeout says.
func TestListStopsWhenCancelled(t *testing.T) {
	root, ts := sandbox(t, files.Config{MaxListEntries: 10})
	must(t, os.Mkdir(filepath.Join(root, "big"), 0o755))
	for i := range 5000 {
		f, err := os.Create(filepath.Join(root, "big", fmt.Sprintf("f%05d.txt", i)))
		must(t, err)
		f.Close()
	}
	b, _ := json.Marshal(map[string]any{"path": "big", "glob": "*.txt"})
	r := tools.Settle(ts["file_list"].Call(toolstest.Countdown(1), b))
	if r.Err == nil || r.Err.Kind != tools.KindCancelled || !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("list with its context cancelled part-way = %.100q %v, want a cancelled error", r.Text, r.Err)
	}
	// Uncancelled, the listing is the first entries by name, and says
	// there are more.
	r = call(t, ts["file_list"], map[string]any{"path": "big", "glob": "*.txt"})
	var out files.ListOutput
	must(t, json.Unmarshal([]byte(r.Text), &out))
	if len(out.Entries) != 10 || !out.Truncated || out.Entries[0].Name != "f00000.txt" || out.Entries[9].Name != "f00009.txt" {
		t.Errorf("list of a big folder = %+v", out)
	}
}

// TestNewFileModeHonoursUmask: a new file gets 0644 less the process's
// umask, as folders do (and as os.WriteFile does): a server run with
// umask 077 must not leave files others can read. An existing file keeps
// its mode whatever the umask.
func TestNewFileModeHonoursUmask(t *testing.T) {
	root, ts := sandbox(t, files.Config{})
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, args := range []map[string]any{
		{"path": "new.txt", "content": "x"},
		{"path": "dir/new.txt", "content": "x"},
		{"path": "hello.txt", "content": "x"},
		{"path": "hello.txt", "content": "y", "append": true},
	} {
		if r := call(t, ts["file_write"], args); r.Err != nil {
			t.Fatalf("write %v: %v", args, r.Err)
		}
	}
	for name, want := range map[string]os.FileMode{"new.txt": 0o600, "dir": 0o700, "dir/new.txt": 0o600, "hello.txt": 0o640} {
		st, err := os.Stat(filepath.Join(root, name))
		must(t, err)
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", name, got, os.FileMode(want))
		}
	}
}

// TestReadOnlyFileNotReplaced: a file without its owner's write bit is
// refused, as an editor or a shell redirection refuses it; the write
// replaced it (by renaming a new file over it), read-only mode and all.
func TestReadOnlyFileNotReplaced(t *testing.T) {
	root, ts := sandbox(t, files.Config{})
	p := filepath.Join(root, "locked.txt")
	must(t, os.WriteFile(p, []byte("keep"), 0o444))
	for _, args := range []map[string]any{
		{"path": "locked.txt", "content": "x"},
		{"path": "locked.txt", "content": "y", "append": true},
	} {
		r := call(t, ts["file_write"], args)
		if r.Err == nil || !strings.Contains(r.Err.Message, "read-only") {
			t.Errorf("write %v = %+v, want refused: read-only", args, r)
		}
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "keep" {
		t.Errorf("locked.txt = %q, %v; want it untouched", b, err)
	}
}
