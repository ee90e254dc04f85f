//go:build unix

package server

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPollable: a blocking pipe (stdin as a client starts the server) is
// read through a pollable duplicate while the session lasts and is
// blocking again afterwards; what is not a pipe is left alone.
func TestPollable(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(fds[0]), "stdin") // blocking: not polled
	w := os.NewFile(uintptr(fds[1]), "client")
	defer r.Close()
	defer w.Close()
	if nonblocking(fds[0]) {
		t.Fatal("a new pipe is already non-blocking")
	}

	got, restore := pollable(r)
	if got == io.Reader(r) {
		t.Fatal("a blocking pipe was returned unchanged")
	}
	if !nonblocking(fds[0]) {
		t.Fatal("the pipe is not non-blocking while served")
	}
	if _, err := w.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := got.Read(buf)
	if err != nil || string(buf[:n]) != "ping\n" {
		t.Fatalf("read %q, %v; want %q", buf[:n], err, "ping\n")
	}
	restore()
	if nonblocking(fds[0]) {
		t.Fatal("the pipe is still non-blocking after the session")
	}
	if _, err := w.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "after\n" {
		t.Fatalf("the original file reads %q, %v after restore", buf[:n], err)
	}

	// A regular file, a reader that is no file, and a pipe the runtime
	// already polls are returned as they are.
	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, in := range []io.Reader{f, pr, io.MultiReader()} {
		got, restore := pollable(in)
		restore()
		if got != in {
			t.Errorf("pollable(%T) returned another reader", in)
		}
	}
}

// TestPollableSocket: a socket stdin (as Node starts a child) is made
// pollable too; one end of a socket pair is not the other.
func TestPollableSocket(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	defer r.Close()
	defer w.Close()
	got, restore := pollable(r)
	defer restore()
	if got == io.Reader(r) || !nonblocking(fds[0]) {
		t.Fatal("a blocking socket was not made pollable")
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fds[0], &st); err != nil {
		t.Fatal(err)
	}
	if !sharesInode(st, fds[0]) || sharesInode(st, fds[1]) {
		t.Fatal("sharesInode does not tell the two ends apart")
	}
}
