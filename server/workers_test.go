package server

import (
	"sync"
	"testing"
	"time"
)

// TestWorkersReuseAndBound: a job runs at once, on a waiting worker when
// there is one; no more than keep workers wait after a burst; closing
// stop ends them all.
func TestWorkersReuseAndBound(t *testing.T) {
	var w *workers
	waitIdle := func(want int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for w.idle.Load() != want {
			if time.Now().After(deadline) {
				t.Fatalf("idle workers = %d, want %d", w.idle.Load(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}

	// Sequential jobs: one worker serves them all (a new goroutine for
	// each would leave 20 waiting).
	w = &workers{jobs: make(chan func()), stop: make(chan struct{}), keep: 100}
	for range 20 {
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done
		waitIdle(1)
	}
	time.Sleep(20 * time.Millisecond)
	if n := w.idle.Load(); n != 1 {
		t.Fatalf("after 20 sequential jobs, %d workers wait; want 1", n)
	}
	close(w.stop)
	w.wg.Wait()

	// A burst of 6 jobs that run at the same time: all start at once (none
	// waits for another to end), and only keep of the workers stay.
	w = &workers{jobs: make(chan func()), stop: make(chan struct{}), keep: 2}
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(6)
	for range 6 {
		w.run(func() { started.Done(); <-release })
	}
	started.Wait() // would hang if a job waited for a free worker
	close(release)
	waitIdle(2)
	time.Sleep(20 * time.Millisecond)
	if n := w.idle.Load(); n != 2 {
		t.Fatalf("after the burst, %d workers wait; want 2", n)
	}

	// After stop, a job still runs, and every worker ends.
	close(w.stop)
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	w.wg.Wait()
}
