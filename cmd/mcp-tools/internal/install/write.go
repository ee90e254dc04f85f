package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Result says what Write did, or would do.
type Result struct {
	// Path is the client's configuration file.
	Path string
	// Backup is the copy of the file as it was before, when there was one
	// and it was written.
	Backup string
	// Created is true when the file did not exist.
	Created bool
	// Replaced is true when an entry of the same name was replaced.
	Replaced bool
	// Content is the file's new content.
	Content []byte
}

// Write merges the entry into the client's configuration file (see Merge)
// and, unless dryRun, writes it: the old file is first copied to
// PATH.bak, and the new one replaces it atomically with the same mode,
// unless the file changed meanwhile (another program saved it): then
// nothing is written and the error says so.
// Missing folders are created. Nothing is written when the file cannot be
// parsed.
func Write(c Client, name string, e Entry, dryRun bool) (Result, error) {
	path, err := c.Path()
	if err != nil {
		return Result{}, err
	}
	return WriteFile(c, path, name, e, dryRun)
}

// WriteFile is Write on the file at path.
//
// A symlink is followed, even to a file not made yet: the file it names is
// the one changed (and r.Path says so), so a dotfiles link stays a link. A file without write
// permission is refused, not replaced. The backup never overwrites an
// earlier one: FILE.bak, then FILE.bak.1, FILE.bak.2...
func WriteFile(c Client, path, name string, e Entry, dryRun bool) (Result, error) {
	path = resolve(path)
	r := Result{Path: path}
	old, mode, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Created, mode = true, 0o600
	case err != nil:
		return r, err
	case mode&0o200 == 0:
		return r, fmt.Errorf("%s is read-only (mode %v): it was left as it is; make it writable to install into it", path, mode)
	}
	r.Content, r.Replaced, err = Merge(c, old, name, e)
	if err != nil {
		return r, fmt.Errorf("%s: %w; fix or move it, then try again", path, err)
	}
	if dryRun {
		return r, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return r, err
	}
	// The client may save the file meanwhile (Claude Code rewrites its
	// file often): then install gives up rather than overwrite that save.
	unchanged := func() error {
		now, _, err := readFile(path)
		if r.Created && errors.Is(err, fs.ErrNotExist) || !r.Created && err == nil && bytes.Equal(now, old) {
			return nil
		}
		return fmt.Errorf("%s changed while install was writing it (another program saved it): it was left as that program wrote it; run install again", path)
	}
	if !r.Created {
		r.Backup = freeName(path + ".bak")
		if err := atomicWrite(r.Backup, old, mode, path, nil); err != nil {
			return r, fmt.Errorf("back up %s: %w", path, err)
		}
	}
	if err := atomicWrite(path, r.Content, mode, path, unchanged); err != nil {
		if r.Backup != "" {
			os.Remove(r.Backup)
			r.Backup = ""
		}
		return r, err
	}
	return r, nil
}

// resolve follows the symlinks of path, the last one too when the file it
// names does not exist yet, so that the file a link names is the one
// written and the link stays a link.
func resolve(path string) string {
	for range 40 {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real
		}
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return path
		}
		target, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(target) {
			dir := filepath.Dir(path)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			target = filepath.Join(dir, target)
		}
		path = target
	}
	return path
}

// freeName returns name, or name.1, name.2... the first that does not
// exist, so that no backup overwrites another.
func freeName(name string) string {
	if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return name
	}
	for i := 1; ; i++ {
		n := fmt.Sprintf("%s.%d", name, i)
		if _, err := os.Lstat(n); errors.Is(err, fs.ErrNotExist) {
			return n
		}
	}
}

func readFile(path string) ([]byte, fs.FileMode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, 0, err
	}
	if len(b) > MaxFileBytes {
		return nil, 0, fmt.Errorf("%s: %w: it is larger than %d bytes", path, ErrParse, MaxFileBytes)
	}
	return b, st.Mode().Perm(), nil
}

// atomicWrite writes b to a temporary file next to path and renames it
// over path, with mode and the owner of like (when it exists), so a file
// rewritten by root for another user stays that user's. When check is not
// nil, an error from it, called just before the rename, stops the write.
func atomicWrite(path string, b []byte, mode fs.FileMode, like string, check func() error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	keepOwner(tmp, like)
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename()
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	return os.Rename(tmp.Name(), path)
}

// testHookBeforeRename, when set, runs just before atomicWrite renames.
var testHookBeforeRename func()
