//go:build unix && !aix

package server

import (
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pollable returns a reader of in that the Go runtime's network poller
// waits on, when in is a blocking pipe or socket (os.Stdin as a client
// starts the server), and a function that releases it when the session is
// over. A read from a blocking file holds a thread in the read system
// call, and every message then costs a hand-off between threads; a polled
// read parks only the goroutine, and the call a message starts runs on the
// thread that read it.
//
// The client's own file description keeps its mode: O_NONBLOCK belongs to
// the description, which other processes may share (a wrapper shell, a
// relaunch loop) and which outlives a kill -9. So a pipe is opened anew,
// non-blocking, through /proc/self/fd, which gives a description of its
// own (Linux only), and a socket is read with MSG_DONTWAIT while its
// description stays as it was, except for an instant at the start of the
// session (see newSocketReader). Anything else (a terminal, a regular
// file, a reader that is not a file, a file the runtime polls already, a
// pipe elsewhere than on Linux, a socket that is also stdout or stderr) is
// returned unchanged.
func pollable(in io.Reader) (io.Reader, func()) {
	none := func() {}
	f, ok := in.(*os.File)
	if !ok {
		return in, none
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in, none
	}
	var r io.Reader
	release := none
	_ = rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(fd), &st) != nil || polled(f) {
			return
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFIFO:
			if p := reopenNonblocking(int(fd), f.Name()); p != nil {
				r, release = p, func() { _ = p.Close() }
			}
		case syscall.S_IFSOCK:
			if sharesInode(st, 1) || sharesInode(st, 2) {
				// One socket both ways (inetd): newSocketReader's moment
				// of O_NONBLOCK would reach the writes to stdout.
				return
			}
			if s := newSocketReader(int(fd), f.Name()); s != nil {
				r, release = s, func() { _ = s.f.Close() }
			}
		}
	})
	if r == nil {
		return in, none
	}
	return r, release
}

// socketReader reads a blocking socket through the poller: each read is a
// recvfrom with MSG_DONTWAIT, and an empty socket parks the goroutine.
type socketReader struct {
	f  *os.File // a duplicate of the socket, registered with the poller
	rc syscall.RawConn
}

// newSocketReader returns a socketReader of the socket fd, or nil.
func newSocketReader(fd int, name string) *socketReader {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	// os.NewFile registers a descriptor with the poller only when it is
	// non-blocking: a blocking socket is made so for that instant (the
	// mode belongs to the description the client shares), and made
	// blocking again; one already non-blocking is left as it is.
	wasBlocking := !nonblocking(nfd)
	if wasBlocking && syscall.SetNonblock(nfd, true) != nil {
		_ = syscall.Close(nfd)
		return nil
	}
	f := os.NewFile(uintptr(nfd), name)
	if wasBlocking && syscall.SetNonblock(nfd, false) != nil {
		_ = f.Close() // the mode could not be put back: read as before
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil || !polled(f) {
		_ = f.Close()
		return nil
	}
	return &socketReader{f: f, rc: rc}
}

func (s *socketReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			n, _, rerr = unix.Recvfrom(int(fd), p, unix.MSG_DONTWAIT)
			if n > 0 {
				rerr = nil // an error here can only be about the sender's address
			}
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN && rerr != unix.EWOULDBLOCK
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, &os.PathError{Op: "read", Path: s.f.Name(), Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// polled reports whether the runtime's poller waits on f.
func polled(f *os.File) bool { return f.SetReadDeadline(time.Time{}) == nil }

// nonblocking reports whether fd is in non-blocking mode.
func nonblocking(fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_NONBLOCK != 0
}

// sharesInode reports whether fd is the file st describes.
func sharesInode(st syscall.Stat_t, fd int) bool {
	var o syscall.Stat_t
	return syscall.Fstat(fd, &o) == nil && o.Dev == st.Dev && o.Ino == st.Ino
}
