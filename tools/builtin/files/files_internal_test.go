package files

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadForAppendRefusesFIFOSwappedIn plays the race deterministically:
// Lstat sees a regular file, then a FIFO takes its place before the open.
// The open must not block (no writer will ever come) and the check on the
// open file must refuse the FIFO.
func TestReadForAppendRefusesFIFOSwappedIn(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := s.root.Lstat("f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "fifo"), filepath.Join(dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.readForAppend("f.txt", "f.txt", st, 1)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is a FIFO, not a regular file") {
			t.Errorf("append read of a FIFO swapped in: error %v, want one saying it is a FIFO", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("append read of a FIFO swapped in after the Lstat hung")
	}
}

// TestReadForAppendRefusesReplacedFile: a regular file put in the place of
// the one Lstat saw (a symlink followed, a rename) is not appended to.
func TestReadForAppendRefusesReplacedFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"f.txt", "other.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.root.Lstat("f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other.txt", filepath.Join(dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.readForAppend("f.txt", "f.txt", st, 1); err == nil || !strings.Contains(err.Error(), "was replaced") {
		t.Errorf("append read of a replaced file: error %v, want one saying it was replaced", err)
	}
}

func TestQuote(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // exact, or the prefix when cut
		cut      bool
	}{
		{"short", "notes/todo.txt", `"notes/todo.txt"`, false},
		{"exactly the limit", strings.Repeat("a", maxShown), `"` + strings.Repeat("a", maxShown) + `"`, false},
		{"one over", strings.Repeat("a", maxShown+1), `"` + strings.Repeat("a", maxShown) + `"… (201 bytes)`, true},
		{"a megabyte", strings.Repeat("a", 1<<20), `"` + strings.Repeat("a", maxShown) + `"… (1048576 bytes)`, true},
		{"escapes that grow", strings.Repeat("\x01", 150), `"\x01`, true},
		{"multi-byte not cut in two", strings.Repeat("é", 150), `"éé`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quote(tt.in)
			if tt.cut {
				if !strings.HasPrefix(got, tt.want) || !strings.Contains(got, "… (") {
					t.Errorf("quote = %.60q…, want a cut quote starting %.60q", got, tt.want)
				}
			} else if got != tt.want {
				t.Errorf("quote = %q, want %q", got, tt.want)
			}
			if q, _, _ := strings.Cut(got, "…"); len(q) > maxShown+2 {
				t.Errorf("quote shows %d characters, want at most %d", len(q), maxShown+2)
			}
			if strings.Contains(got, `\ufffd`) || strings.Contains(got, `\xc3"`) {
				t.Errorf("quote = %q cuts a character in two", got)
			}
		})
	}
}

func TestCheckLength(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		ok   bool
	}{
		{"empty", "", 4, true},
		{"at the limit", "abcd", 4, true},
		{"over", "abcde", 4, false},
		{"multi-byte at the limit", "éééé", 4, true},
		{"multi-byte over", "ééééé", 4, false},
		{"four-byte characters at the limit", "😀😀😀😀", 4, true},
		{"longer than any 4 characters", strings.Repeat("a", 17), 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkLength("x", tt.in, tt.max)
			if (err == nil) != tt.ok {
				t.Errorf("checkLength(%q, %d) = %v, want ok %v", tt.in, tt.max, err, tt.ok)
			}
		})
	}
}

// FuzzClean: whatever the model sends as a path, clean either refuses it
// with a short message or returns a relative path that stays in the root.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", ".", "a/b", "../x", "a/../../x", "/etc/passwd", `\x`, "a\x00b", strings.Repeat("é/", 300), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkLength("path", s, MaxPathLength) != nil {
			return
		}
		c, err := clean(s)
		if err != nil {
			if len(err.Error()) >= 500 {
				t.Errorf("clean(%.40q): error is %d bytes long, want under 500", s, len(err.Error()))
			}
			return
		}
		if c == ".." || strings.HasPrefix(c, "../") || strings.HasPrefix(c, "/") || strings.ContainsRune(c, 0) {
			t.Errorf("clean(%q) = %q, which leaves the root", s, c)
		}
		if q, _, _ := strings.Cut(quote(s), "…"); len(q) > maxShown+2 {
			t.Errorf("quote(%.40q) shows %d characters, want at most %d", s, len(q), maxShown+2)
		}
	})
}
