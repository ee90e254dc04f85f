package prom_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-tools/mcp-tools/telemetry/internal/prom"
)

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header       { return d.h }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

// TestLongAcceptEncodingCostsNothing: /metrics answers without a token,
// so whoever reaches it chooses the Accept-Encoding header, up to the
// server's header limit (1 MB by default). Reading it must not allocate
// per entry: a list of every entry of a megabyte of "a," took 64 MB.
func TestLongAcceptEncodingCostsNothing(t *testing.T) {
	r := prom.NewRegistry()
	r.MustRegister(prom.NewGaugeVec("up", "Up."))
	h := prom.Handler(r, nil)
	allocs := func(ae string) float64 {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept-Encoding", ae)
		w := discardWriter{http.Header{}}
		h.ServeHTTP(w, req) // the registry learns the text's size
		return testing.AllocsPerRun(5, func() {
			clear(w.h)
			h.ServeHTTP(w, req)
		})
	}
	short := allocs("identity")
	long := allocs(strings.Repeat("a;q=0.5, ", 1<<20/9) + "identity")
	if long > short {
		t.Errorf("allocations: got %g for a 1 MB Accept-Encoding, want at most %g, as for a short one", long, short)
	}
}

// FuzzAcceptEncoding checks the choice of gzip or identity against
// promhttp's, for any pair of Accept-Encoding values.
func FuzzAcceptEncoding(f *testing.F) {
	for _, seed := range [][2]string{
		{"gzip", ""}, {"gzip;q=0", ""}, {"*;q=0.5, identity;q=0.5", ""}, {"identity;q=0.", "gzip;q=1."},
		{"gzip;q=0." + strings.Repeat("0", 70), ""}, {"gzip;q=0." + strings.Repeat("9", 70), "identity"},
		{"a,b;q=1,gzip", "*;q=0"}, {"gzip ; q=0.9 , identity ; q=0.8", "x-gzip"}, {"gzip;level=1", "gzip;q=1.5"},
	} {
		f.Add(seed[0], seed[1])
	}
	treg := prometheus.NewRegistry()
	treg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "up", Help: "Up."}))
	theirs := promhttp.HandlerFor(treg, promhttp.HandlerOpts{})
	mreg := prom.NewRegistry()
	mreg.MustRegister(prom.NewGaugeVec("up", "Up."))
	mine := prom.Handler(mreg, nil)
	f.Fuzz(func(t *testing.T, a, b string) {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header["Accept-Encoding"] = []string{a, b}
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		theirs.ServeHTTP(want, req)
		mine.ServeHTTP(got, req)
		if g, w := got.Header().Get("Content-Encoding"), want.Header().Get("Content-Encoding"); g != w {
			t.Errorf("Accept-Encoding %q, %q: got Content-Encoding %q, want %q", a, b, g, w)
		}
	})
}

// TestGzipSameAsPromhttp: the gzipped body is promhttp's, byte for byte,
// which holds only when the pooled compressor has promhttp's level (the
// default). BestSpeed, tried for a smaller compressor, writes other bytes
// and keeps more memory in the pool (1.2 MB a writer in Go 1.26, against
// 0.8 MB at the default level).
func TestGzipSameAsPromhttp(t *testing.T) {
	list := twins()
	fams := map[string]twin{}
	for _, f := range list {
		fams[f.name] = f
	}
	theirs, mine := twinRegistries(t, list)
	for _, o := range scenario() {
		apply(t, fams, o)
	}
	raw := func(h http.Handler) []byte {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if ce := rec.Header().Get("Content-Encoding"); ce != "gzip" {
			t.Fatalf("Content-Encoding: got %q, want gzip", ce)
		}
		return rec.Body.Bytes()
	}
	want := raw(theirs)
	for i := range 3 { // a new writer, then pooled ones
		if got := raw(mine); !bytes.Equal(got, want) {
			t.Fatalf("response %d: got %d gzipped bytes (header % x), want promhttp's %d (header % x)", i+1, len(got), got[:10], len(want), want[:10])
		}
	}
}
