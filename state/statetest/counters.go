package statetest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/state"
)

func testTakeRace(t *testing.T, s state.Store, k keys) {
	const limit, takers = 10, 50
	key := k.of("budget")
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range takers {
		wg.Go(func() {
			ok, err := s.Take(ctx(t), key, limit, time.Minute)
			if err != nil {
				t.Errorf("Take: got error %v", err)
			}
			if ok {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if granted != limit {
		t.Errorf("Take by %d goroutines with limit %d: got %d true, want %d", takers, limit, granted, limit)
	}
}

func testTakeLimits(t *testing.T, s state.Store, k keys) {
	tests := []struct {
		name  string
		limit int64
		want  int
	}{
		{"zero", 0, 0},
		{"negative", -1, 0},
		{"one", 1, 1},
		{"three", 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := k.of(tt.name)
			got := 0
			for range tt.want + 2 {
				if mustTake(t, s, key, tt.limit, 0) {
					got++
				}
			}
			if got != tt.want {
				t.Errorf("Take %d times with limit %d: got %d true, want %d", tt.want+2, tt.limit, got, tt.want)
			}
		})
	}
	// A higher limit on the same counter grants more.
	key := k.of("three")
	if !mustTake(t, s, key, 4, 0) {
		t.Errorf("Take with limit 4 on a counter at 3: got false, want true")
	}
}

func testTakeRefreshesTTL(t *testing.T, s state.Store, k keys) {
	// Take with ttl; before it runs out, Take again; after the first ttl
	// has run out but not the refreshed one, the counter still holds 2:
	// with limit 3 one more Take succeeds and the next fails.
	const ttl = 500 * time.Millisecond
	timed(t, ttl, func(attempt int) (time.Duration, error) {
		key := k.of("budget" + strconv.Itoa(attempt))
		firstAt := time.Now()
		if !mustTake(t, s, key, 3, ttl) {
			return 0, fmt.Errorf("first Take on a fresh key: got false, want true")
		}
		firstDone := time.Now()
		time.Sleep(ttl * 3 / 5)
		secondAt := time.Now()
		if !mustTake(t, s, key, 3, ttl) {
			if took := time.Since(firstAt); took >= ttl {
				return took, nil
			}
			return 0, fmt.Errorf("second Take with limit 3: got false, want true")
		}
		// Past the first ttl, within the refreshed one.
		time.Sleep(ttl*6/5 - time.Since(firstDone))
		third := mustTake(t, s, key, 3, ttl)
		fourth := mustTake(t, s, key, 3, ttl)
		took := time.Since(secondAt)
		if !third || fourth {
			return took, fmt.Errorf("third and fourth Take with limit 3, %v after the first (ttl %v) and %v after the second: got %v, %v, want true, false (the counter kept its count)",
				time.Since(firstAt), ttl, took, third, fourth)
		}
		return took, nil
	})
}

func testTakeExpires(t *testing.T, s state.Store, k keys) {
	key := k.of("budget")
	if !mustTake(t, s, key, 1, 100*time.Millisecond) {
		t.Fatal("Take on a fresh key: got false, want true")
	}
	eventually(t, "a counter with ttl expires and Take succeeds again", func() bool {
		return mustTake(t, s, key, 1, 100*time.Millisecond)
	})
}

func testAllow(t *testing.T, s state.Store, k keys) {
	// A burst of 3 at 1/s: 3 allowed, then a wait of at most 1s; after
	// it, one more allowed and the next refused again. The refusals hold
	// only if the calls come within a second, so a slow run is retried.
	const rate, burst = 1.0, 3
	allow := func(key string) time.Duration {
		t.Helper()
		wait, err := s.Allow(ctx(t), key, rate, burst)
		if err != nil {
			t.Fatalf("Allow(%q): got error %v", key, err)
		}
		return wait
	}
	timed(t, 900*time.Millisecond, func(attempt int) (time.Duration, error) {
		key := k.of("rate" + strconv.Itoa(attempt))
		start := time.Now()
		for i := range burst {
			if wait := allow(key); wait != 0 {
				return 0, fmt.Errorf("Allow #%d of a burst of %d: got wait %v, want 0", i+1, burst, wait)
			}
		}
		wait := allow(key)
		if took := time.Since(start); took >= 900*time.Millisecond {
			return took, nil
		}
		if wait <= 0 || wait > time.Second {
			return 0, fmt.Errorf("Allow after a burst of %d at %v/s: got wait %v, want in (0, 1s]", burst, rate, wait)
		}
		time.Sleep(wait + 20*time.Millisecond)
		again := time.Now()
		if w := allow(key); w != 0 {
			return 0, fmt.Errorf("Allow after waiting the %v it asked for: got wait %v, want 0", wait, w)
		}
		w := allow(key)
		took := time.Since(again)
		if w <= 0 {
			return took, fmt.Errorf("Allow right after the one the wait made room for: got wait %v, want > 0", w)
		}
		return took, nil
	})
}

func testAllowTinyRate(t *testing.T, s state.Store, k keys) {
	// A rate whose interval does not fit in a time.Duration (one event
	// in thousands of years) still allows one event and then refuses,
	// asking for a long wait; it never wraps round to no limit at all.
	// (With periods of decades, redis_rate's floating point may ask for a
	// wait of a microsecond or so before the first event: (now + P) - P
	// rounds to a little after now about half the time, afresh on each
	// ask, as the refused ask stores nothing. That is tolerated, as the
	// server's limiter asks again; 5 asks failed 1 run in 32.)
	for _, rate := range []float64{1e-9, 1e-12, 1e-300} {
		key := k.of("rate" + strconv.FormatFloat(rate, 'g', -1, 64))
		for i := 0; ; i++ {
			wait, err := s.Allow(ctx(t), key, rate, 1)
			if err != nil {
				t.Fatalf("first Allow at %v/s: got error %v", rate, err)
			}
			if wait == 0 {
				break
			}
			if wait > time.Millisecond || i == 49 {
				t.Fatalf("first Allow at %v/s on a fresh key, try %d: got wait %v, want 0", rate, i+1, wait)
			}
			time.Sleep(wait)
		}
		wait, err := s.Allow(ctx(t), key, rate, 1)
		if err != nil {
			t.Fatalf("second Allow at %v/s: got error %v", rate, err)
		}
		if wait < 24*time.Hour {
			t.Errorf("second Allow at %v/s with burst 1: got wait %v, want a day or more", rate, wait)
		}
	}
	// A burst whose window does not fit in a time.Duration either: at
	// most burst events, then a long wait. (A store may allow fewer when
	// the window is longer than it can count.)
	const rate, burst = 1e-9, 10
	key := k.of("burst")
	allowed := 0
	var wait time.Duration
	for range 2 * burst {
		var err error
		wait, err = s.Allow(ctx(t), key, rate, burst)
		if err != nil {
			t.Fatalf("Allow at %v/s with burst %d: got error %v", rate, burst, err)
		}
		if wait == 0 {
			allowed++
		}
	}
	if allowed < 1 || allowed > burst || wait < 24*time.Hour {
		t.Errorf("%d Allows at %v/s with burst %d: got %d allowed and a last wait of %v, want 1 to %d allowed and a wait of a day or more",
			2*burst, rate, burst, allowed, wait, burst)
	}
}

func testTakeOnNonInteger(t *testing.T, s state.Store, k keys) {
	// Take on a value that is not a decimal integer fails, whatever the
	// limit, with an error that does not say the store is unavailable
	// (trying again would not help), and leaves the value as it was.
	// (A store may take or refuse on what is not a plain decimal integer
	// but parses as one, such as "+5" or "007"; these are not checked.)
	for i, v := range []string{"abc", "", "1.5", " 5", "5 ", "0x10", "1e3", "inf", "nan"} {
		key := k.of("value" + strconv.Itoa(i))
		mustSet(t, s, key, v, 0)
		for _, limit := range []int64{1, 1 << 40} {
			ok, err := s.Take(ctx(t), key, limit, 0)
			if err == nil || errors.Is(err, state.ErrUnavailable) {
				t.Errorf("Take with limit %d on the value %q: got %v, %v, want an error that is not ErrUnavailable", limit, v, ok, err)
			}
		}
		if got := string(mustGet(t, s, key, 0)); got != v {
			t.Errorf("Get after Take on the value %q: got %q, want it unchanged", v, got)
		}
	}
}
