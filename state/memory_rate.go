package state

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Allow is the generic cell rate algorithm: each event moves the key's
// theoretical arrival time (TAT) on by the emission interval 1/rate, and
// an event is allowed when that leaves the TAT no more than the tolerance
// (burst-1) intervals ahead of now. A burst below 1 counts as 1; a rate
// of +Inf allows everything; a rate that is not positive is an error.
func (m *Memory) Allow(ctx context.Context, key string, rate float64, burst int) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if !(rate > 0) {
		return 0, fmt.Errorf("state: allow %q: rate %v is not positive", key, rate)
	}
	if math.IsInf(rate, 1) {
		return 0, nil
	}
	interval := max(int64(float64(time.Second)/rate), 1)
	// window is burst intervals: the tolerance plus the event's own.
	window := int64(math.MaxInt64)
	if b := int64(max(burst, 1)); interval <= math.MaxInt64/b {
		window = interval * b
	}
	now := m.now()
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	tat, ok := sh.rates[key]
	tat = max(tat, now)
	next := satAdd(tat, interval)
	if allowAt := next - window; now < allowAt {
		return time.Duration(allowAt - now), nil
	}
	if !ok {
		sh.grow(now)
	}
	sh.rates[key] = next
	return 0, nil
}

// satAdd returns a+b for non-negative a and b, or MaxInt64 when that
// overflows.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
