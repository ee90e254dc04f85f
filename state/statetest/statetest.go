// Package statetest checks that a state.Store keeps the contract written
// on the interface, in the spirit of testing/slogtest: one function, Run,
// that any implementation calls from its own tests.
package statetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/state"
)

// deadline bounds every wait for something that must happen eventually
// (an expiry, a message). It is generous: the suite checks what happens,
// never how fast.
const deadline = 10 * time.Second

// Run checks the store that newStore returns against the contract of
// state.Store. Each subtest calls newStore with its own *testing.T, runs
// in parallel with the others and closes the store when it ends, so
// newStore must return a new store each time; stores may share a backend
// (one Redis), since every subtest uses keys and channels of its own.
//
// Timing is checked with short time-to-live values and polling bounded by
// a generous deadline; where a step must happen within a time to live, a
// run whose steps took too long says nothing and is retried, up to five
// times, so only a machine too slow for every try fails (and says so).
// A store with a per-operation timeout should be given a generous one
// here: the suite checks what a store does, not how fast.
func Run(t *testing.T, newStore func(t *testing.T) state.Store) {
	t.Helper()
	run := strconv.FormatUint(rand.Uint64(), 36)
	tests := []struct {
		name string
		fn   func(t *testing.T, s state.Store, k keys)
	}{
		{"GetSetDelete", testGetSetDelete},
		{"ValuesAreCopied", testValuesAreCopied},
		{"TTLExpires", testTTLExpires},
		{"SetReplacesTTL", testSetReplacesTTL},
		{"GetRefreshesTTL", testGetRefreshesTTL},
		{"LongestTTL", testLongestTTL},
		{"SetNXRace", testSetNXRace},
		{"SetNXAfterExpiry", testSetNXAfterExpiry},
		{"TakeRace", testTakeRace},
		{"TakeLimits", testTakeLimits},
		{"TakeRefreshesTTL", testTakeRefreshesTTL},
		{"TakeExpires", testTakeExpires},
		{"TakeOnNonInteger", testTakeOnNonInteger},
		{"Allow", testAllow},
		{"AllowTinyRate", testAllowTinyRate},
		{"PublishInOrder", testPublishInOrder},
		{"StopStopsDelivery", testStopStopsDelivery},
		{"StopWaitsForFn", testStopWaitsForFn},
		{"PublishFromFn", testPublishFromFn},
		{"CloseStopsSubscriptions", testCloseStopsSubscriptions},
		{"Ping", testPing},
		{"KeysAreIndependent", testKeysAreIndependent},
		{"CanceledContext", testCanceledContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: got %v, want nil", err)
				}
			})
			tt.fn(t, s, keys("statetest:"+run+":"+tt.name+":"))
		})
	}
}

// keys makes key and channel names unique to one subtest of one run.
type keys string

// of returns the name for what the test calls name.
func (k keys) of(name string) string { return string(k) + name }

// ctx returns a context for one call, bounded by deadline.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), deadline)
	t.Cleanup(cancel)
	return c
}

// mustGet returns the value at key and fails the test on any error.
func mustGet(t *testing.T, s state.Store, key string, refresh time.Duration) []byte {
	t.Helper()
	v, err := s.Get(ctx(t), key, refresh)
	if err != nil {
		t.Fatalf("Get(%q): got error %v, want a value", key, err)
	}
	return v
}

// mustSet stores value at key and fails the test on any error.
func mustSet(t *testing.T, s state.Store, key, value string, ttl time.Duration) {
	t.Helper()
	if err := s.Set(ctx(t), key, []byte(value), ttl); err != nil {
		t.Fatalf("Set(%q): got %v, want nil", key, err)
	}
}

// mustTake calls Take and fails the test on any error.
func mustTake(t *testing.T, s state.Store, key string, limit int64, ttl time.Duration) bool {
	t.Helper()
	ok, err := s.Take(ctx(t), key, limit, ttl)
	if err != nil {
		t.Fatalf("Take(%q): got error %v", key, err)
	}
	return ok
}

// wantNotFound fails the test unless Get(key) gives ErrNotFound.
func wantNotFound(t *testing.T, s state.Store, key string) {
	t.Helper()
	if v, err := s.Get(ctx(t), key, 0); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("Get(%q): got %q, %v, want ErrNotFound", key, v, err)
	}
}

// eventually polls cond until it holds, failing the test after deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not after %v", what, deadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// timed runs a scenario whose steps must fit in a time to live. The
// scenario returns an error when the store misbehaved and how long its
// timing-sensitive part took; a run that took longer than limit says
// nothing and is retried with a fresh attempt number.
func timed(t *testing.T, limit time.Duration, scenario func(attempt int) (took time.Duration, err error)) {
	t.Helper()
	const attempts = 5
	for i := range attempts {
		took, err := scenario(i)
		if took >= limit {
			t.Logf("attempt %d took %v, more than %v; retrying", i, took, limit)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%d attempts all took more than %v: the machine is too slow to check this", attempts, limit)
}
