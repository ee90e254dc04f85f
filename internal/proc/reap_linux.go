package proc

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mustReap reports whether orphans are reparented to this process.
func mustReap() bool {
	return os.Getpid() == 1 || isSubreaper()
}

func isSubreaper() bool {
	// The kernel writes the answer to *v; a heap value does not move.
	v := new(int32)
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(v)), 0, 0, 0)
	runtime.KeepAlive(v)
	return err == nil && *v != 0
}

func startReaper(ctx context.Context, cfg ReaperConfig) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer signal.Stop(sigs)
		tick := time.NewTicker(cfg.Rescan)
		defer tick.Stop()
		for {
			if n, err := reap(); err != nil {
				cfg.Logger.Warn("reaper cannot list child processes", "err", err)
			} else if n > 0 {
				cfg.Logger.Debug("reaped orphaned processes", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-sigs:
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}

// reap waits for every zombie child Start is not waiting for, and says
// how many it reaped.
func reap() (int, error) {
	gate.Lock()
	defer gate.Unlock()
	pids, err := zombieChildren(os.Getpid())
	n := 0
	for _, pid := range pids {
		if ours(pid) {
			continue
		}
		var ws syscall.WaitStatus
		if got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid {
			n++
		}
	}
	return n, err
}

// zombieChildren lists the children of process self that have exited and
// not been waited for. It reads /proc/self/task/*/children when the kernel
// has it, and otherwise walks /proc.
func zombieChildren(self int) ([]int, error) {
	kids, err := children()
	if err != nil {
		kids, err = walkChildren(self)
		if err != nil {
			return nil, err
		}
	}
	var zombies []int
	for _, pid := range kids {
		if _, state, ok := stat(pid); ok && state == 'Z' {
			zombies = append(zombies, pid)
		}
	}
	return zombies, nil
}

// children reads every thread's children file.
func children() ([]int, error) {
	files, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil || len(files) == 0 {
		return nil, os.ErrNotExist
	}
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

// walkChildren reads every /proc/PID/stat for a parent of self.
func walkChildren(self int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := stat(pid); ok && ppid == self {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// stat reads a process's parent and state from /proc/PID/stat.
func stat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}
