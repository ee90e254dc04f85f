// Package files is the sandboxed file built-ins: file_read, file_write and
// file_list, confined to one root folder.
//
// Every access goes through os.Root, so no path can leave the root: not
// with "..", not through a symlink that points out, not as an absolute path
// (refused up front). Only regular files are read or written: devices,
// FIFOs and sockets are refused, and reads open files non-blocking and
// check what they opened, so nothing can hang a call.
//
// Reads are capped (MaxReadBytes) and text only: a file whose first 8 KiB
// hold a NUL byte or invalid UTF-8 is refused as binary. Writes are atomic:
// the content goes to a temporary file beside the target, is synced, and
// renamed over it, so a failed write leaves the old content intact; an
// existing file keeps its mode, a new one gets 0644, and missing parent
// folders are created. Appending rewrites the file the same way.
package files

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

// Defaults for Config's zero values.
const (
	DefaultMaxReadBytes   = 1 << 20
	DefaultMaxWriteBytes  = 10 << 20
	DefaultMaxListEntries = 1000
)

// binarySniff is how much of a file is checked for binary content.
const binarySniff = 8 << 10

// Config configures the file tools.
type Config struct {
	// Root is the folder the tools work in. Required.
	Root string
	// MaxReadBytes caps what one file_read returns. Zero:
	// DefaultMaxReadBytes (1 MiB).
	MaxReadBytes int64
	// MaxWriteBytes caps the size of a file file_write leaves. Zero:
	// DefaultMaxWriteBytes (10 MiB).
	MaxWriteBytes int64
	// MaxListEntries caps the entries file_list returns. Zero:
	// DefaultMaxListEntries.
	MaxListEntries int
}

// New opens the root and returns file_read, file_write and file_list.
func New(cfg Config) ([]tools.Tool, error) {
	if cfg.Root == "" {
		return nil, errors.New("files: no root folder")
	}
	st, err := os.Stat(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("files: root: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("files: root %q is not a folder", cfg.Root)
	}
	root, err := os.OpenRoot(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("files: root: %w", err)
	}
	if cfg.MaxReadBytes <= 0 {
		cfg.MaxReadBytes = DefaultMaxReadBytes
	}
	if cfg.MaxWriteBytes <= 0 {
		cfg.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if cfg.MaxListEntries <= 0 {
		cfg.MaxListEntries = DefaultMaxListEntries
	}
	s := &sandbox{root: root, cfg: cfg}
	read, err := typed.New("file_read",
		fmt.Sprintf("Read a text file under the root folder. Paths are relative to the root (like notes/todo.txt). "+
			"Returns at most %d bytes; use offset and limit to read a large file in parts. Binary files are refused.", cfg.MaxReadBytes),
		s.read, typed.WithAnnotations(tools.Annotations{Title: "Read file", ReadOnly: true, Idempotent: true}))
	if err != nil {
		return nil, err
	}
	write, err := typed.New("file_write",
		fmt.Sprintf("Write (or, with append, add to) a text file under the root folder, creating missing folders. "+
			"The write is atomic: on failure the old content is kept. At most %d bytes per file.", cfg.MaxWriteBytes),
		s.write, typed.WithAnnotations(tools.Annotations{Title: "Write file", Destructive: true}))
	if err != nil {
		return nil, err
	}
	list, err := typed.New("file_list",
		"List a folder under the root folder: each entry's name, type (file, dir, symlink, other) and size, sorted by name. "+
			"An optional glob (like *.md) filters the names.",
		s.list, typed.WithAnnotations(tools.Annotations{Title: "List folder", ReadOnly: true, Idempotent: true}))
	if err != nil {
		return nil, err
	}
	return []tools.Tool{read, write, list}, nil
}

type sandbox struct {
	root *os.Root
	cfg  Config
}

// ReadInput is file_read's input.
type ReadInput struct {
	Path   string `json:"path" jsonschema:"description=File to read, relative to the root folder,minLength=1"`
	Offset int64  `json:"offset,omitempty" jsonschema:"description=Byte offset to start at (default 0),minimum=0"`
	Limit  int64  `json:"limit,omitempty" jsonschema:"description=Most bytes to return (default and maximum: the read cap),minimum=1"`
}

// ReadOutput is file_read's structured output.
type ReadOutput struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Size      int64  `json:"size" jsonschema:"description=The file's size in bytes"`
	Offset    int64  `json:"offset"`
	Bytes     int    `json:"bytes" jsonschema:"description=How many bytes were returned"`
	Truncated bool   `json:"truncated" jsonschema:"description=True when the file goes on after what was returned"`
}

// WriteInput is file_write's input.
type WriteInput struct {
	Path    string `json:"path" jsonschema:"description=File to write, relative to the root folder,minLength=1"`
	Content string `json:"content" jsonschema:"description=The text to write"`
	Append  bool   `json:"append,omitempty" jsonschema:"description=Add to the end of the file instead of replacing it"`
}

// WriteOutput is file_write's structured output.
type WriteOutput struct {
	Path    string `json:"path"`
	Size    int64  `json:"size" jsonschema:"description=The file's size after the write"`
	Created bool   `json:"created"`
}

// ListInput is file_list's input.
type ListInput struct {
	Path string `json:"path,omitempty" jsonschema:"description=Folder to list, relative to the root folder (default: the root)"`
	Glob string `json:"glob,omitempty" jsonschema:"description=Only names matching this pattern (like *.txt)"`
}

// Entry is one entry of a listing.
type Entry struct {
	Name string `json:"name"`
	Type string `json:"type" jsonschema:"enum=file,enum=dir,enum=symlink,enum=other"`
	Size int64  `json:"size"`
}

// ListOutput is file_list's structured output.
type ListOutput struct {
	Path      string  `json:"path"`
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated"`
}

// clean checks a path the model gave and returns it cleaned, relative.
func clean(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", tools.InvalidArgs("the path holds a NUL byte")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", tools.InvalidArgs("absolute path %q: give a path relative to the root folder", p)
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", tools.InvalidArgs("path %q leaves the root folder", p)
	}
	return c, nil
}

// fsError turns a file system error into a message for the model.
func fsError(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Failed("%q does not exist", p)
	case errors.Is(err, fs.ErrPermission):
		return tools.Failed("permission denied for %q", p)
	case strings.Contains(err.Error(), "escapes from parent"), strings.Contains(err.Error(), "path escapes"):
		return tools.InvalidArgs("path %q leads outside the root folder (through .. or a symlink) and is refused", p)
	case errors.Is(err, syscall.ENOTDIR):
		return tools.Failed("a part of %q is not a folder", p)
	}
	return tools.Failed("%s: %v", p, errors.Unwrap(err))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

func (s *sandbox) read(_ context.Context, in ReadInput) (ReadOutput, error) {
	p, err := clean(in.Path)
	if err != nil {
		return ReadOutput{}, err
	}
	st, err := s.root.Stat(p) // follows symlinks, but only within the root
	if err != nil {
		return ReadOutput{}, fsError(in.Path, err)
	}
	if !st.Mode().IsRegular() {
		return ReadOutput{}, tools.InvalidArgs("%q is a %s, not a regular file; only regular files can be read", in.Path, kind(st.Mode()))
	}
	// Non-blocking, and checked again once open: a file swapped for a FIFO
	// between the two calls still cannot hang the read.
	f, err := s.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ReadOutput{}, fsError(in.Path, err)
	}
	defer f.Close()
	st, err = f.Stat()
	if err != nil {
		return ReadOutput{}, fsError(in.Path, err)
	}
	if !st.Mode().IsRegular() {
		return ReadOutput{}, tools.InvalidArgs("%q is a %s, not a regular file; only regular files can be read", in.Path, kind(st.Mode()))
	}
	head := make([]byte, min(binarySniff, st.Size()))
	n, _ := io.ReadFull(f, head)
	if isBinary(head[:n]) {
		return ReadOutput{}, tools.InvalidArgs("%q looks binary (a NUL byte or invalid UTF-8 in its first %d bytes); only text files are returned", in.Path, binarySniff)
	}
	if in.Offset > st.Size() {
		return ReadOutput{}, tools.InvalidArgs("offset %d is past the end of %q (%d bytes)", in.Offset, in.Path, st.Size())
	}
	limit := s.cfg.MaxReadBytes
	if in.Limit > 0 && in.Limit < limit {
		limit = in.Limit
	}
	if in.Limit == 0 && in.Offset == 0 && st.Size() > limit {
		return ReadOutput{}, tools.InvalidArgs("%q is %d bytes, more than the %d a read returns: read it in parts with offset and limit", in.Path, st.Size(), limit)
	}
	buf := make([]byte, min(limit, st.Size()-in.Offset))
	n, err = f.ReadAt(buf, in.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return ReadOutput{}, fsError(in.Path, err)
	}
	buf = buf[:n]
	// Do not cut a UTF-8 sequence in two at the end.
	for len(buf) > 0 && in.Offset+int64(len(buf)) < st.Size() && !utf8.Valid(buf[max(0, len(buf)-utf8.UTFMax):]) {
		buf = buf[:len(buf)-1]
	}
	return ReadOutput{Path: p, Content: string(buf), Size: st.Size(), Offset: in.Offset, Bytes: len(buf),
		Truncated: in.Offset+int64(len(buf)) < st.Size()}, nil
}

func isBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	// A multi-byte character cut by the sniff window is not invalid.
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return false
		}
		b = b[:len(b)-1]
	}
	return !utf8.Valid(b)
}

func (s *sandbox) write(_ context.Context, in WriteInput) (WriteOutput, error) {
	p, err := clean(in.Path)
	if err != nil {
		return WriteOutput{}, err
	}
	if p == "." {
		return WriteOutput{}, tools.InvalidArgs("give a file name, not the root folder")
	}
	mode := fs.FileMode(0o644)
	var old []byte
	created := true
	st, err := s.root.Lstat(p)
	switch {
	case err == nil:
		if !st.Mode().IsRegular() {
			return WriteOutput{}, tools.InvalidArgs("%q is a %s, not a regular file; only regular files can be written", in.Path, kind(st.Mode()))
		}
		created = false
		mode = st.Mode().Perm()
		if in.Append {
			if st.Size()+int64(len(in.Content)) > s.cfg.MaxWriteBytes {
				return WriteOutput{}, tools.InvalidArgs("%q would be %d bytes; the limit is %d", in.Path, st.Size()+int64(len(in.Content)), s.cfg.MaxWriteBytes)
			}
			if old, err = s.root.ReadFile(p); err != nil {
				return WriteOutput{}, fsError(in.Path, err)
			}
		}
	case errors.Is(err, fs.ErrNotExist):
		if int64(len(in.Content)) > s.cfg.MaxWriteBytes {
			return WriteOutput{}, tools.InvalidArgs("the content is %d bytes; the limit is %d", len(in.Content), s.cfg.MaxWriteBytes)
		}
		if dir := path.Dir(p); dir != "." {
			if err := s.root.MkdirAll(dir, 0o755); err != nil {
				return WriteOutput{}, fsError(in.Path, err)
			}
		}
	default:
		return WriteOutput{}, fsError(in.Path, err)
	}
	data := append(old, in.Content...)
	if int64(len(data)) > s.cfg.MaxWriteBytes {
		return WriteOutput{}, tools.InvalidArgs("the content is %d bytes; the limit is %d", len(data), s.cfg.MaxWriteBytes)
	}
	if err := s.atomicWrite(p, data, mode); err != nil {
		return WriteOutput{}, fsError(in.Path, err)
	}
	return WriteOutput{Path: p, Size: int64(len(data)), Created: created}, nil
}

// atomicWrite writes data to a temporary file beside p, syncs it, and
// renames it over p.
func (s *sandbox) atomicWrite(p string, data []byte, mode fs.FileMode) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(p), "."+path.Base(p)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = s.root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil { // the umask may have narrowed it
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := s.root.Rename(tmp, p); err != nil {
		return err
	}
	ok = true
	return nil
}

func (s *sandbox) list(_ context.Context, in ListInput) (ListOutput, error) {
	dir := in.Path
	if dir == "" {
		dir = "."
	}
	p, err := clean(dir)
	if err != nil {
		return ListOutput{}, err
	}
	if in.Glob != "" {
		if _, err := path.Match(in.Glob, ""); err != nil {
			return ListOutput{}, tools.InvalidArgs("bad glob %q: %v", in.Glob, err)
		}
	}
	st, err := s.root.Stat(p)
	if err != nil {
		return ListOutput{}, fsError(dir, err)
	}
	if !st.IsDir() {
		return ListOutput{}, tools.InvalidArgs("%q is a %s, not a folder", dir, kind(st.Mode()))
	}
	d, err := s.root.Open(p)
	if err != nil {
		return ListOutput{}, fsError(dir, err)
	}
	defer d.Close()
	des, err := d.ReadDir(-1)
	if err != nil {
		return ListOutput{}, fsError(dir, err)
	}
	out := ListOutput{Path: p, Entries: []Entry{}}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, de := range des {
		if in.Glob != "" {
			if ok, _ := path.Match(in.Glob, de.Name()); !ok {
				continue
			}
		}
		if len(out.Entries) == s.cfg.MaxListEntries {
			out.Truncated = true
			break
		}
		e := Entry{Name: de.Name(), Type: kind(de.Type())}
		if e.Type != "file" && e.Type != "dir" && e.Type != "symlink" {
			e.Type = "other"
		}
		if info, err := de.Info(); err == nil && de.Type().IsRegular() {
			e.Size = info.Size()
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}
