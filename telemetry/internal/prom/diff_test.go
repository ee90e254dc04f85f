package prom_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-tools/mcp-tools/telemetry/internal/prom"
)

// The differential tests register the same families in client_golang and
// in prom, make the same observations in both, and compare what their
// handlers serve, byte for byte.

// twin is one family in both libraries.
type twin struct {
	name   string
	kind   string // counter, gauge, histogram
	labels []string
	theirs prometheus.Collector
	mine   prom.Collector
}

// op is one recording, applied to both twins.
type op struct {
	fam    string
	values []string
	do     string // inc, add, set, dec, observe, touch (make the series only)
	v      float64
}

var buckets = []float64{1e-9, 0.001, 0.5, 1, 2.5, 1e6, 1e300}

func twins() []twin {
	mk := func(kind, name, help string, labels ...string) twin {
		t := twin{name: name, kind: kind, labels: labels}
		switch {
		case len(labels) == 0 && kind == "counter":
			// An unlabelled family of prom is client_golang's plain metric:
			// its one series is there from the start.
			t.theirs = prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
			t.mine = prom.NewCounterVec(name, help)
		case len(labels) == 0 && kind == "gauge":
			t.theirs = prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
			t.mine = prom.NewGaugeVec(name, help)
		case len(labels) == 0 && kind == "histogram":
			t.theirs = prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
			t.mine = prom.NewHistogramVec(name, help, buckets)
		}
		switch {
		case t.theirs != nil:
		case kind == "counter":
			t.theirs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
			t.mine = prom.NewCounterVec(name, help, labels...)
		case kind == "gauge":
			t.theirs = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
			t.mine = prom.NewGaugeVec(name, help, labels...)
		case kind == "histogram":
			t.theirs = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
			t.mine = prom.NewHistogramVec(name, help, buckets, labels...)
		}
		return t
	}
	return []twin{
		// Label names declared out of order: pairs are written sorted.
		mk("counter", "calls_total", "Calls, by tool and outcome.", "tool", "outcome"),
		mk("counter", "a_first_total", `Help with a back\slash, a "quote" and a`+"\nnewline.", "k"),
		mk("counter", "empty_total", "A family with no series is left out.", "k"),
		mk("counter", "no_help_total", ""),
		mk("gauge", "zz_gauge", "Gauges of odd values.", "v"),
		mk("gauge", "sessions_open", "An unlabelled gauge, written at zero."),
		mk("gauge", "untouched", "An unlabelled gauge never set."),
		mk("histogram", "dur_seconds", "Durations, by tool.", "tool", "z", "a"),
		mk("histogram", "wait_seconds", "An unlabelled histogram."),
		mk("histogram", "empty_seconds", "A histogram family with no series.", "tool"),
		mk("counter", "colon:name_total", "A name with a colon.", "b_", "_a"),
	}
}

func scenario() []op {
	odd := []string{"", "plain", `quo"te`, `back\slash`, "new\nline", "tab\there", "é ü 日本", "ok", "ok!", `ok"`, "ok ", "ok\x01", "\u2028"}
	var ops []op
	for i, s := range odd {
		ops = append(ops,
			op{fam: "calls_total", values: []string{s, "ok"}, do: "inc"},
			op{fam: "calls_total", values: []string{"t", s}, do: "add", v: float64(i)},
			op{fam: "a_first_total", values: []string{s}, do: "touch"},
			op{fam: "dur_seconds", values: []string{s, "z", s}, do: "observe", v: float64(i) / 7},
		)
	}
	vals := map[string]float64{
		"zero": 0, "negzero": math.Copysign(0, -1), "one": 1, "minus_one": -1, "nan": math.NaN(),
		"inf": math.Inf(1), "neginf": math.Inf(-1), "tiny": 5e-324, "small": 1.5e-300, "huge": math.MaxFloat64,
		"big_int": 123456789012345678, "third": 1.0 / 3, "e21": 1e21, "e20": 1e20, "e-5": 1e-5, "e-4": 1e-4,
		"two_pow_63": math.Pow(2, 63), "neg": -2.5e-7,
	}
	for name, v := range vals {
		ops = append(ops, op{fam: "zz_gauge", values: []string{name}, do: "set", v: v})
		if v >= 0 || math.IsNaN(v) {
			ops = append(ops, op{fam: "a_first_total", values: []string{name}, do: "add", v: v})
		}
		ops = append(ops,
			op{fam: "dur_seconds", values: []string{"odd", name, "x"}, do: "observe", v: v},
			op{fam: "wait_seconds", do: "observe", v: v},
		)
	}
	ops = append(ops,
		// Whole and fractional additions to the same counter.
		op{fam: "no_help_total", do: "add", v: 0.1}, op{fam: "no_help_total", do: "add", v: 0.2},
		op{fam: "no_help_total", do: "inc"}, op{fam: "no_help_total", do: "add", v: 1 << 53},
		op{fam: "a_first_total", values: []string{"mixed"}, do: "add", v: 1e300},
		op{fam: "a_first_total", values: []string{"mixed"}, do: "inc"},
		op{fam: "sessions_open", do: "inc"}, op{fam: "sessions_open", do: "inc"}, op{fam: "sessions_open", do: "dec"},
		op{fam: "zz_gauge", values: []string{"added"}, do: "add", v: 0.1},
		op{fam: "zz_gauge", values: []string{"added"}, do: "add", v: -0.3},
		op{fam: "dur_seconds", values: []string{"bounds", "1", "1"}, do: "observe", v: 1},
		op{fam: "dur_seconds", values: []string{"bounds", "1", "1"}, do: "observe", v: 1e-9},
		op{fam: "dur_seconds", values: []string{"bounds", "1", "1"}, do: "observe", v: 1e300},
		op{fam: "dur_seconds", values: []string{"bounds", "1", "1"}, do: "observe", v: math.Nextafter(1, 2)},
		op{fam: "dur_seconds", values: []string{"touched", "", ""}, do: "touch"},
		op{fam: "colon:name_total", values: []string{"b", "a"}, do: "inc"},
	)
	return ops
}

// apply makes o on both twins of its family.
func apply(t *testing.T, fams map[string]twin, o op) {
	t.Helper()
	f, ok := fams[o.fam]
	if !ok {
		t.Fatalf("no family %q", o.fam)
	}
	switch f.kind {
	case "counter":
		theirs, mine := theirSeries(f, o.values).(prometheus.Counter), f.mine.(*prom.CounterVec).With(o.values...)
		switch o.do {
		case "inc":
			theirs.Inc()
			mine.Inc()
		case "add":
			theirs.Add(o.v)
			mine.Add(o.v)
		}
	case "gauge":
		theirs, mine := theirSeries(f, o.values).(prometheus.Gauge), f.mine.(*prom.GaugeVec).With(o.values...)
		switch o.do {
		case "inc":
			theirs.Inc()
			mine.Inc()
		case "dec":
			theirs.Dec()
			mine.Dec()
		case "add":
			theirs.Add(o.v)
			mine.Add(o.v)
		case "set":
			theirs.Set(o.v)
			mine.Set(o.v)
		}
	case "histogram":
		theirs, mine := theirSeries(f, o.values).(prometheus.Observer), f.mine.(*prom.HistogramVec).With(o.values...)
		if o.do == "observe" {
			theirs.Observe(o.v)
			mine.Observe(o.v)
		}
	}
}

// theirSeries returns client_golang's series of f with values.
func theirSeries(f twin, values []string) any {
	switch c := f.theirs.(type) {
	case *prometheus.CounterVec:
		return c.WithLabelValues(values...)
	case *prometheus.GaugeVec:
		return c.WithLabelValues(values...)
	case *prometheus.HistogramVec:
		return c.WithLabelValues(values...)
	}
	return f.theirs
}

// twinRegistries registers fams in a registry of each library and returns
// their handlers, both with their error counter.
func twinRegistries(t *testing.T, fams []twin) (theirs, mine http.Handler) {
	t.Helper()
	treg := prometheus.NewRegistry()
	mreg := prom.NewRegistry()
	for _, f := range fams {
		if err := treg.Register(f.theirs); err != nil {
			t.Fatalf("client_golang: register %s: %v", f.name, err)
		}
		if err := mreg.Register(f.mine); err != nil {
			t.Fatalf("prom: register %s: %v", f.name, err)
		}
	}
	errs := prom.NewHandlerErrors()
	if err := mreg.Register(errs); err != nil {
		t.Fatal(err)
	}
	return promhttp.HandlerFor(treg, promhttp.HandlerOpts{Registry: treg}), prom.Handler(mreg, errs)
}

// get serves one request and returns the response and its decoded body.
func get(t *testing.T, h http.Handler, method string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, "/metrics", nil)
	req.Header = header
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body := rec.Body.Bytes()
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatalf("gunzip: %v", err)
		}
	}
	return resp, body
}

func TestTextSameAsClientGolang(t *testing.T) {
	list := twins()
	fams := map[string]twin{}
	for _, f := range list {
		fams[f.name] = f
	}
	theirs, mine := twinRegistries(t, list)
	for _, o := range scenario() {
		apply(t, fams, o)
	}
	_, want := get(t, theirs, http.MethodGet, http.Header{})
	_, got := get(t, mine, http.MethodGet, http.Header{})
	if !bytes.Equal(got, want) {
		t.Errorf("prom's text differs from client_golang's:\n%s", lineDiff(string(got), string(want)))
	}
	for _, absent := range []string{"empty_total", "empty_seconds"} {
		if bytes.Contains(got, []byte(absent)) {
			t.Errorf("got a family %s with no series, want it left out", absent)
		}
	}
	if !bytes.Contains(got, []byte("\nuntouched 0\n")) {
		t.Errorf("got no untouched 0, want an unlabelled family written at zero")
	}
}

func TestHeadersSameAsPromhttp(t *testing.T) {
	theirs, mine := twinRegistries(t, twins())
	for _, ae := range []string{
		"", "gzip", "identity", "gzip;q=0", "*", "*;q=0", "identity, gzip", "gzip, identity", "br",
		"identity;q=0.5, gzip", "gzip;q=0.5, identity;q=0.4", "deflate, gzip;q=1.0, *;q=0.5",
		"gzip;level=1", "x-gzip", "GZIP", "gzip ; q=0.9 , identity ; q=0.8", "gzip;q=1.5, identity",
		"identity;q=0, gzip;q=0", "compress;q=0.5, gzip;q=0.0001",
	} {
		t.Run(ae, func(t *testing.T) {
			h := http.Header{}
			if ae != "" {
				h.Set("Accept-Encoding", ae)
			}
			wantResp, want := get(t, theirs, http.MethodGet, h)
			gotResp, got := get(t, mine, http.MethodGet, h)
			for _, k := range []string{"Content-Type", "Content-Encoding"} {
				if g, w := gotResp.Header.Get(k), wantResp.Header.Get(k); g != w {
					t.Errorf("%s: got %q, want %q", k, g, w)
				}
			}
			if g, w := gotResp.Header.Values("Vary"), wantResp.Header.Values("Vary"); !equal(g, w) {
				t.Errorf("Vary: got %q, want %q", g, w)
			}
			if gotResp.StatusCode != wantResp.StatusCode {
				t.Errorf("status: got %d, want %d", gotResp.StatusCode, wantResp.StatusCode)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("body differs from client_golang's:\n%s", lineDiff(string(got), string(want)))
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineDiff shows the first lines where got and want differ.
func lineDiff(got, want string) string {
	g, w := bytes.Split([]byte(got), []byte("\n")), bytes.Split([]byte(want), []byte("\n"))
	var out bytes.Buffer
	shown := 0
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			out.WriteString("line " + itoa(i+1) + ":\n  got  " + string(gl) + "\n  want " + string(wl) + "\n")
			if shown++; shown == 10 {
				break
			}
		}
	}
	return out.String()
}

func itoa(i int) string { return string(appendInt(nil, i)) }

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}
