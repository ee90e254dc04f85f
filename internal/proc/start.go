package proc

import (
	"os/exec"
	"runtime"
	"sync"
)

var (
	// gate is held for reading from a fork until the child is on the
	// record, and for writing while the reaper looks for zombies: the
	// reaper never sees a child of ours that is not yet recorded.
	gate sync.RWMutex

	mu sync.Mutex
	// started counts the running children Start made, by pid (a count,
	// not a set, so that a pid reused before the old record is gone is
	// still recorded).
	started = map[int]int{}
)

// Start starts cmd and waits for it in the background; the returned
// channel gets cmd.Wait's result, once. The caller must not call cmd.Wait
// itself.
//
// On Linux the child gets SIGKILL when the server dies, even by SIGKILL
// (PR_SET_PDEATHSIG; set in cmd.SysProcAttr, which Start creates if nil).
// The kernel sends that signal when the thread that forked the child
// exits, not the process (Go issue 27505), and the Go runtime ends a
// thread whenever a goroutine exits while locked to it. So the fork
// happens on a goroutine locked to its OS thread, and that goroutine stays
// locked, waiting for the child, until the child has exited: no other
// goroutine can run on the thread, so nothing can end it early. The cost
// is one parked OS thread per running child. Only the direct child is
// covered: a grandchild that outlives it is reparented as usual (to a
// subreaper, or to PID 1, where Reaper finds it when the server is PID 1).
// On other systems Start is cmd.Start plus a background cmd.Wait.
//
// While the child runs it is on the record the reaper consults, so a
// reaper never takes its exit status.
func Start(cmd *exec.Cmd) (<-chan error, error) {
	setDeathSignal(cmd)
	begun := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		if lockThread {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		gate.RLock()
		err := cmd.Start()
		if err == nil {
			track(cmd.Process.Pid, 1)
		}
		gate.RUnlock()
		begun <- err
		if err != nil {
			return
		}
		err = cmd.Wait()
		track(cmd.Process.Pid, -1)
		waited <- err
	}()
	if err := <-begun; err != nil {
		return nil, err
	}
	return waited, nil
}

// track adds d to pid's count on the record.
func track(pid, d int) {
	mu.Lock()
	defer mu.Unlock()
	started[pid] += d
	if started[pid] <= 0 {
		delete(started, pid)
	}
}

// ours reports whether Start made pid and has not finished waiting for it.
func ours(pid int) bool {
	mu.Lock()
	defer mu.Unlock()
	return started[pid] > 0
}
