package statetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/state"
)

func testGetSetDelete(t *testing.T, s state.Store, k keys) {
	a, b, never := k.of("a"), k.of("b"), k.of("never")
	wantNotFound(t, s, never)
	mustSet(t, s, a, "one", 0)
	if got := mustGet(t, s, a, 0); string(got) != "one" {
		t.Errorf("Get after Set: got %q, want %q", got, "one")
	}
	mustSet(t, s, a, "two", 0)
	if got := mustGet(t, s, a, 0); string(got) != "two" {
		t.Errorf("Get after second Set: got %q, want %q", got, "two")
	}
	mustSet(t, s, b, "", 0)
	if got := mustGet(t, s, b, 0); len(got) != 0 {
		t.Errorf("Get of an empty value: got %q, want empty", got)
	}
	if err := s.Delete(ctx(t), a, b, never); err != nil {
		t.Fatalf("Delete: got %v, want nil", err)
	}
	wantNotFound(t, s, a)
	wantNotFound(t, s, b)
	if err := s.Delete(ctx(t), never); err != nil {
		t.Errorf("Delete of a missing key: got %v, want nil", err)
	}
	if err := s.Delete(ctx(t)); err != nil {
		t.Errorf("Delete of no keys: got %v, want nil", err)
	}
}

func testValuesAreCopied(t *testing.T, s state.Store, k keys) {
	key := k.of("v")
	value := []byte("abc")
	if err := s.Set(ctx(t), key, value, 0); err != nil {
		t.Fatalf("Set: got %v, want nil", err)
	}
	value[0] = 'X'
	got := mustGet(t, s, key, 0)
	if string(got) != "abc" {
		t.Fatalf("Get after changing the slice given to Set: got %q, want %q", got, "abc")
	}
	got[0] = 'Y'
	if got := mustGet(t, s, key, 0); string(got) != "abc" {
		t.Errorf("Get after changing a slice Get returned: got %q, want %q", got, "abc")
	}
}

func testTTLExpires(t *testing.T, s state.Store, k keys) {
	const ttl = 100 * time.Millisecond
	key := k.of("ttl")
	start := time.Now()
	mustSet(t, s, key, "v", ttl)
	_, err := s.Get(ctx(t), key, 0)
	if errors.Is(err, state.ErrNotFound) && time.Since(start) < ttl {
		t.Fatalf("Get right after Set with ttl %v: got ErrNotFound after %v", ttl, time.Since(start))
	} else if err != nil && !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("Get: got %v", err)
	}
	eventually(t, "value set with ttl "+ttl.String()+" expires", func() bool {
		_, err := s.Get(ctx(t), key, 0)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("Get: got %v", err)
		}
		return err != nil
	})
}

func testSetReplacesTTL(t *testing.T, s state.Store, k keys) {
	key := k.of("v")
	mustSet(t, s, key, "short", 100*time.Millisecond)
	mustSet(t, s, key, "forever", 0)
	time.Sleep(300 * time.Millisecond)
	if got := mustGet(t, s, key, 0); string(got) != "forever" {
		t.Errorf("Get after Set without ttl replaced one with ttl: got %q, want %q", got, "forever")
	}
}

func testGetRefreshesTTL(t *testing.T, s state.Store, k keys) {
	// Set with ttl; before it runs out, Get with refresh; after the first
	// ttl has run out but not the refreshed one, the value is still there.
	const ttl = 500 * time.Millisecond
	timed(t, ttl, func(attempt int) (time.Duration, error) {
		key := k.of("v" + strconv.Itoa(attempt))
		setAt := time.Now()
		mustSet(t, s, key, "v", ttl)
		setDone := time.Now()
		time.Sleep(ttl * 3 / 5)
		refreshAt := time.Now()
		if _, err := s.Get(ctx(t), key, ttl); err != nil {
			if took := time.Since(setAt); took >= ttl {
				return took, nil
			}
			return 0, fmt.Errorf("Get with refresh %v, %v after Set with ttl %v: got %v, want the value", ttl, time.Since(setAt), ttl, err)
		}
		// Past the first ttl, within the refreshed one.
		time.Sleep(ttl*6/5 - time.Since(setDone))
		_, err := s.Get(ctx(t), key, 0)
		took := time.Since(refreshAt)
		if err != nil {
			return took, fmt.Errorf("Get %v after Set with ttl %v and %v after Get with refresh %v: got %v, want the value",
				time.Since(setAt), ttl, took, ttl, err)
		}
		return took, nil
	})
}

func testLongestTTL(t *testing.T, s state.Store, k keys) {
	// The largest Duration, a common way to say "forever", is a time to
	// live like any other: a value refreshed with it, or a counter taken
	// with it, outlives the short one it had.
	const short = 300 * time.Millisecond
	const forever = time.Duration(math.MaxInt64)
	var v, c string
	timed(t, short, func(attempt int) (time.Duration, error) {
		v, c = k.of("v"+strconv.Itoa(attempt)), k.of("c"+strconv.Itoa(attempt))
		start := time.Now()
		mustSet(t, s, v, "v", short)
		mustSet(t, s, c, "0", short)
		if _, err := s.Get(ctx(t), v, forever); err != nil {
			return time.Since(start), fmt.Errorf("Get with refresh %v: got %v, want the value", forever, err)
		}
		if !mustTake(t, s, c, 10, forever) {
			return time.Since(start), fmt.Errorf("Take with ttl %v on a counter at 0: got false, want true", forever)
		}
		return time.Since(start), nil
	})
	time.Sleep(2 * short)
	if got := string(mustGet(t, s, v, 0)); got != "v" {
		t.Errorf("Get after Get with refresh %v: got %q, want %q", forever, got, "v")
	}
	if got := string(mustGet(t, s, c, 0)); got != "1" {
		t.Errorf("Get after Take with ttl %v: got %q, want %q", forever, got, "1")
	}
}

func testSetNXRace(t *testing.T, s state.Store, k keys) {
	const n = 32
	key := k.of("once")
	var wins sync.WaitGroup
	won := make(chan int, n)
	failed := make(chan error, n)
	for i := range n {
		wins.Go(func() {
			ok, err := s.SetNX(ctx(t), key, []byte(strconv.Itoa(i)), 0)
			if err != nil {
				failed <- err
			}
			if ok {
				won <- i
			}
		})
	}
	wins.Wait()
	close(won)
	close(failed)
	for err := range failed {
		t.Errorf("SetNX: got error %v", err)
	}
	var winners []int
	for i := range won {
		winners = append(winners, i)
	}
	if len(winners) != 1 {
		t.Fatalf("SetNX by %d goroutines: got %d winners %v, want 1", n, len(winners), winners)
	}
	if got, want := string(mustGet(t, s, key, 0)), strconv.Itoa(winners[0]); got != want {
		t.Errorf("Get after SetNX race: got %q, want the winner's %q", got, want)
	}
	if ok, err := s.SetNX(ctx(t), key, []byte("late"), 0); ok || err != nil {
		t.Errorf("SetNX on a set key: got %v, %v, want false, nil", ok, err)
	}
}

func testSetNXAfterExpiry(t *testing.T, s state.Store, k keys) {
	key := k.of("v")
	if ok, err := s.SetNX(ctx(t), key, []byte("first"), 100*time.Millisecond); !ok || err != nil {
		t.Fatalf("SetNX on a fresh key: got %v, %v, want true, nil", ok, err)
	}
	eventually(t, "SetNX succeeds once the first value expired", func() bool {
		ok, err := s.SetNX(ctx(t), key, []byte("second"), 0)
		if err != nil {
			t.Fatalf("SetNX: got %v", err)
		}
		return ok
	})
	if got := mustGet(t, s, key, 0); string(got) != "second" {
		t.Errorf("Get after SetNX on an expired key: got %q, want %q", got, "second")
	}
}

func testPing(t *testing.T, s state.Store, k keys) {
	if err := s.Ping(ctx(t)); err != nil {
		t.Errorf("Ping: got %v, want nil", err)
	}
}

func testKeysAreIndependent(t *testing.T, s state.Store, k keys) {
	a, b := k.of("a"), k.of("b")
	mustSet(t, s, a, "A", 0)
	mustSet(t, s, b, "B", 0)
	if err := s.Delete(ctx(t), a); err != nil {
		t.Fatalf("Delete: got %v, want nil", err)
	}
	if got := mustGet(t, s, b, 0); string(got) != "B" {
		t.Errorf("Get of a key next to a deleted one: got %q, want %q", got, "B")
	}
	ca, cb := k.of("count-a"), k.of("count-b")
	for range 2 {
		mustTake(t, s, ca, 2, 0)
	}
	if !mustTake(t, s, cb, 2, 0) {
		t.Errorf("Take on a fresh counter next to a full one: got false, want true")
	}
	// At one event per 100s with no burst, the second Allow is refused.
	if wait, err := s.Allow(ctx(t), k.of("rate-a"), 0.01, 1); wait != 0 || err != nil {
		t.Fatalf("first Allow: got %v, %v, want 0, nil", wait, err)
	}
	if wait, err := s.Allow(ctx(t), k.of("rate-a"), 0.01, 1); wait <= 0 || err != nil {
		t.Fatalf("second Allow at 0.01/s: got %v, %v, want a positive wait", wait, err)
	}
	if wait, err := s.Allow(ctx(t), k.of("rate-b"), 0.01, 1); wait != 0 || err != nil {
		t.Errorf("Allow on a fresh key next to an exhausted one: got %v, %v, want 0, nil", wait, err)
	}
}

func testCanceledContext(t *testing.T, s state.Store, k keys) {
	c, cancel := context.WithCancel(t.Context())
	cancel()
	key := k.of("v")
	calls := []struct {
		name string
		call func() error
	}{
		{"Get", func() error { _, err := s.Get(c, key, 0); return err }},
		{"Set", func() error { return s.Set(c, key, []byte("v"), 0) }},
		{"SetNX", func() error { _, err := s.SetNX(c, key, []byte("v"), 0); return err }},
		{"Delete", func() error { return s.Delete(c, key) }},
		{"Take", func() error { _, err := s.Take(c, key, 1, 0); return err }},
		{"Allow", func() error { _, err := s.Allow(c, key, 1, 1); return err }},
		{"Publish", func() error { return s.Publish(c, k.of("ch"), []byte("v")) }},
		{"Ping", func() error { return s.Ping(c) }},
	}
	for _, call := range calls {
		if err := call.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: got %v, want context.Canceled", call.name, err)
		}
	}
	wantNotFound(t, s, key)
}
