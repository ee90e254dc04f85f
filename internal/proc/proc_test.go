package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test binary plays a parent process when this variable names a mode.
const helperEnv = "PROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	switch mode {
	case "parent":
		// Start a long child, then end many OS threads (a goroutine that
		// exits while locked ends its thread): had the fork happened on an
		// ordinary thread, one of them could be the child's parent thread,
		// and the kernel would kill the child now (Go issue 27505). The
		// fork happens off the main goroutine, as in a server: the runtime
		// never ends the main thread.
		cmd := exec.Command("sleep", "300")
		started := make(chan error)
		go func() {
			_, err := Start(cmd)
			started <- err
		}()
		if err := <-started; err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for range 10 {
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() { runtime.LockOSThread() })
			}
			wg.Wait()
			time.Sleep(10 * time.Millisecond) // let threads go idle, to be taken and ended next round
		}
		fmt.Println(cmd.Process.Pid)
		select {} // until killed
	case "subreaper", "subreaper-noreap":
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if mode == "subreaper" {
			stop, running := StartReaper(context.Background(), ReaperConfig{Rescan: 50 * time.Millisecond})
			defer stop()
			if !running {
				fmt.Fprintln(os.Stderr, "the reaper did not start in a subreaper")
				return 1
			}
		}
		return makeOrphans(mode == "subreaper")
	}
	return 2
}

// makeOrphans runs 40 children, 4 at a time, each leaving a grandchild
// that exits after it (an orphan for us to reap), and checks each child's
// own exit status reached Wait. It prints the zombies left when there are
// none (reaping) or some (not reaping), or at a deadline.
func makeOrphans(reaping bool) int {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	var mu sync.Mutex
	var failures []string
	for range 40 {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			waited, err := Start(exec.Command("sh", "-c", "sleep 0.02 & exit 3"))
			if err == nil {
				err = <-waited
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("got %v, want exit status 3", err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		fmt.Fprintln(os.Stderr, strings.Join(failures, "\n"))
		return 1
	}
	// The grandchildren sleep 20ms; give them (and the reaper) time.
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids, err := zombieChildren(os.Getpid())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if (len(pids) == 0) == reaping || time.Now().After(deadline) {
			n := 0
			for _, pid := range pids {
				if !ours(pid) {
					n++
				}
			}
			fmt.Println(n)
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// helperCmd re-executes the test binary as a helper.
func helperCmd(t *testing.T, mode string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.Stderr = os.Stderr
	return cmd
}

// gone reports whether pid has exited: no such process, or a zombie
// waiting for whoever inherited it.
func gone(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && strings.HasPrefix(string(b[i+1:]), " Z")
}

func TestStartChildDiesWithParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a parent-death signal exists only on Linux")
	}
	parent := helperCmd(t, "parent")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	var child int
	if _, err := fmt.Fscan(out, &child); err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	if gone(child) {
		t.Fatal("the child died while its parent lived: it was killed when a thread of the parent ended")
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for !gone(child) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still runs 10s after its parent was killed", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReaperAsSubreaper(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("subreapers exist only on Linux")
	}
	tests := []struct {
		name, mode string
		want       func(n int) bool
		desc       string
	}{
		// Without a reaper the test can see zombies: the count is real.
		{"no reaper leaves zombies", "subreaper-noreap", func(n int) bool { return n > 0 }, "some"},
		{"reaper leaves none", "subreaper", func(n int) bool { return n == 0 }, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := helperCmd(t, tt.mode).Output()
			if err != nil {
				t.Fatalf("helper: %v", err)
			}
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("helper printed %q", b)
			}
			if !tt.want(n) {
				t.Errorf("got %d zombies left, want %s", n, tt.desc)
			}
		})
	}
}

func TestStartReaperOnlyWhenNeeded(t *testing.T) {
	if os.Getpid() == 1 || isSubreaper() {
		t.Skip("the test process itself must reap")
	}
	stop, running := StartReaper(context.Background(), ReaperConfig{})
	defer stop()
	if running {
		t.Error("got a reaper in a process that is neither PID 1 nor a subreaper, want none")
	}
}

func TestStat(t *testing.T) {
	ppid, state, ok := stat(os.Getpid())
	if !ok || ppid != os.Getppid() || state == 'Z' {
		t.Errorf("got ppid %d state %q ok %v, want ppid %d and a live state", ppid, state, ok, os.Getppid())
	}
}
