package server

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestProgressCoalescing: reports closer than the interval are held, the
// newest replacing the older; one goes out per interval; flush sends the
// held one at once and nothing is sent after it. On a fake clock.
func TestProgressCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sent []float64
		p := &progressSender{ctx: context.Background(), every: 250 * time.Millisecond, writesBefore: -1,
			notify: func(params map[string]any) {
				mu.Lock()
				defer mu.Unlock()
				sent = append(sent, params["progress"].(float64))
			}}
		got := func() []float64 {
			mu.Lock()
			defer mu.Unlock()
			return append([]float64(nil), sent...)
		}
		for i := 1; i <= 1000; i++ { // a flood, all at one instant
			p.report(float64(i), 1000, "")
		}
		if s := got(); len(s) != 1 || s[0] != 1 {
			t.Fatalf("at once: sent %v, want only the first report", s)
		}
		time.Sleep(250 * time.Millisecond)
		synctest.Wait()
		if s := got(); len(s) != 2 || s[1] != 1000 {
			t.Fatalf("after one interval: sent %v, want the newest held report (1000) too", s)
		}
		p.report(1001, 0, "")
		p.flush() // the call ends before the interval: its last report goes now
		p.report(1002, 0, "")
		time.Sleep(time.Second)
		synctest.Wait()
		if s := got(); len(s) != 3 || s[2] != 1001 {
			t.Errorf("after flush: sent %v, want 1001 once and nothing after", s)
		}
	})
}
