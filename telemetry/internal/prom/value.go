package prom

import (
	"math"
	"sync/atomic"
)

// Counter is a series that only goes up. Its methods are lock-free and
// safe for concurrent use.
type Counter struct {
	// Whole increments add to n, others to the float in bits, as
	// client_golang's counter does: Inc stays a single atomic add, and
	// the value reads the same.
	n    atomic.Uint64
	bits atomic.Uint64
}

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Add adds v, which must not be negative (Add panics then, as
// client_golang's does).
func (c *Counter) Add(v float64) {
	if v < 0 {
		panic("prom: counter cannot decrease in value")
	}
	if n := uint64(v); float64(n) == v {
		c.n.Add(n)
		return
	}
	addFloat(&c.bits, v)
}

// Value returns the counter's value.
func (c *Counter) Value() float64 {
	return math.Float64frombits(c.bits.Load()) + float64(c.n.Load())
}

// Gauge is a series that goes up and down. Its methods are lock-free and
// safe for concurrent use.
type Gauge struct {
	bits atomic.Uint64
}

// Set sets the value to v.
func (g *Gauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }

// Add adds v (which may be negative).
func (g *Gauge) Add(v float64) { addFloat(&g.bits, v) }

// Inc adds one.
func (g *Gauge) Inc() { g.Add(1) }

// Dec subtracts one.
func (g *Gauge) Dec() { g.Add(-1) }

// Value returns the gauge's value.
func (g *Gauge) Value() float64 { return math.Float64frombits(g.bits.Load()) }

// addFloat adds v to the float64 whose bits are in p.
func addFloat(p *atomic.Uint64, v float64) {
	for {
		old := p.Load()
		if p.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}
