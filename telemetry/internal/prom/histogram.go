package prom

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Histogram is a series that counts observations in fixed buckets and
// keeps their count and sum. Observe is lock-free and safe for concurrent
// use; a snapshot taken while others observe is consistent.
//
// It works as client_golang's histogram does: observations go to one of
// two sets of counts (the hot one); a snapshot flips which set is hot,
// waits until the observations that started on the old set have finished,
// reads it (now quiet), and folds it into the new hot set.
type Histogram struct {
	upper []float64 // bucket upper bounds, increasing, no +Inf

	// started counts the observations begun, in the low 63 bits; the top
	// bit says which of counts is hot.
	started atomic.Uint64
	counts  [2]histogramCounts

	mu sync.Mutex // one snapshot at a time
}

// histogramCounts is one of a histogram's two sets of counts.
type histogramCounts struct {
	done    atomic.Uint64 // observations finished; written last
	sumBits atomic.Uint64
	buckets []atomic.Uint64 // per bucket (not cumulative), +Inf last
}

// histogramSnapshot is what a histogram holds at one moment.
type histogramSnapshot struct {
	count   uint64
	sum     float64
	buckets []uint64 // cumulative, one per upper bound (no +Inf)
}

// checkBuckets returns the upper bounds a histogram of buckets uses, or
// an error when they do not increase. A final +Inf is dropped (the +Inf
// bucket is always there), as client_golang does, after the check: a
// +Inf before it (as in 1, +Inf, +Inf) is an error, not a second +Inf
// bucket.
func checkBuckets(buckets []float64) ([]float64, error) {
	for i, b := range buckets {
		if math.IsNaN(b) {
			return nil, errors.New("prom: a bucket bound is NaN")
		}
		if i > 0 && b <= buckets[i-1] {
			return nil, fmt.Errorf("prom: histogram buckets must be in increasing order: %g >= %g", buckets[i-1], b)
		}
	}
	if n := len(buckets); n > 0 && math.IsInf(buckets[n-1], +1) {
		buckets = buckets[:n-1]
	}
	return append([]float64(nil), buckets...), nil
}

func newHistogram(upper []float64) *Histogram {
	h := &Histogram{upper: upper}
	for i := range h.counts {
		h.counts[i].buckets = make([]atomic.Uint64, len(upper)+1)
	}
	return h
}

// Observe records v: in the first bucket whose upper bound is at least v
// (NaN and +Inf only in +Inf), and in the count and the sum.
func (h *Histogram) Observe(v float64) {
	i := 0
	for i < len(h.upper) && !(v <= h.upper[i]) {
		i++
	}
	n := h.started.Add(1)
	c := &h.counts[n>>63]
	c.buckets[i].Add(1)
	addFloat(&c.sumBits, v)
	c.done.Add(1) // last: a snapshot waits for it
}

// snapshot returns the histogram's counts, consistent with one another.
func (h *Histogram) snapshot() histogramSnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.started.Add(1 << 63) // flip the hot set; the count stays
	count := n & (1<<63 - 1)
	hot, cold := &h.counts[n>>63], &h.counts[(^n)>>63]
	for cold.done.Load() != count {
		runtime.Gosched() // let the observations under way finish
	}
	s := histogramSnapshot{
		count:   count,
		sum:     math.Float64frombits(cold.sumBits.Load()),
		buckets: make([]uint64, len(h.upper)),
	}
	var cum uint64
	for i := range h.upper {
		cum += cold.buckets[i].Load()
		s.buckets[i] = cum
	}
	// Fold the cold set into the hot one, so that both hold everything
	// when the next snapshot flips them again.
	hot.done.Add(cold.done.Swap(0))
	addFloat(&hot.sumBits, math.Float64frombits(cold.sumBits.Swap(0)))
	for i := range cold.buckets {
		hot.buckets[i].Add(cold.buckets[i].Swap(0))
	}
	return s
}
