package prom_test

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcp-tools/mcp-tools/telemetry/internal/prom"
)

// parse parses text with expfmt's text parser, holding names to the
// classic character set.
func parse(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parsing the text: %v\n%s", err, text)
	}
	return fams
}

// shape is what the runtime test compares of a family: not its values.
type shape struct {
	typ  dto.MetricType
	help string
	n    int // series
}

func TestRuntimeFamiliesSameAsClientGolang(t *testing.T) {
	treg := prometheus.NewRegistry()
	treg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	theirs, err := treg.Gather()
	if err != nil {
		t.Fatalf("client_golang: gather: %v", err)
	}
	want := map[string]shape{}
	for _, f := range theirs {
		want[f.GetName()] = shape{f.GetType(), f.GetHelp(), len(f.GetMetric())}
	}

	mreg := prom.NewRegistry()
	mreg.MustRegister(prom.NewGoCollector(), prom.NewProcessCollector())
	var buf bytes.Buffer
	if err := mreg.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	got := map[string]shape{}
	for name, f := range parse(t, buf.Bytes()) {
		got[name] = shape{f.GetType(), f.GetHelp(), len(f.GetMetric())}
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: missing, want %v %q", name, w.typ, w.help)
		} else if g != w {
			t.Errorf("%s: got %v %q (%d series), want %v %q (%d series)", name, g.typ, g.help, g.n, w.typ, w.help, w.n)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: written, but client_golang does not write it", name)
		}
	}
	if runtime.GOOS == "linux" && len(want) < 30 {
		t.Errorf("client_golang wrote %d families, want at least 30 on Linux: is the comparison empty?", len(want))
	}
}

// TestRuntimeValues checks that the values are the process's, not
// placeholders.
func TestRuntimeValues(t *testing.T) {
	r := prom.NewRegistry()
	r.MustRegister(prom.NewGoCollector(), prom.NewProcessCollector())
	runtime.GC() // so that the GC summary has a pause
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	fams := parse(t, buf.Bytes())
	val := func(name string) float64 {
		t.Helper()
		f, ok := fams[name]
		if !ok {
			t.Fatalf("%s: missing", name)
		}
		m := f.GetMetric()[0]
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount())
		}
		return 0
	}
	now := float64(time.Now().Unix())
	checks := []struct {
		name     string
		min, max float64
	}{
		{"go_goroutines", 1, 1e6},
		{"go_threads", 1, 1e5},
		{"go_gc_duration_seconds", 1, 1e9},
		{"go_memstats_last_gc_time_seconds", now - 3600, now + 60},
		{"go_memstats_heap_alloc_bytes", 1, 1e12},
		{"go_memstats_mallocs_total", 1, 1e15},
		{"go_sched_gomaxprocs_threads", float64(runtime.GOMAXPROCS(0)), float64(runtime.GOMAXPROCS(0))},
		{"go_info", 1, 1},
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "windows" {
		checks = append(checks, []struct {
			name     string
			min, max float64
		}{
			{"process_start_time_seconds", now - 86400, now + 60},
			{"process_resident_memory_bytes", 1 << 20, 1 << 40},
			{"process_max_fds", 3, 1 << 63},
			{"process_cpu_seconds_total", 0, 1e6},
		}...)
	}
	if runtime.GOOS == "linux" { // Windows under Wine has 0 for both
		checks = append(checks, []struct {
			name     string
			min, max float64
		}{
			{"process_virtual_memory_bytes", 1 << 20, 1 << 50},
			{"process_open_fds", 3, 1 << 20},
		}...)
	}
	for _, c := range checks {
		if v := val(c.name); v < c.min || v > c.max {
			t.Errorf("%s: got %g, want in [%g, %g]", c.name, v, c.min, c.max)
		}
	}
	if v := fams["go_info"].GetMetric()[0].GetLabel()[0].GetValue(); v != runtime.Version() {
		t.Errorf("go_info version: got %q, want %q", v, runtime.Version())
	}
}

// TestProcessValuesSameAsClientGolang compares the process values that do
// not change while a test runs with client_golang's, on every system
// where client_golang writes them.
func TestProcessValuesSameAsClientGolang(t *testing.T) {
	treg := prometheus.NewRegistry()
	treg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	theirs, err := treg.Gather()
	if err != nil {
		t.Fatalf("client_golang: gather: %v", err)
	}
	mreg := prom.NewRegistry()
	mreg.MustRegister(prom.NewProcessCollector())
	var buf bytes.Buffer
	if err := mreg.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	mine := parse(t, buf.Bytes())
	stable := map[string]bool{"process_start_time_seconds": true, "process_max_fds": true, "process_virtual_memory_max_bytes": true}
	compared := 0
	for _, f := range theirs {
		if !stable[f.GetName()] {
			continue
		}
		want := f.GetMetric()[0].GetGauge().GetValue()
		m, ok := mine[f.GetName()]
		if !ok {
			t.Errorf("%s: missing, want %g", f.GetName(), want)
			continue
		}
		if got := m.GetMetric()[0].GetGauge().GetValue(); got != want {
			t.Errorf("%s: got %g, want %g", f.GetName(), got, want)
		}
		compared++
	}
	if (runtime.GOOS == "linux" || runtime.GOOS == "windows") && compared < 2 {
		t.Errorf("compared %d values, want at least 2 on %s: is the comparison empty?", compared, runtime.GOOS)
	}
}
