package prom_test

import (
	"bytes"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mcp-tools/mcp-tools/telemetry/internal/prom"
)

func TestRegisterRefuses(t *testing.T) {
	tests := []struct {
		name string
		c    func() prom.Collector
		want string
	}{
		{"a name already registered", func() prom.Collector { return prom.NewGaugeVec("taken", "h") }, "already registered"},
		{"a name of a runtime collector", func() prom.Collector { return prom.NewGaugeVec("go_goroutines", "h") }, "already registered"},
		{"a name starting with a digit", func() prom.Collector { return prom.NewCounterVec("1_total", "h") }, "invalid metric name"},
		{"a name with a dash", func() prom.Collector { return prom.NewCounterVec("a-b", "h") }, "invalid metric name"},
		{"an empty name", func() prom.Collector { return prom.NewCounterVec("", "h") }, "invalid metric name"},
		{"a reserved label name", func() prom.Collector { return prom.NewCounterVec("c", "h", "__x") }, "invalid label name"},
		{"a label name with a colon", func() prom.Collector { return prom.NewCounterVec("c", "h", "a:b") }, "invalid label name"},
		{"a label name twice", func() prom.Collector { return prom.NewGaugeVec("g", "h", "a", "b", "a") }, "given twice"},
		{"le on a histogram", func() prom.Collector { return prom.NewHistogramVec("h", "h", []float64{1}, "le") }, "invalid label name"},
		{"buckets not increasing", func() prom.Collector { return prom.NewHistogramVec("h", "h", []float64{1, 1}) }, "increasing order"},
		{"buckets decreasing", func() prom.Collector { return prom.NewHistogramVec("h", "h", []float64{2, 1}) }, "increasing order"},
		{"a NaN bucket", func() prom.Collector { return prom.NewHistogramVec("h", "h", []float64{math.NaN()}) }, "NaN"},
		// client_golang refuses these too: dropping the last +Inf first
		// would leave a second le="+Inf" bucket, a duplicate series.
		{"+Inf twice", func() prom.Collector { return prom.NewHistogramVec("h", "h", []float64{1, math.Inf(1), math.Inf(1)}) }, "increasing order"},
		{"+Inf before the last bound", func() prom.Collector { return prom.NewHistogramVec("h", "h", []float64{math.Inf(1), 2}) }, "increasing order"},
		{"the runtime collector twice", func() prom.Collector { return prom.NewGoCollector() }, "already registered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := prom.NewRegistry()
			r.MustRegister(prom.NewGaugeVec("taken", "h"), prom.NewGoCollector())
			err := r.Register(tt.c())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Register: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestHistogramBucketsMayEndInInf(t *testing.T) {
	for _, b := range [][]float64{{1, math.Inf(1)}, {math.Inf(1)}} {
		r := prom.NewRegistry()
		h := prom.NewHistogramVec("h", "Help.", b)
		r.MustRegister(h)
		h.With().Observe(5)
		text := string(r.AppendText(nil))
		if n := strings.Count(text, `le="+Inf"`); n != 1 {
			t.Errorf("buckets %v: got %d +Inf buckets, want 1:\n%s", b, n, text)
		}
	}
}

func TestWithPanics(t *testing.T) {
	c := prom.NewCounterVec("c", "h", "a", "b")
	tests := []struct {
		name   string
		values []string
	}{
		{"too few values", []string{"x"}},
		{"too many values", []string{"x", "y", "z"}},
		{"invalid UTF-8", []string{"x", "\xff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("With(%q): got no panic, want one", tt.values)
				}
			}()
			c.With(tt.values...)
		})
	}
}

func TestCounterAddNegativePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Add(-1): got no panic, want one")
		}
	}()
	prom.NewCounterVec("c", "h").With().Add(-1)
}

// failingWriter is a ResponseWriter whose body cannot be written.
type failingWriter struct{ *httptest.ResponseRecorder }

var errBroken = errors.New("broken pipe")

func (failingWriter) Write([]byte) (int, error) { return 0, errBroken }

func TestHandler(t *testing.T) {
	r := prom.NewRegistry()
	errs := prom.NewHandlerErrors()
	r.MustRegister(errs, prom.NewGaugeVec("up", "Up."))
	h := prom.Handler(r, errs)

	t.Run("POST", func(t *testing.T) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", nil))
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("got %d, Allow %q; want 405, Allow \"GET, HEAD\"", rec.Code, rec.Header().Get("Allow"))
		}
	})
	t.Run("HEAD", func(t *testing.T) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/metrics", nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != prom.ContentType || rec.Body.Len() != 0 {
			t.Errorf("got %d, %q, %d bytes; want 200, %q, no body", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len(), prom.ContentType)
		}
	})
	for _, ae := range []string{"", "gzip"} {
		t.Run("a write error, Accept-Encoding "+ae, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept-Encoding", ae)
			before := encodingErrors(t, r)
			h.ServeHTTP(failingWriter{httptest.NewRecorder()}, req)
			if got := encodingErrors(t, r); got != before+1 {
				t.Errorf("encoding errors: got %g, want %g", got, before+1)
			}
		})
	}
}

func encodingErrors(t *testing.T, r *prom.Registry) float64 {
	t.Helper()
	for _, m := range parse(t, r.AppendText(nil))["promhttp_metric_handler_errors_total"].GetMetric() {
		if m.GetLabel()[0].GetValue() == "encoding" {
			return m.GetCounter().GetValue()
		}
	}
	t.Fatal("no promhttp_metric_handler_errors_total{cause=\"encoding\"}")
	return 0
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errBroken }

func TestWriteTextReportsTheWriteError(t *testing.T) {
	r := prom.NewRegistry()
	r.MustRegister(prom.NewGaugeVec("up", "Up."))
	if err := r.WriteText(errWriter{}); !errors.Is(err, errBroken) {
		t.Errorf("WriteText: got %v, want %v", err, errBroken)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil || buf.String() != "# HELP up Up.\n# TYPE up gauge\nup 0\n" {
		t.Errorf("WriteText: got %q, %v", buf.String(), err)
	}
}

// TestSuffixCollisionsAsClientGolang: a family named as a series of a
// histogram (name_bucket, name_sum, name_count) or of a summary
// (name_sum, name_count) writes a second series of that name, which a
// scraper refuses. client_golang's Gather fails on these pairs, whichever
// comes first; Register must refuse the second, and accept the pairs
// client_golang accepts.
func TestSuffixCollisionsAsClientGolang(t *testing.T) {
	type fam struct{ kind, name string }
	tests := []struct{ first, second fam }{
		{fam{"histogram", "h"}, fam{"counter", "h_count"}},
		{fam{"histogram", "h"}, fam{"gauge", "h_sum"}},
		{fam{"histogram", "h"}, fam{"counter", "h_bucket"}},
		{fam{"counter", "h_count"}, fam{"histogram", "h"}},
		{fam{"gauge", "h_bucket"}, fam{"histogram", "h"}},
		{fam{"histogram", "h"}, fam{"histogram", "h_bucket"}},
		{fam{"histogram", "h_sum"}, fam{"histogram", "h"}},
		{fam{"go", ""}, fam{"counter", "go_gc_duration_seconds_count"}},
		{fam{"go", ""}, fam{"gauge", "go_gc_duration_seconds_sum"}},
		{fam{"histogram", "go_gc_duration"}, fam{"go", ""}}, // no collision: _seconds is not a suffix
		// No collision: a summary has no buckets, a counter no suffixes.
		{fam{"go", ""}, fam{"gauge", "go_gc_duration_seconds_bucket"}},
		{fam{"counter", "c"}, fam{"counter", "c_count"}},
		{fam{"gauge", "g_sum"}, fam{"gauge", "g"}},
		{fam{"histogram", "h"}, fam{"counter", "h_total"}},
	}
	mine := func(f fam) prom.Collector {
		switch f.kind {
		case "counter":
			return prom.NewCounterVec(f.name, "h")
		case "gauge":
			return prom.NewGaugeVec(f.name, "h")
		case "histogram":
			return prom.NewHistogramVec(f.name, "h", []float64{1})
		}
		return prom.NewGoCollector()
	}
	theirs := func(f fam) prometheus.Collector {
		switch f.kind {
		case "counter":
			return prometheus.NewCounter(prometheus.CounterOpts{Name: f.name, Help: "h"})
		case "gauge":
			return prometheus.NewGauge(prometheus.GaugeOpts{Name: f.name, Help: "h"})
		case "histogram":
			return prometheus.NewHistogram(prometheus.HistogramOpts{Name: f.name, Help: "h", Buckets: []float64{1}})
		}
		return collectors.NewGoCollector()
	}
	for _, tt := range tests {
		t.Run(tt.first.name+","+tt.second.name, func(t *testing.T) {
			treg := prometheus.NewRegistry()
			treg.MustRegister(theirs(tt.first), theirs(tt.second))
			_, wantErr := treg.Gather()
			r := prom.NewRegistry()
			r.MustRegister(mine(tt.first))
			err := r.Register(mine(tt.second))
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("Register: got %v; client_golang's Gather: %v", err, wantErr)
			}
			if err == nil {
				parse(t, r.AppendText(nil)) // one series of each name
			}
		})
	}
}
