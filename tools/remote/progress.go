package remote

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
)

// ProgressInterval is the least time between two progress reports of one
// subprocess call: at most 5 a second. Reports that come faster are
// coalesced: the latest waits for its turn and replaces any older one
// still waiting, so the last report a program writes is always delivered
// (at its turn, or when the program ends), unless the call was cancelled
// or timed out.
const ProgressInterval = 200 * time.Millisecond

// progress is one progress report.
type progress struct {
	value, total float64
	message      string
}

// coalescer passes a call's progress reports to tools.ReportProgress, at
// most one per ProgressInterval. Its zero value is not usable: set ctx.
// After close it reports nothing.
type coalescer struct {
	ctx context.Context

	// mu is held while reporting, so reports go out in order.
	mu      sync.Mutex
	last    time.Time // when the last report went out; zero: none yet
	pending *progress // the latest report waiting for its turn
	timer   *time.Timer
	closed  bool
}

// add reports p now if its turn has come, or keeps it for later.
func (c *coalescer) add(p progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	now := time.Now()
	if c.pending == nil && (c.last.IsZero() || now.Sub(c.last) >= ProgressInterval) {
		c.send(p, now)
		return
	}
	c.pending = &p
	if c.timer == nil {
		c.timer = time.AfterFunc(ProgressInterval-now.Sub(c.last), c.fire)
	}
}

// fire sends the waiting report when its turn comes.
func (c *coalescer) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = nil
	if c.closed || c.pending == nil {
		return
	}
	c.send(*c.pending, time.Now())
	c.pending = nil
}

// close sends the waiting report, unless ctx has ended, and stops
// reporting. It may be called more than once.
func (c *coalescer) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if c.pending != nil && c.ctx.Err() == nil {
		c.send(*c.pending, time.Now())
	}
	c.pending = nil
}

func (c *coalescer) send(p progress, now time.Time) {
	c.last = now
	tools.ReportProgress(c.ctx, p.value, p.total, p.message)
}
