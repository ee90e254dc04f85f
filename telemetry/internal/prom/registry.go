package prom

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Collector is something a Registry writes: a family (CounterVec,
// GaugeVec, HistogramVec) or a set of them (GoCollector,
// ProcessCollector).
type Collector interface {
	// describe returns the names of the families written and of the
	// series they write under other names (a histogram's name_bucket,
	// name_sum and name_count, a summary's name_sum and name_count), or
	// why they cannot be written.
	describe() ([]string, error)
	// collect writes the families to e.
	collect(e *encoder)
}

// Registry is a set of collectors written together. It is safe for
// concurrent use.
type Registry struct {
	mu         sync.Mutex
	collectors []Collector
	names      map[string]bool

	size atomic.Int64 // of the last text written: the next buffer's capacity
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{names: map[string]bool{}} }

// Register adds c, or returns an error when a name of c is invalid or is
// already the name of a family in r or of a series one writes (as "h_count"
// of a histogram "h"; and then adds nothing). client_golang's Gather
// fails on these pairs; a scraper refuses the second series of a name.
func (r *Registry) Register(c Collector) error {
	names, err := c.describe()
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, n := range names {
		if r.names[n] || seen[n] {
			return fmt.Errorf("prom: a family named %q, or writing series of that name, is already registered", n)
		}
		seen[n] = true
	}
	for n := range seen {
		r.names[n] = true
	}
	r.collectors = append(r.collectors, c)
	return nil
}

// MustRegister registers every c and panics on the first error.
func (r *Registry) MustRegister(cs ...Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// AppendText appends the text exposition of every family of r to dst, and
// returns the extended buffer.
func (r *Registry) AppendText(dst []byte) []byte {
	r.mu.Lock()
	cs := append([]Collector(nil), r.collectors...)
	r.mu.Unlock()
	e := &encoder{buf: make([]byte, 0, r.size.Load())}
	for _, c := range cs {
		c.collect(e)
	}
	e.end()
	r.size.Store(int64(len(e.buf)))
	if dst == nil {
		dst = make([]byte, 0, len(e.buf))
	}
	return e.sorted(dst)
}

// WriteText writes the text exposition of every family of r to w, in one
// Write.
func (r *Registry) WriteText(w io.Writer) error {
	b := r.AppendText(nil)
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("prom: writing the metrics: %w", err)
	}
	return nil
}
