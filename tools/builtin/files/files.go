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
// existing file keeps its mode (one without its owner's write bit is refused),
// a new one gets 0644 less the umask, and
// missing parent folders are created (0755 less the umask). Appending
// rewrites the file the same way, from the old content read through a
// non-blocking open that is checked to still be the regular file seen
// before. Writes to one file are serialised (see WriteLockStripes), so
// concurrent appends all land, in some order.
//
// Every string argument has a maxLength in the published schema
// (MaxPathLength, MaxGlobLength, MaxContentLength), and the tools check it
// again before any work; error messages quote at most 200 characters of an
// argument.
//
// Open returns a Sandbox that owns the open root; its owner calls Close at
// shutdown, after which the tools' calls fail.
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
	"sync"
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

// Sandbox owns the open root folder the file tools work in, and the tools.
// Make one with Open; whoever made it calls Close when the tools are no
// longer served (at server shutdown, say), which releases the root.
// Its methods and its tools may be called concurrently.
type Sandbox struct {
	root  *os.Root
	cfg   Config
	locks *writeLocks
	tools []tools.Tool

	// mu is held shared by every call for its whole run and exclusively by
	// Close, so Close waits for the calls in flight: a write it cut short
	// could leave its temporary file behind.
	mu     sync.RWMutex
	closed bool
}

// Open opens cfg.Root and makes file_read, file_write and file_list on it.
// The caller owns the result and must Close it to release the root.
func Open(cfg Config) (*Sandbox, error) {
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
	if cfg.MaxReadBytes <= 0 {
		cfg.MaxReadBytes = DefaultMaxReadBytes
	}
	if cfg.MaxWriteBytes <= 0 {
		cfg.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if cfg.MaxListEntries <= 0 {
		cfg.MaxListEntries = DefaultMaxListEntries
	}
	s := &Sandbox{cfg: cfg, locks: newWriteLocks()}
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
	s.tools = []tools.Tool{read, write, list}
	if s.root, err = os.OpenRoot(cfg.Root); err != nil {
		return nil, fmt.Errorf("files: root: %w", err)
	}
	return s, nil
}

// Tools returns file_read, file_write and file_list, in that order. Once
// the Sandbox is closed their calls fail with an execution error that
// wraps os.ErrClosed.
func (s *Sandbox) Tools() []tools.Tool { return slices.Clone(s.tools) }

// Close waits for the calls in flight to return, then releases the root.
// Calls made after it fail (see Tools). Closing twice is harmless.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.root.Close(); err != nil {
		return fmt.Errorf("files: close root: %w", err)
	}
	return nil
}

// enter starts a call: it fails once the Sandbox is closed, and otherwise
// holds Close off until the returned func runs.
func (s *Sandbox) enter() (exit func(), err error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, errClosed()
	}
	return s.mu.RUnlock, nil
}

func errClosed() error {
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: "the file tools are closed", Err: os.ErrClosed}
}

// New opens the root and returns file_read, file_write and file_list.
//
// Deprecated: the root New opens stays open until the process ends. Use
// Open, whose Close releases it.
func New(cfg Config) ([]tools.Tool, error) {
	s, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	return s.Tools(), nil
}

// ReadInput is file_read's input.
type ReadInput struct {
	Path   string `json:"path" jsonschema:"description=File to read (relative to the root folder),minLength=1,maxLength=4096"`
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
	Path    string `json:"path" jsonschema:"description=File to write (relative to the root folder),minLength=1,maxLength=4096"`
	Content string `json:"content" jsonschema:"description=The text to write,maxLength=10485760"`
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
	Path string `json:"path,omitempty" jsonschema:"description=Folder to list (relative to the root folder; default: the root),maxLength=4096"`
	Glob string `json:"glob,omitempty" jsonschema:"description=Only names matching this pattern (like *.txt),maxLength=256"`
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
		return "", tools.InvalidArgs("absolute path %s: give a path relative to the root folder", quote(p))
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", tools.InvalidArgs("path %s leaves the root folder", quote(p))
	}
	return c, nil
}

// fsError turns a file system error into a message for the model.
func fsError(p string, err error) error {
	q := quote(p)
	switch {
	case errors.Is(err, os.ErrClosed):
		return errClosed()
	case errors.Is(err, fs.ErrNotExist):
		return tools.Failed("%s does not exist", q)
	case errors.Is(err, fs.ErrPermission):
		return tools.Failed("permission denied for %s", q)
	case strings.Contains(err.Error(), "escapes from parent"), strings.Contains(err.Error(), "path escapes"):
		return tools.InvalidArgs("path %s leads outside the root folder (through .. or a symlink) and is refused", q)
	case errors.Is(err, syscall.ENOTDIR):
		return tools.Failed("a part of %s is not a folder", q)
	}
	// The cause without the path it carries, which may be long.
	cause := err
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		cause = pe.Err
	case errors.As(err, &le):
		cause = le.Err
	}
	return tools.Failed("%s: %v", q, cause)
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

// openRegular opens p for reading and returns it with what Fstat says of
// the open file, refusing anything but a regular file. The open is
// non-blocking, so a FIFO put at p after any earlier check cannot hang
// the call; the check on the open file is the one that counts. verb says
// what the caller does with regular files ("read", "written").
func (s *Sandbox) openRegular(p, shown, verb string) (*os.File, fs.FileInfo, error) {
	f, err := s.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fsError(shown, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fsError(shown, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(shown, st.Mode(), verb)
	}
	return f, st, nil
}

func notRegular(shown string, m fs.FileMode, verb string) error {
	return tools.InvalidArgs("%s is a %s, not a regular file; only regular files can be %s", quote(shown), kind(m), verb)
}

func (s *Sandbox) read(_ context.Context, in ReadInput) (ReadOutput, error) {
	if err := checkLength("path", in.Path, MaxPathLength); err != nil {
		return ReadOutput{}, err
	}
	exit, err := s.enter()
	if err != nil {
		return ReadOutput{}, err
	}
	defer exit()
	p, err := clean(in.Path)
	if err != nil {
		return ReadOutput{}, err
	}
	st, err := s.root.Stat(p) // follows symlinks, but only within the root
	if err != nil {
		return ReadOutput{}, fsError(in.Path, err)
	}
	if !st.Mode().IsRegular() {
		return ReadOutput{}, notRegular(in.Path, st.Mode(), "read")
	}
	// Checked again once open: a file swapped for a FIFO between the two
	// calls still cannot hang the read.
	f, st, err := s.openRegular(p, in.Path, "read")
	if err != nil {
		return ReadOutput{}, err
	}
	defer f.Close()
	head := make([]byte, min(binarySniff, st.Size()))
	n, _ := io.ReadFull(f, head)
	if isBinary(head[:n]) {
		return ReadOutput{}, tools.InvalidArgs("%s looks binary (a NUL byte or invalid UTF-8 in its first %d bytes); only text files are returned", quote(in.Path), binarySniff)
	}
	if in.Offset > st.Size() {
		return ReadOutput{}, tools.InvalidArgs("offset %d is past the end of %s (%d bytes)", in.Offset, quote(in.Path), st.Size())
	}
	limit := s.cfg.MaxReadBytes
	if in.Limit > 0 && in.Limit < limit {
		limit = in.Limit
	}
	if in.Limit == 0 && in.Offset == 0 && st.Size() > limit {
		return ReadOutput{}, tools.InvalidArgs("%s is %d bytes, more than the %d a read returns: read it in parts with offset and limit", quote(in.Path), st.Size(), limit)
	}
	buf := make([]byte, min(limit, st.Size()-in.Offset))
	n, err = f.ReadAt(buf, in.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return ReadOutput{}, fsError(in.Path, err)
	}
	buf = buf[:n]
	// Do not cut a UTF-8 sequence in two at the end: drop the last
	// character's first bytes when the rest of it is past the limit.
	if in.Offset+int64(len(buf)) < st.Size() {
		buf = buf[:len(buf)-cutRune(buf)]
	}
	return ReadOutput{Path: p, Content: string(buf), Size: st.Size(), Offset: in.Offset, Bytes: len(buf),
		Truncated: in.Offset+int64(len(buf)) < st.Size()}, nil
}

// cutRune returns how many bytes at the end of b are the start of a UTF-8
// sequence that b does not hold whole (0 when b ends on a character
// boundary, or with bytes that are invalid however b goes on).
func cutRune(b []byte) int {
	for i := len(b) - 1; i >= max(0, len(b)-utf8.UTFMax); i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
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

// write replaces or appends to a file. Writes to one file are serialised
// (see writeLocks): an append reads the old content and renames the new
// over it, so two at once would lose one.
func (s *Sandbox) write(ctx context.Context, in WriteInput) (WriteOutput, error) {
	if err := checkLength("path", in.Path, MaxPathLength); err != nil {
		return WriteOutput{}, err
	}
	if err := checkLength("content", in.Content, MaxContentLength); err != nil {
		return WriteOutput{}, err
	}
	if int64(len(in.Content)) > s.cfg.MaxWriteBytes {
		return WriteOutput{}, tools.InvalidArgs("the content is %d bytes; the limit is %d", len(in.Content), s.cfg.MaxWriteBytes)
	}
	exit, err := s.enter()
	if err != nil {
		return WriteOutput{}, err
	}
	defer exit()
	p, err := clean(in.Path)
	if err != nil {
		return WriteOutput{}, err
	}
	if p == "." {
		return WriteOutput{}, tools.InvalidArgs("give a file name, not the root folder")
	}
	unlock, err := s.locks.lock(ctx, p, in.Path)
	if err != nil {
		return WriteOutput{}, err
	}
	defer unlock()
	mode := fs.FileMode(0o644)
	var old []byte
	created := true
	st, err := s.root.Lstat(p)
	switch {
	case err == nil:
		if !st.Mode().IsRegular() {
			return WriteOutput{}, notRegular(in.Path, st.Mode(), "written")
		}
		created = false
		mode = st.Mode().Perm()
		if mode&0o200 == 0 {
			// Read-only: refused, as an editor or a shell redirection
			// refuses it; the rename below would replace it regardless.
			return WriteOutput{}, tools.Failed("%s is read-only (mode %v); it was not written", quote(in.Path), mode)
		}
		if in.Append {
			if old, err = s.readForAppend(p, in.Path, st, int64(len(in.Content))); err != nil {
				return WriteOutput{}, err
			}
		}
	case errors.Is(err, fs.ErrNotExist):
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
	if err := s.atomicWrite(p, data, mode, !created); err != nil {
		return WriteOutput{}, fsError(in.Path, err)
	}
	return WriteOutput{Path: p, Size: int64(len(data)), Created: created}, nil
}

// readForAppend returns the content of p, which Lstat found to be the
// regular file st, for an append of more bytes. It opens p non-blocking and
// checks the open file is still st, so a FIFO or a symlink put at p since
// the Lstat is refused instead of hanging the call or being followed.
func (s *Sandbox) readForAppend(p, shown string, st fs.FileInfo, more int64) ([]byte, error) {
	f, fst, err := s.openRegular(p, shown, "written")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !os.SameFile(st, fst) {
		return nil, tools.Failed("%s was replaced while it was being appended to; try again", quote(shown))
	}
	if fst.Size()+more > s.cfg.MaxWriteBytes {
		return nil, tools.InvalidArgs("%s would be %d bytes; the limit is %d", quote(shown), fst.Size()+more, s.cfg.MaxWriteBytes)
	}
	// One byte over the cap, so that a file grown since the Fstat is
	// caught by the caller's size check rather than read whole.
	old, err := io.ReadAll(io.LimitReader(f, s.cfg.MaxWriteBytes-more+1))
	if err != nil {
		return nil, fsError(shown, err)
	}
	return old, nil
}

// atomicWrite writes data to a temporary file beside p, syncs it, and
// renames it over p. The temporary file is created with mode less the
// umask; keep sets it to mode exactly, for a file that replaces one of
// that mode.
func (s *Sandbox) atomicWrite(p string, data []byte, mode fs.FileMode, keep bool) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(p), "."+tmpPrefix(path.Base(p))+".tmp-"+hex.EncodeToString(rnd[:]))
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
	if keep {
		if err := f.Chmod(mode); err != nil { // the umask may have narrowed it
			return err
		}
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

// maxTmpPrefix is the most bytes of a file's name that the name of its
// temporary file repeats, so that the temporary name (18 bytes longer) is
// within NAME_MAX (255) whenever the file's own name is.
const maxTmpPrefix = 64

// tmpPrefix returns name cut to at most maxTmpPrefix bytes, on a character
// boundary.
func tmpPrefix(name string) string {
	if len(name) <= maxTmpPrefix {
		return name
	}
	n := maxTmpPrefix
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

func (s *Sandbox) list(ctx context.Context, in ListInput) (ListOutput, error) {
	if err := checkLength("path", in.Path, MaxPathLength); err != nil {
		return ListOutput{}, err
	}
	if err := checkLength("glob", in.Glob, MaxGlobLength); err != nil {
		return ListOutput{}, err
	}
	if in.Glob != "" {
		if _, err := path.Match(in.Glob, ""); err != nil {
			return ListOutput{}, tools.InvalidArgs("bad glob %s: %v", quote(in.Glob), err)
		}
	}
	exit, err := s.enter()
	if err != nil {
		return ListOutput{}, err
	}
	defer exit()
	dir := in.Path
	if dir == "" {
		dir = "."
	}
	p, err := clean(dir)
	if err != nil {
		return ListOutput{}, err
	}
	st, err := s.root.Stat(p)
	if err != nil {
		return ListOutput{}, fsError(dir, err)
	}
	if !st.IsDir() {
		return ListOutput{}, tools.InvalidArgs("%s is a %s, not a folder", quote(dir), kind(st.Mode()))
	}
	d, err := s.root.Open(p)
	if err != nil {
		return ListOutput{}, fsError(dir, err)
	}
	defer d.Close()
	des, err := s.firstEntries(ctx, d, in.Glob, dir)
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{Path: p, Entries: []Entry{}}
	for _, de := range des {
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

// listBatch is how many entries file_list reads from a folder at a time.
const listBatch = 1024

// firstEntries returns the entries of d whose names match glob (all when it
// is empty), sorted by name and cut to MaxListEntries+1, so that the caller
// can tell there are more; its errors name shown. It reads d in batches and
// looks at ctx before each, so a huge folder costs memory in proportion to
// the cap, not to the folder, and the call ends when its context does.
func (s *Sandbox) firstEntries(ctx context.Context, d *os.File, glob, shown string) ([]fs.DirEntry, error) {
	keep := s.cfg.MaxListEntries + 1
	byName := func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }
	var kept []fs.DirEntry
	for {
		if err := ctx.Err(); err != nil {
			kind := tools.KindCancelled
			if errors.Is(err, context.DeadlineExceeded) {
				kind = tools.KindTimeout
			}
			return nil, &tools.Error{Kind: kind, Message: "the listing was stopped: " + err.Error(), Err: err}
		}
		des, err := d.ReadDir(listBatch)
		for _, de := range des {
			if glob != "" {
				if ok, _ := path.Match(glob, de.Name()); !ok {
					continue
				}
			}
			kept = append(kept, de)
		}
		if len(kept) > 2*keep {
			slices.SortFunc(kept, byName)
			kept = kept[:keep]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fsError(shown, err)
		}
	}
	slices.SortFunc(kept, byName)
	return kept[:min(len(kept), keep)], nil
}
