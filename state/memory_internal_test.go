package state

import (
	"context"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// expired returns how many entries m holds that have expired.
func (m *Memory) expired() int {
	now, n := m.now(), 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for _, e := range sh.vals {
			if e.exp != 0 && e.exp <= now {
				n++
			}
		}
		for _, tat := range sh.rates {
			if tat <= now {
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

func TestMemorySweepsExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		m := NewMemory()
		const n = 10000
		for i := range n {
			if err := m.Set(ctx, fmt.Sprintf("old-%d", i), []byte("v"), time.Second); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Allow(ctx, fmt.Sprintf("rate-%d", i), 1000, 1); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Second)
		if got := m.expired(); got != 2*n {
			t.Fatalf("expired entries before new writes: got %d, want %d", got, 2*n)
		}
		// Write as many new keys as there are expired ones, never reading
		// the old ones: every shard grows past the size at which it sweeps
		// (twice what it held live at its last sweep), which drops them.
		for i := range 2 * n {
			if err := m.Set(ctx, fmt.Sprintf("new-%d", i), []byte("v"), 0); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := m.expired(), 0; got != want {
			t.Errorf("expired entries after %d new writes: got %d, want %d", 2*n, got, want)
		}
	})
}

func TestMemoryTTLExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		m := NewMemory()
		steps := []struct {
			name  string
			sleep time.Duration
			do    func() error
			found bool
		}{
			{"set with ttl 1s", 0, func() error { return m.Set(ctx, "k", []byte("v"), time.Second) }, true},
			{"at 999ms", 999 * time.Millisecond, nil, true},
			{"refresh to 1s at 999ms", 0, func() error { _, err := m.Get(ctx, "k", time.Second); return err }, true},
			{"at 1998ms", 999 * time.Millisecond, nil, true},
			{"at 1999ms", time.Millisecond, nil, false},
		}
		for _, step := range steps {
			time.Sleep(step.sleep)
			if step.do != nil {
				if err := step.do(); err != nil {
					t.Fatalf("%s: got %v, want nil", step.name, err)
				}
			}
			_, err := m.Get(ctx, "k", 0)
			if got := err == nil; got != step.found {
				t.Fatalf("%s: found: got %v (%v), want %v", step.name, got, err, step.found)
			}
		}
	})
}

func TestMemoryAllowExact(t *testing.T) {
	tests := []struct {
		name  string
		rate  float64
		burst int
		// sleeps before each call, and the waits the calls return.
		sleeps []time.Duration
		waits  []time.Duration
	}{
		{"burst 3 at 2/s", 2, 3,
			[]time.Duration{0, 0, 0, 0, 500 * time.Millisecond, 0},
			[]time.Duration{0, 0, 0, 500 * time.Millisecond, 0, 500 * time.Millisecond}},
		{"burst 0 counts as 1", 10, 0,
			[]time.Duration{0, 0, 50 * time.Millisecond, 50 * time.Millisecond},
			[]time.Duration{0, 100 * time.Millisecond, 50 * time.Millisecond, 0}},
		{"idle refills the burst, no more", 1, 2,
			[]time.Duration{0, 0, time.Hour, 0, 0, 0},
			[]time.Duration{0, 0, 0, 0, time.Second, time.Second}},
		{"infinite rate", math.Inf(1), 1,
			[]time.Duration{0, 0},
			[]time.Duration{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMemory()
				for i, sleep := range tt.sleeps {
					time.Sleep(sleep)
					got, err := m.Allow(context.Background(), "k", tt.rate, tt.burst)
					if err != nil || got != tt.waits[i] {
						t.Fatalf("call %d: got %v, %v, want %v, nil", i+1, got, err, tt.waits[i])
					}
				}
			})
		})
	}
}

func TestMemoryAllowBadRate(t *testing.T) {
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(-1)} {
		if _, err := NewMemory().Allow(context.Background(), "k", rate, 1); err == nil {
			t.Errorf("Allow with rate %v: got nil error, want one", rate)
		}
	}
}

func TestMemoryCounterAsValue(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	tests := []struct {
		name string
		do   func() error
		want string
	}{
		{"take twice", func() error {
			for range 2 {
				if _, err := m.Take(ctx, "k", 10, 0); err != nil {
					return err
				}
			}
			return nil
		}, "2"},
		{"set a number", func() error { return m.Set(ctx, "k", []byte("7"), 0) }, "7"},
		{"take on it", func() error { _, err := m.Take(ctx, "k", 10, 0); return err }, "8"},
	}
	for _, tt := range tests {
		if err := tt.do(); err != nil {
			t.Fatalf("%s: got %v, want nil", tt.name, err)
		}
		if got, err := m.Get(ctx, "k", 0); string(got) != tt.want || err != nil {
			t.Fatalf("%s: Get: got %q, %v, want %q, nil", tt.name, got, err, tt.want)
		}
	}
	if err := m.Set(ctx, "k", []byte("text"), 0); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.Take(ctx, "k", 10, 0); ok || err == nil {
		t.Errorf("Take on a text value: got %v, %v, want false and an error", ok, err)
	}
}

func TestMemorySubscriberQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		m := NewMemory()
		defer m.Close()
		release := make(chan struct{})
		got := 0
		stop := m.Subscribe("ch", func([]byte) {
			<-release
			got++
		})
		// The first message is taken by fn, which blocks; the next
		// memoryQueue fill the queue; the rest are dropped.
		for range 1 + memoryQueue + 10 {
			if err := m.Publish(ctx, "ch", []byte("m")); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		close(release)
		synctest.Wait()
		stop()
		if want := 1 + memoryQueue; got != want {
			t.Errorf("messages delivered: got %d, want %d", got, want)
		}
	})
}

func TestMemoryClosed(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	if err := m.Close(); err != nil {
		t.Fatalf("Close: got %v, want nil", err)
	}
	called := false
	stop := m.Subscribe("ch", func([]byte) { called = true })
	if err := m.Publish(ctx, "ch", []byte("m")); err != nil {
		t.Fatalf("Publish after Close: got %v, want nil", err)
	}
	stop()
	if called {
		t.Error("fn of a subscription made after Close was called")
	}
	if err := m.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Errorf("Set after Close: got %v, want nil", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: got %v, want nil", err)
	}
}
