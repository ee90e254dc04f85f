package server

import (
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// reopenNonblocking opens the pipe fd reads anew, non-blocking, through
// /proc/self/fd: a description of the pipe's own, so O_NONBLOCK reaches no
// other holder of fd. It returns nil when that cannot be done.
func reopenNonblocking(fd int, name string) *os.File {
	nfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var a, b syscall.Stat_t
	if syscall.Fstat(fd, &a) != nil || syscall.Fstat(nfd, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		_ = syscall.Close(nfd) // not the same pipe: /proc is not what it seems
		return nil
	}
	f := os.NewFile(uintptr(nfd), name)
	if !polled(f) {
		_ = f.Close()
		return nil
	}
	return f
}

// watchHangup calls hung once nobody can read out any more, when out is a
// pipe (a client's stdout) whose reading end every reader has closed, so
// that a client that goes away ends the session at once, not at the next
// write, which a long call makes only when it ends. (A pipe's writing end
// polls POLLERR once it has no reader.) stop ends the watch and returns
// when it is over; when out is not a pipe there is nothing to watch.
func watchHangup(out io.Writer, hung func()) (stop func()) {
	none := func() {}
	f, ok := out.(*os.File)
	if !ok {
		return none
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return none
	}
	fd := -1
	_ = rc.Control(func(ofd uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(ofd), &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			return
		}
		// A descriptor of its own, which no one closes under the watch.
		fd, _ = unix.FcntlInt(ofd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if fd < 0 {
		return none
	}
	var wake [2]int
	if unix.Pipe2(wake[:], unix.O_CLOEXEC) != nil {
		_ = unix.Close(fd)
		return none
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer unix.Close(fd)
		for {
			p := []unix.PollFd{{Fd: int32(fd)}, {Fd: int32(wake[0]), Events: unix.POLLIN}}
			_, err := unix.Poll(p, -1)
			switch {
			case err == unix.EINTR:
			case err != nil || p[1].Revents != 0 || p[0].Revents&unix.POLLNVAL != 0:
				return
			case p[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
				hung()
				return
			}
		}
	}()
	return sync.OnceFunc(func() {
		_, _ = unix.Write(wake[1], []byte{0})
		<-done
		_ = unix.Close(wake[0])
		_ = unix.Close(wake[1])
	})
}
