//go:build unix && !aix

package server

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// readN reads n bytes from r.
func readN(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(buf)
}

// TestPollable: a blocking pipe or socket (stdin as a client starts the
// server) is read through the poller while the session lasts, and its
// own description is never made non-blocking, so no other holder of it,
// and nothing after a crash, ever sees the mode; the end of input reads as
// io.EOF. What is not a pipe or socket is left alone.
func TestPollable(t *testing.T) {
	pipe := func(t *testing.T) (r, w *os.File) {
		var fds [2]int
		if err := syscall.Pipe(fds[:]); err != nil {
			t.Fatal(err)
		}
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
		return os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	}
	socket := func(t *testing.T) (r, w *os.File) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
		return os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	}
	for _, tt := range []struct {
		name   string
		open   func(*testing.T) (r, w *os.File)
		polled bool
		// othersNonblocking: another holder of the description made it
		// non-blocking after the process started, so os.Stdin reads it
		// without the poller and would fail with EAGAIN.
		othersNonblocking bool
	}{
		{"pipe", pipe, runtime.GOOS == "linux", false},
		{"socket", socket, true, false},
		{"pipe made non-blocking by another holder", pipe, runtime.GOOS == "linux", true},
		{"socket made non-blocking by another holder", socket, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, w := tt.open(t)
			defer r.Close()
			defer w.Close()
			fd := int(r.Fd()) // a blocking file: Fd changes nothing
			if tt.othersNonblocking {
				if err := syscall.SetNonblock(fd, true); err != nil {
					t.Fatal(err)
				}
			}
			got, release := pollable(r)
			if polledNow := got != io.Reader(r); polledNow != tt.polled {
				t.Fatalf("read through the poller: %v, want %v", polledNow, tt.polled)
			}
			if nonblocking(fd) != tt.othersNonblocking {
				t.Fatalf("stdin's own description: non-blocking %v, want %v as it was", nonblocking(fd), tt.othersNonblocking)
			}
			if !tt.polled {
				return
			}
			if _, err := w.Write([]byte("ping\n")); err != nil {
				t.Fatal(err)
			}
			if s := readN(t, got, 5); s != "ping\n" {
				t.Fatalf("read %q, want %q", s, "ping\n")
			}
			if _, err := w.Write([]byte("last")); err != nil {
				t.Fatal(err)
			}
			w.Close()
			rest, err := io.ReadAll(got)
			if err != nil || string(rest) != "last" {
				t.Fatalf("after the client closed: read %q, %v; want %q and io.EOF", rest, err, "last")
			}
			release()
			if nonblocking(fd) != tt.othersNonblocking {
				t.Fatal("stdin's own mode changed by the session")
			}
		})
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
		got, release := pollable(in)
		release()
		if got != in {
			t.Errorf("pollable(%T) returned another reader", in)
		}
	}
}

// TestPollableReleaseWakesReader: releasing the session's reader while a
// read waits on it ends that read (mcp-go may leave one running after its
// loop returns); nothing is left blocked in the kernel.
func TestPollableReleaseWakesReader(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	defer r.Close()
	defer w.Close()
	got, release := pollable(r)
	done := make(chan error, 1)
	go func() {
		_, err := got.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the read wait
	release()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a read waiting on a released reader returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read waiting on a released reader still waits")
	}
}

// TestSharesInode: one end of a socket pair is not the other.
func TestSharesInode(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	var st syscall.Stat_t
	if err := syscall.Fstat(fds[0], &st); err != nil {
		t.Fatal(err)
	}
	if !sharesInode(st, fds[0]) || sharesInode(st, fds[1]) {
		t.Fatal("sharesInode does not tell the two ends apart")
	}
}
