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
// An interval or a burst window longer than maxWindow (about 146 years)
// counts as maxWindow.
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
	// The interval is computed in floating point and clamped before the
	// conversion: a float64 too large for an int64 converts to a value
	// that depends on the platform (math.MinInt64 on amd64, which would
	// make the interval 1ns and lift the limit altogether).
	interval := int64(maxWindow)
	if f := float64(time.Second) / rate; f < maxWindow {
		interval = max(int64(f), 1)
	}
	// window is burst intervals: the tolerance plus the event's own,
	// capped like the interval so that next - window below stays
	// meaningful (with a window of MaxInt64, a saturated next would allow
	// everything).
	window := int64(maxWindow)
	if b := int64(max(burst, 1)); interval <= maxWindow/b {
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

// maxWindow is the longest emission interval and burst window Allow
// works with, 2^62 ns (about 146 years): far beyond any process's life,
// and small enough that when next saturates at MaxInt64, next - window
// is still later than now and the event is refused.
const maxWindow = 1 << 62

// satAdd returns a+b for non-negative a and b, or MaxInt64 when that
// overflows.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
