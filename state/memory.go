package state

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"time"
)

// shardCount is the number of independently locked parts of a Memory
// store; a power of two.
const shardCount = 32

// minSweep is the number of entries a shard holds before it first looks
// for expired ones.
const minSweep = 64

// Memory is a Store for one process: values, counters and rate limiters
// in maps, and a message bus between goroutines. It needs nothing
// installed and never fails, except with the error of a context that is
// done. Create one with NewMemory.
//
// Expired entries are dropped when they are read, and a shard whose entry
// count has doubled since it last looked drops every expired entry it
// holds, so keys that are never read again do not pile up.
//
// Get on a counter made by Take returns its decimal value, as Redis does;
// Take on a value that is not a decimal integer fails.
//
// Each subscriber has its own goroutine and a queue of up to 256
// messages; a message that finds the queue full is dropped for that
// subscriber (delivery is at most once anyway).
// Close stops every subscription; the other methods keep working.
type Memory struct {
	start  time.Time
	seed   maphash.Seed
	shards [shardCount]shard
	bus    bus
}

var _ Store = (*Memory)(nil)

// shard is one independently locked part of a Memory store.
type shard struct {
	mu sync.Mutex
	// vals holds values and counters.
	vals map[string]*entry
	// rates holds each rate limiter's theoretical arrival time, in
	// nanoseconds since the store's start.
	rates map[string]int64
	// sweepAt is the entry count at which the shard next drops expired
	// entries.
	sweepAt int
}

// entry is a value or, when counter is set, a counter.
type entry struct {
	val     []byte
	n       int64
	counter bool
	// exp is when the entry expires, in nanoseconds since the store's
	// start; zero means never.
	exp int64
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	m := &Memory{start: time.Now(), seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].vals = map[string]*entry{}
		m.shards[i].rates = map[string]int64{}
		m.shards[i].sweepAt = minSweep
	}
	m.bus.subs = map[string]map[*subscriber]struct{}{}
	return m
}

// Get returns the value at key, or ErrNotFound; a positive refresh sets
// the key's time to live.
func (m *Memory) Get(ctx context.Context, key string, refresh time.Duration) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := m.now()
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.live(key, now)
	if e == nil {
		return nil, ErrNotFound
	}
	if refresh > 0 {
		e.exp = expiry(now, refresh)
	}
	if e.counter {
		return strconv.AppendInt(nil, e.n, 10), nil
	}
	return bytes.Clone(e.val), nil
}

// Set stores a copy of value at key for ttl.
func (m *Memory) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := m.now()
	e := &entry{val: bytes.Clone(value), exp: expiry(now, ttl)}
	if e.val == nil {
		e.val = []byte{}
	}
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.vals[key]; ok {
		sh.vals[key] = e
		return nil
	}
	sh.insert(key, e, now)
	return nil
}

// SetNX stores a copy of value at key for ttl unless key holds a value
// that has not expired.
func (m *Memory) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := m.now()
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.live(key, now) != nil {
		return false, nil
	}
	e := &entry{val: bytes.Clone(value), exp: expiry(now, ttl)}
	if e.val == nil {
		e.val = []byte{}
	}
	sh.insert(key, e, now)
	return true, nil
}

// Delete removes keys.
func (m *Memory) Delete(ctx context.Context, keys ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, key := range keys {
		sh := m.shard(key)
		sh.mu.Lock()
		delete(sh.vals, key)
		sh.mu.Unlock()
	}
	return nil
}

// Take adds one to the counter at key unless it holds limit or more.
func (m *Memory) Take(ctx context.Context, key string, limit int64, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := m.now()
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.live(key, now)
	switch {
	case e == nil:
		if limit <= 0 {
			return false, nil
		}
		e = &entry{counter: true}
		sh.insert(key, e, now)
	case !e.counter:
		n, err := strconv.ParseInt(string(e.val), 10, 64)
		if err != nil {
			return false, fmt.Errorf("state: take %q: value is not an integer", key)
		}
		*e = entry{n: n, counter: true, exp: e.exp}
	}
	if e.n >= limit {
		return false, nil
	}
	e.n++
	if ttl > 0 {
		e.exp = expiry(now, ttl)
	}
	return true, nil
}

// Ping returns nil: a Memory store is always there (or the context's
// error).
func (m *Memory) Ping(ctx context.Context) error {
	return ctx.Err()
}

// Close stops every subscription and waits for their goroutines. The other
// methods keep working.
func (m *Memory) Close() error {
	m.bus.close()
	return nil
}

// now returns the time since the store's start, in nanoseconds (from the
// monotonic clock).
func (m *Memory) now() int64 {
	return int64(time.Since(m.start))
}

// shard returns the shard that holds key.
func (m *Memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)&(shardCount-1)]
}

// expiry returns the expiry time of an entry written at now with ttl:
// zero (never) when ttl is not positive.
func expiry(now int64, ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	if int64(ttl) > 1<<63-1-now {
		return 1<<63 - 1
	}
	return now + int64(ttl)
}

// live returns the entry at key, or nil when there is none or it expired
// (and then drops it). The caller holds sh.mu.
func (sh *shard) live(key string, now int64) *entry {
	e := sh.vals[key]
	if e == nil {
		return nil
	}
	if e.exp != 0 && e.exp <= now {
		delete(sh.vals, key)
		return nil
	}
	return e
}

// insert adds a new entry, first dropping every expired entry of the
// shard if it has grown enough since it last did. The caller holds sh.mu.
func (sh *shard) insert(key string, e *entry, now int64) {
	sh.grow(now)
	sh.vals[key] = e
}

// grow is called before an entry is added to vals or rates: when the
// shard holds sweepAt entries it drops the expired ones and sets sweepAt
// to twice what is left, so the work is amortised over the insertions
// that doubled the shard. The caller holds sh.mu.
func (sh *shard) grow(now int64) {
	if len(sh.vals)+len(sh.rates) < sh.sweepAt {
		return
	}
	for k, e := range sh.vals {
		if e.exp != 0 && e.exp <= now {
			delete(sh.vals, k)
		}
	}
	for k, tat := range sh.rates {
		if tat <= now {
			delete(sh.rates, k)
		}
	}
	sh.sweepAt = max(2*(len(sh.vals)+len(sh.rates)), minSweep)
}
