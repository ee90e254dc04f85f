package server_test

import (
	"net/http"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/telemetry"
)

// TestMetricsThroughTheServer: after known calls over streamable HTTP, the
// server's own /metrics counts them by tool and outcome (the outcome the
// client saw, result_too_large included); /healthz and /readyz answer.
func TestMetricsThroughTheServer(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, server.TransportHTTP, server.Options{Telemetry: tel, MaxResultBytes: 100})
	c := httpClient(t, url, nil)
	mustCall(t, c, "echo", map[string]any{"text": "a"})
	mustCall(t, c, "echo", map[string]any{"text": "b"})
	mustCall(t, c, "fail", map[string]any{})
	mustCall(t, c, "big", map[string]any{"n": 1000})

	resp, err := http.Get(url + server.PathMetrics)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	got := map[[2]string]float64{}
	for _, m := range fams[telemetry.MetricCalls].GetMetric() {
		var tool, outcome string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "tool":
				tool = l.GetValue()
			case "outcome":
				outcome = l.GetValue()
			}
		}
		got[[2]string{tool, outcome}] = m.GetCounter().GetValue()
	}
	for key, want := range map[[2]string]float64{
		{"echo", "ok"}:               2,
		{"fail", "execution_failed"}: 1,
		{"big", "result_too_large"}:  1,
	} {
		if got[key] != want {
			t.Errorf("%s{tool=%q,outcome=%q} = %v, want %v (all: %v)", telemetry.MetricCalls, key[0], key[1], got[key], want, got)
		}
	}
	if fams[telemetry.MetricSessions] == nil {
		t.Errorf("no %s metric", telemetry.MetricSessions)
	}
	for _, path := range []string{server.PathHealthz, server.PathReadyz} {
		r, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Errorf("%s = %d, want 200", path, r.StatusCode)
		}
	}
}
