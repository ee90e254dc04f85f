package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/tools"
)

// parseText parses the text exposition format.
func parseText(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parsing the metrics: %v\n%s", err, text)
	}
	return fams
}

// exercise makes one series in each of tel's families.
func exercise(t *testing.T, tel *telemetry.Telemetry) {
	t.Helper()
	calc := tools.Wrap(tools.New(tools.Info{Name: "calc", Description: "d"}, func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{}, &tools.Error{Kind: tools.KindBudgetExhausted, Message: "spent"}
	}), tel.Middleware)
	calc.Call(context.Background(), json.RawMessage(`{}`))
	tel.SessionOpened()
	tel.Decided("calc", approval.Approve, time.Second)
	tel.Exited("calc", 1)
	tel.Responded("calc", 200)
}

// oldFamilies are the families as the telemetry package declared them in
// client_golang before it wrote its own, with one series each.
func oldFamilies(reg *prometheus.Registry) {
	b := telemetry.DefaultDurationBuckets
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{Name: telemetry.MetricCalls,
		Help: "Tool calls, by tool and outcome (ok, input_required, or the error kind)."}, []string{"tool", "outcome"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: telemetry.MetricCallDuration,
		Help: "Time from a call's arrival to its result, by tool, approval waits included.", Buckets: b}, []string{"tool"})
	inFlight := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: telemetry.MetricInFlight,
		Help: "Calls running now, by tool."}, []string{"tool"})
	sessions := prometheus.NewGauge(prometheus.GaugeOpts{Name: telemetry.MetricSessions,
		Help: "MCP sessions open now, every transport."})
	approvals := prometheus.NewCounterVec(prometheus.CounterOpts{Name: telemetry.MetricApprovals,
		Help: "Approval decisions, by tool and decision (approve, edit, reject)."}, []string{"tool", "decision"})
	approvalWait := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: telemetry.MetricApprovalWait,
		Help: "Time from asking for an approval to the decision, by tool.", Buckets: b}, []string{"tool"})
	budget := prometheus.NewCounterVec(prometheus.CounterOpts{Name: telemetry.MetricBudgetRefusals,
		Help: "Calls refused because the session's call budget was spent, by tool."}, []string{"tool"})
	exits := prometheus.NewCounterVec(prometheus.CounterOpts{Name: telemetry.MetricExits,
		Help: "Subprocess tool exits, by tool and exit code (0-255, or signal)."}, []string{"tool", "code"})
	httpResponses := prometheus.NewCounterVec(prometheus.CounterOpts{Name: telemetry.MetricHTTPResponses,
		Help: "HTTP tool responses, by tool and status code."}, []string{"tool", "code"})
	reg.MustRegister(calls, duration, inFlight, sessions, approvals, approvalWait, budget, exits, httpResponses)
	calls.WithLabelValues("calc", "ok")
	duration.WithLabelValues("calc")
	inFlight.WithLabelValues("calc")
	approvals.WithLabelValues("calc", "approve")
	approvalWait.WithLabelValues("calc")
	budget.WithLabelValues("calc")
	exits.WithLabelValues("calc", "1")
	httpResponses.WithLabelValues("calc", "200")
}

// familyShape is a family without its values: type, help, label names,
// histogram buckets (less +Inf).
func familyShape(f *dto.MetricFamily) string {
	var labels []string
	for _, l := range f.GetMetric()[0].GetLabel() {
		labels = append(labels, l.GetName())
	}
	var bounds []string
	if h := f.GetMetric()[0].GetHistogram(); h != nil {
		for _, b := range h.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), +1) { // the text has it, a gathered family not
				bounds = append(bounds, model.SampleValue(b.GetUpperBound()).String())
			}
		}
	}
	return f.GetType().String() + " " + f.GetHelp() + " {" + strings.Join(labels, ",") + "} [" + strings.Join(bounds, " ") + "]"
}

// TestFamiliesAsBefore: the families keep the names, types, help texts,
// label names and buckets they had when client_golang made them, and the
// go_*, process_* and promhttp_* families are those client_golang's
// default collectors and handler write.
func TestFamiliesAsBefore(t *testing.T) {
	old := prometheus.NewRegistry()
	oldFamilies(old)
	old.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	promhttp := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "promhttp_metric_handler_errors_total",
		Help: "Total number of internal errors encountered by the promhttp metric handler."}, []string{"cause"})
	promhttp.WithLabelValues("encoding")
	old.MustRegister(promhttp)
	gathered, err := old.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range gathered {
		want[f.GetName()] = familyShape(f)
	}

	tel, err := telemetry.New(telemetry.Config{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, tel)
	var buf bytes.Buffer
	if err := tel.WriteMetrics(&buf); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, f := range parseText(t, buf.Bytes()) {
		got[name] = familyShape(f)
	}
	for name, w := range want {
		if g := got[name]; g != w {
			t.Errorf("%s:\n got  %q\n want %q", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: new family, want none", name)
		}
	}
}

func TestOmitRuntimeMetrics(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{Getenv: noEnv, OmitRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, tel)
	var buf bytes.Buffer
	if err := tel.WriteMetrics(&buf); err != nil {
		t.Fatal(err)
	}
	fams := parseText(t, buf.Bytes())
	var names []string
	for name := range fams {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{telemetry.MetricApprovals, telemetry.MetricApprovalWait, telemetry.MetricCallDuration, telemetry.MetricCalls,
		telemetry.MetricInFlight, telemetry.MetricHTTPResponses, telemetry.MetricSessions, telemetry.MetricExits, telemetry.MetricBudgetRefusals}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("families: got %q, want %q", names, want)
	}

	// The handler serves the same text.
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if got := rec.Body.String(); got != buf.String() {
		t.Errorf("Handler and WriteMetrics differ:\n%s\n---\n%s", got, buf.String())
	}
}

// TestWriteMetricsBesideAnotherRegistry: an embedder that serves its own
// registry, with the Go and process collectors, and WriteMetrics after it
// gets one valid text.
func TestWriteMetricsBesideAnotherRegistry(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{Getenv: noEnv, OmitRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, tel)
	own := prometheus.NewRegistry()
	own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	fams, err := own.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&buf, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := tel.WriteMetrics(&buf); err != nil {
		t.Fatal(err)
	}
	all := parseText(t, buf.Bytes())
	if _, ok := all["go_goroutines"]; !ok {
		t.Error("go_goroutines missing")
	}
	if v, ok := value(all, telemetry.MetricBudgetRefusals, "tool", "calc"); !ok || v != 1 {
		t.Errorf("%s{tool=calc}: got %v (%v), want 1", telemetry.MetricBudgetRefusals, v, ok)
	}
}

func TestWriteMetricsError(t *testing.T) {
	var nilTel *telemetry.Telemetry
	var buf bytes.Buffer
	if err := nilTel.WriteMetrics(&buf); err != nil || buf.Len() != 0 {
		t.Errorf("nil Telemetry: got %q, %v; want nothing, nil", buf.String(), err)
	}
	tel, err := telemetry.New(telemetry.Config{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if err := tel.WriteMetrics(brokenWriter{}); err == nil || !strings.Contains(err.Error(), io.ErrClosedPipe.Error()) {
		t.Errorf("WriteMetrics to a broken writer: got %v, want %v wrapped", err, io.ErrClosedPipe)
	}
}

type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestDurationBuckets(t *testing.T) {
	tests := []struct {
		name    string
		buckets []float64
		want    []float64 // nil: New fails
	}{
		{"nil", nil, telemetry.DefaultDurationBuckets},
		{"empty", []float64{}, telemetry.DefaultDurationBuckets},
		{"custom", []float64{0.1, 1}, []float64{0.1, 1}},
		{"not increasing", []float64{1, 0.1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel, err := telemetry.New(telemetry.Config{Getenv: noEnv, OmitRuntimeMetrics: true, DurationBuckets: tt.buckets})
			if tt.want == nil {
				if err == nil {
					t.Fatal("New: got no error, want one")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			exercise(t, tel)
			var buf bytes.Buffer
			if err := tel.WriteMetrics(&buf); err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, b := range parseText(t, buf.Bytes())[telemetry.MetricCallDuration].GetMetric()[0].GetHistogram().GetBucket() {
				if !math.IsInf(b.GetUpperBound(), +1) {
					got = append(got, b.GetUpperBound())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("buckets: got %v, want %v", got, tt.want)
			}
		})
	}
}
