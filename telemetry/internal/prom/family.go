package prom

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// vec is a family's series, one per combination of label values, made on
// first use and kept for good.
type vec[S any] struct {
	name, help string
	labels     []string // as declared
	order      []int    // indices of labels, sorted by label name
	sortedName []string // label names in that order
	newS       func() *S

	mu     sync.RWMutex
	byKey  map[string]*series[S]
	sorted []*series[S] // by label values, taken in label-name order
}

// series is one labelled series of a family.
type series[S any] struct {
	values []string // in label-name order
	labels string   // rendered: name="value",..., in label-name order
	s      *S
}

func newVec[S any](name, help string, labels []string, mk func() *S) *vec[S] {
	v := &vec[S]{name: name, help: help, labels: slices.Clone(labels), newS: mk, byKey: map[string]*series[S]{}}
	v.order = make([]int, len(labels))
	for i := range v.order {
		v.order[i] = i
	}
	slices.SortStableFunc(v.order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	for _, i := range v.order {
		v.sortedName = append(v.sortedName, labels[i])
	}
	if len(labels) == 0 {
		v.with() // the one series of an unlabelled family is always there
	}
	return v
}

// check reports a name or label name the text format cannot carry
// unquoted, or a label name given twice or reserved by the type.
func (v *vec[S]) check(reserved string) error {
	if !validMetricName(v.name) {
		return fmt.Errorf("prom: invalid metric name %q", v.name)
	}
	for i, l := range v.sortedName {
		if !validLabelName(l) || l == reserved {
			return fmt.Errorf("prom: %s: invalid label name %q", v.name, l)
		}
		if i > 0 && v.sortedName[i-1] == l {
			return fmt.Errorf("prom: %s: label name %q given twice", v.name, l)
		}
	}
	return nil
}

// with returns the series of values (in declared label order), making it
// on first use. It panics when the number of values is wrong or a value
// is not valid UTF-8, as client_golang's WithLabelValues does. Finding an
// existing series allocates nothing for keys up to 128 bytes.
func (v *vec[S]) with(values ...string) *S {
	if len(values) != len(v.labels) {
		panic(fmt.Sprintf("prom: %s: got %d label values, want %d (%s)", v.name, len(values), len(v.labels), strings.Join(v.labels, ", ")))
	}
	var buf [128]byte
	key := buf[:0]
	for i, s := range values {
		if i > 0 {
			key = append(key, 0xff) // never in UTF-8: the key is unambiguous
		}
		key = append(key, s...)
	}
	v.mu.RLock()
	s := v.byKey[string(key)]
	v.mu.RUnlock()
	if s != nil {
		return s.s
	}
	return v.add(string(key), values)
}

// add makes the series of values unless another goroutine just did.
func (v *vec[S]) add(key string, values []string) *S {
	for _, s := range values {
		if !utf8.ValidString(s) {
			panic(fmt.Sprintf("prom: %s: label value %q is not valid UTF-8", v.name, s))
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s := v.byKey[key]; s != nil {
		return s.s
	}
	sorted := make([]string, len(values))
	for j, i := range v.order {
		sorted[j] = values[i]
	}
	s := &series[S]{values: sorted, labels: renderLabels(v.sortedName, sorted), s: v.newS()}
	v.byKey[key] = s
	at, _ := slices.BinarySearchFunc(v.sorted, sorted, func(x *series[S], t []string) int { return slices.Compare(x.values, t) })
	v.sorted = slices.Insert(v.sorted, at, s)
	return s.s
}

// each calls fn on every series, in label-value order.
func (v *vec[S]) each(fn func(labels string, s *S)) {
	v.mu.RLock()
	all := slices.Clone(v.sorted)
	v.mu.RUnlock()
	for _, s := range all {
		fn(s.labels, s.s)
	}
}

// CounterVec is a family of counters with fixed label names.
type CounterVec struct{ v *vec[Counter] }

// NewCounterVec returns a family of counters named name, with help text
// help and the label names labels (none: a single series, always
// written). Register checks the names.
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	return &CounterVec{newVec(name, help, labels, func() *Counter { return new(Counter) })}
}

// With returns the counter of the label values, in the order of the label
// names, making it (at zero) on first use. It panics when the number of
// values is wrong or a value is not valid UTF-8, as client_golang's
// WithLabelValues does; finding an existing series allocates nothing.
func (c *CounterVec) With(values ...string) *Counter { return c.v.with(values...) }

func (c *CounterVec) describe() ([]string, error) { return []string{c.v.name}, c.v.check("") }

func (c *CounterVec) collect(e *encoder) {
	e.family(c.v.name, c.v.help, typeCounter)
	c.v.each(func(labels string, s *Counter) { e.sample(c.v.name, "", labels, "", 0, s.Value()) })
}

// GaugeVec is a family of gauges with fixed label names.
type GaugeVec struct{ v *vec[Gauge] }

// NewGaugeVec returns a family of gauges named name, with help text help
// and the label names labels (none: a single series, always written).
func NewGaugeVec(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{newVec(name, help, labels, func() *Gauge { return new(Gauge) })}
}

// With returns the gauge of the label values, making it (at zero) on
// first use. It panics as CounterVec.With does.
func (g *GaugeVec) With(values ...string) *Gauge { return g.v.with(values...) }

func (g *GaugeVec) describe() ([]string, error) { return []string{g.v.name}, g.v.check("") }

func (g *GaugeVec) collect(e *encoder) {
	e.family(g.v.name, g.v.help, typeGauge)
	g.v.each(func(labels string, s *Gauge) { e.sample(g.v.name, "", labels, "", 0, s.Value()) })
}

// HistogramVec is a family of histograms with fixed label names and
// buckets.
type HistogramVec struct {
	v   *vec[Histogram]
	err error // from the buckets
}

// NewHistogramVec returns a family of histograms named name, with help
// text help, the bucket upper bounds buckets (increasing; a final +Inf is
// implied) and the label names labels. Register reports bad buckets.
func NewHistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	upper, err := checkBuckets(buckets)
	return &HistogramVec{v: newVec(name, help, labels, func() *Histogram { return newHistogram(upper) }), err: err}
}

// With returns the histogram of the label values, making it (empty) on
// first use. It panics as CounterVec.With does.
func (h *HistogramVec) With(values ...string) *Histogram { return h.v.with(values...) }

func (h *HistogramVec) describe() ([]string, error) {
	if h.err != nil {
		return nil, fmt.Errorf("%s: %w", h.v.name, h.err)
	}
	n := h.v.name
	return []string{n, n + "_bucket", n + "_sum", n + "_count"}, h.v.check("le")
}

func (h *HistogramVec) collect(e *encoder) {
	e.family(h.v.name, h.v.help, typeHistogram)
	h.v.each(func(labels string, s *Histogram) {
		snap := s.snapshot()
		for i, upper := range s.upper {
			e.sample(h.v.name, "_bucket", labels, "le", upper, float64(snap.buckets[i]))
		}
		e.sample(h.v.name, "_bucket", labels, "le", math.Inf(+1), float64(snap.count))
		e.sample(h.v.name, "_sum", labels, "", 0, snap.sum)
		e.sample(h.v.name, "_count", labels, "", 0, float64(snap.count))
	})
}
