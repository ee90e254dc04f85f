package prom_test

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-tools/mcp-tools/telemetry/internal/prom"
)

// TestConcurrentRecordingAndWriting records from many goroutines, making
// new series as it goes, while another writes the text over and over:
// every text must parse, every histogram snapshot must be consistent
// (each observation is 1, so the sum, the count, the +Inf bucket and the
// le="1" bucket are all equal), and no counter may go down between texts.
func TestConcurrentRecordingAndWriting(t *testing.T) {
	const workers, rounds = 8, 2000
	r := prom.NewRegistry()
	calls := prom.NewCounterVec("calls_total", "Calls.", "tool")
	dur := prom.NewHistogramVec("dur_seconds", "Durations.", []float64{0.5, 1, 2}, "tool")
	busy := prom.NewGaugeVec("busy", "Busy.", "tool")
	r.MustRegister(calls, dur, busy)

	var stop atomic.Bool
	var scrapes atomic.Int64
	var wg sync.WaitGroup
	last := map[string]float64{}
	wg.Go(func() {
		for first := true; first || !stop.Load(); first = false {
			var buf bytes.Buffer
			if err := r.WriteText(&buf); err != nil {
				t.Error(err)
				return
			}
			scrapes.Add(1)
			fams := parse(t, buf.Bytes())
			for _, m := range fams["dur_seconds"].GetMetric() {
				h := m.GetHistogram()
				n := h.GetSampleCount()
				b := h.GetBucket() // 0.5, 1, 2, +Inf
				if len(b) != 4 || b[0].GetCumulativeCount() != 0 || b[1].GetCumulativeCount() != n ||
					b[2].GetCumulativeCount() != n || b[3].GetCumulativeCount() != n || h.GetSampleSum() != float64(n) {
					t.Errorf("inconsistent histogram %v: count %d, sum %g, buckets %v", m.GetLabel(), n, h.GetSampleSum(), b)
					return
				}
			}
			for _, m := range fams["calls_total"].GetMetric() {
				k, v := m.GetLabel()[0].GetValue(), m.GetCounter().GetValue()
				if v < last[k] {
					t.Errorf("calls_total{tool=%q} went down: %g after %g", k, v, last[k])
				}
				last[k] = v
			}
		}
	})
	var rec sync.WaitGroup
	for w := range workers {
		rec.Go(func() {
			for i := range rounds {
				tool := "t" + strconv.Itoa((w+i)%5)
				if i%100 == 0 {
					tool = "new" + strconv.Itoa(w*rounds+i) // series made while writing
				}
				g := busy.With(tool)
				g.Inc()
				calls.With(tool).Inc()
				dur.With(tool).Observe(1)
				g.Dec()
			}
		})
	}
	rec.Wait()
	stop.Store(true)
	wg.Wait()

	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	fams := parse(t, buf.Bytes())
	var total float64
	var count uint64
	for _, m := range fams["calls_total"].GetMetric() {
		total += m.GetCounter().GetValue()
	}
	for _, m := range fams["dur_seconds"].GetMetric() {
		count += m.GetHistogram().GetSampleCount()
	}
	for _, m := range fams["busy"].GetMetric() {
		if v := m.GetGauge().GetValue(); v != 0 {
			t.Errorf("busy %v: got %g, want 0", m.GetLabel(), v)
		}
	}
	if want := float64(workers * rounds); total != want || float64(count) != want {
		t.Errorf("got %g calls and %d observations, want %g of each", total, count, want)
	}
	t.Logf("%d texts written while recording", scrapes.Load())
}
