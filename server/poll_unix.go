//go:build unix

package server

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pollable returns in as a file the Go runtime's network poller waits on,
// when in is a blocking pipe or socket (os.Stdin as a client starts the
// server), and a function that undoes it. A read from a blocking file
// holds a thread in the read system call, and every message then costs a
// hand-off between threads; a pollable file parks only the goroutine, and
// the call a message starts runs on the thread that read it. Anything
// else (a terminal, a regular file, a reader that is not a file, a file
// the runtime already polls) is returned unchanged.
//
// O_NONBLOCK belongs to the open file description, which the process
// that made the pipe does not read from; restore clears it again when the
// session is over. A stdin that is also the process's stdout or stderr
// (one socket both ways) is left blocking.
func pollable(in io.Reader) (io.Reader, func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in, func() {}
	}
	var dup *os.File
	_ = rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(fd), &st) != nil {
			return
		}
		if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
			return
		}
		if nonblocking(int(fd)) {
			return // the runtime polls it already, or someone else chose this mode
		}
		if sharesInode(st, 1) || sharesInode(st, 2) {
			// One socket for both directions (inetd): the mode would
			// reach the blocking writes to stdout and stderr, which
			// would then fail when the socket is full.
			return
		}
		nfd, err := syscall.Dup(int(fd))
		if err != nil {
			return
		}
		syscall.CloseOnExec(nfd)
		if syscall.SetNonblock(nfd, true) != nil {
			_ = syscall.Close(nfd)
			return
		}
		dup = os.NewFile(uintptr(nfd), f.Name()) // pollable: it is non-blocking
	})
	if dup == nil {
		return in, func() {}
	}
	return dup, func() {
		_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), false) })
		_ = dup.Close()
	}
}

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
