package server

import (
	"os"
	"strconv"
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
