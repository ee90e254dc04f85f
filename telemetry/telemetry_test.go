package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/telemetry/otlpexport"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// noEnv is a Getenv with no OTEL_* variable set.
func noEnv(string) string { return "" }

// serve127 serves h on 127.0.0.1.
func serve127(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// scrape GETs url and parses the text exposition format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: got %s, want 200", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the metrics: %v", err)
	}
	return fams
}

// value returns the value of the series of family name with labels, and
// whether it exists. A histogram's value is its sample count.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetricsAfterKnownCalls(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Tracing() {
		t.Fatal("tracing is on with no OTEL_* variable set")
	}
	release := make(chan struct{})
	started := make(chan struct{})
	okTool := tools.Wrap(tools.New(tools.Info{Name: "calc", Description: "d"}, func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Text("4"), nil
	}), tel.Middleware)
	failing := tools.Wrap(tools.New(tools.Info{Name: "fails", Description: "d"}, func(_ context.Context, args json.RawMessage) (tools.Result, error) {
		switch string(args) {
		case `"budget"`:
			return tools.Result{}, &tools.Error{Kind: tools.KindBudgetExhausted, Message: "spent"}
		case `"weird"`:
			return tools.Result{}, &tools.Error{Kind: "made_up", Message: "?"}
		}
		return tools.Result{}, tools.Failed("boom")
	}), tel.Middleware)
	slow := tools.Wrap(tools.New(tools.Info{Name: "slow", Description: "d"}, func(context.Context, json.RawMessage) (tools.Result, error) {
		close(started)
		<-release
		return tools.Text(""), nil
	}), tel.Middleware)

	ctx := context.Background()
	for range 3 {
		okTool.Call(ctx, json.RawMessage(`{}`))
	}
	failing.Call(ctx, json.RawMessage(`"x"`))
	failing.Call(ctx, json.RawMessage(`"budget"`))
	failing.Call(ctx, json.RawMessage(`"weird"`))
	var wg sync.WaitGroup
	wg.Go(func() { slow.Call(ctx, json.RawMessage(`{}`)) })
	<-started

	tel.SessionOpened()
	tel.SessionOpened()
	tel.SessionClosed()
	tel.Decided("calc", approval.Approve, 2*time.Second)
	tel.Decided("calc", approval.Reject, time.Second)
	tel.Decided("not-a-tool", approval.Edit, 0)

	// Real remote tools report through the same Telemetry.
	web := serve127(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("input") == "missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "fine")
	}))
	hook, err := remote.NewHTTP(remote.HTTPConfig{Common: remote.Common{Name: "hook", Description: "d"}, URL: web.URL, Method: "GET", Observer: tel})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "sub", Description: "d"}, Command: []string{"sh", "-c", "exit 7"}, Observer: tel})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range []tools.Tool{hook, sub} {
		tools.Wrap(tl, tel.Middleware) // registered: their names are labels
	}
	hook.Call(ctx, json.RawMessage(`{"input":"x"}`))
	hook.Call(ctx, json.RawMessage(`{"input":"missing"}`))
	sub.Call(ctx, json.RawMessage(`{"input":"x"}`))

	metrics := serve127(t, tel.Handler())
	fams := scrape(t, metrics.URL+"/metrics")
	close(release)
	wg.Wait()

	tests := []struct {
		name   string
		metric string
		labels []string
		want   float64
	}{
		{"successful calls", telemetry.MetricCalls, []string{"tool", "calc", "outcome", "ok"}, 3},
		{"failed call", telemetry.MetricCalls, []string{"tool", "fails", "outcome", "execution_failed"}, 1},
		{"budget refusal as outcome", telemetry.MetricCalls, []string{"tool", "fails", "outcome", "budget_exhausted"}, 1},
		{"unknown kind", telemetry.MetricCalls, []string{"tool", "fails", "outcome", "other"}, 1},
		{"budget refusals", telemetry.MetricBudgetRefusals, []string{"tool", "fails"}, 1},
		{"durations observed", telemetry.MetricCallDuration, []string{"tool", "calc"}, 3},
		{"in flight", telemetry.MetricInFlight, []string{"tool", "slow"}, 1},
		{"none left in flight", telemetry.MetricInFlight, []string{"tool", "calc"}, 0},
		{"sessions", telemetry.MetricSessions, nil, 1},
		{"approved", telemetry.MetricApprovals, []string{"tool", "calc", "decision", "approve"}, 1},
		{"rejected", telemetry.MetricApprovals, []string{"tool", "calc", "decision", "reject"}, 1},
		{"unregistered tool name", telemetry.MetricApprovals, []string{"tool", telemetry.OtherTool, "decision", "edit"}, 1},
		{"approval waits", telemetry.MetricApprovalWait, []string{"tool", "calc"}, 2},
		{"http 200", telemetry.MetricHTTPResponses, []string{"tool", "hook", "code", "200"}, 1},
		{"http 404", telemetry.MetricHTTPResponses, []string{"tool", "hook", "code", "404"}, 1},
		{"exit 7", telemetry.MetricExits, []string{"tool", "sub", "code", "7"}, 1},
		{"failed subprocess call", telemetry.MetricCalls, []string{"tool", "sub", "outcome", "execution_failed"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := value(fams, tt.metric, tt.labels...)
			if !ok {
				t.Fatalf("%s%v: no such series", tt.metric, tt.labels)
			}
			if got != tt.want {
				t.Errorf("%s%v: got %v, want %v", tt.metric, tt.labels, got, tt.want)
			}
		})
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no go_goroutines: the default metrics lack the Go runtime families")
	}
}

func TestLabelsAreBounded(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	tools.Wrap(tools.New(tools.Info{Name: "known", Description: "d"}, nil), tel.Middleware)
	for i := range 50 {
		tel.Exited(strings.Repeat("x", i+1), 1)
		tel.Responded("known", 1000+i)
		tel.Exited("known", 300+i)
	}
	tel.Exited("known", -1)
	fams := scrape(t, serve127(t, tel.Handler()).URL)
	tests := []struct {
		metric string
		labels []string
		want   float64
	}{
		{telemetry.MetricExits, []string{"tool", telemetry.OtherTool, "code", "1"}, 50},
		{telemetry.MetricHTTPResponses, []string{"tool", "known", "code", telemetry.CodeOther}, 50},
		{telemetry.MetricExits, []string{"tool", "known", "code", telemetry.CodeOther}, 50},
		{telemetry.MetricExits, []string{"tool", "known", "code", telemetry.CodeSignal}, 1},
	}
	for _, tt := range tests {
		if got, _ := value(fams, tt.metric, tt.labels...); got != tt.want {
			t.Errorf("%s%v: got %v, want %v", tt.metric, tt.labels, got, tt.want)
		}
	}
	if n := len(fams[telemetry.MetricExits].GetMetric()); n != 3 {
		t.Errorf("%s: got %d series, want 3", telemetry.MetricExits, n)
	}
}

func TestNilTelemetryDoesNothing(t *testing.T) {
	var tel *telemetry.Telemetry
	called := false
	fn := tel.Middleware(tools.Info{Name: "x"}, func(context.Context, json.RawMessage) (tools.Result, error) {
		called = true
		return tools.Result{}, nil
	})
	fn(context.Background(), nil)
	tel.SessionOpened()
	tel.SessionClosed()
	tel.Decided("x", approval.Approve, 0)
	tel.Exited("x", 0)
	tel.Responded("x", 200)
	if !called || tel.Tracing() || tel.Shutdown(context.Background()) != nil {
		t.Errorf("a nil Telemetry did something")
	}
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Handler: got %d, want 404", rec.Code)
	}
}

func TestOTLPOnlyWhenAsked(t *testing.T) {
	// A stand-in collector on 127.0.0.1 that takes OTLP/HTTP exports.
	var mu sync.Mutex
	got := map[string]int{}
	collector := serve127(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		got[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	tests := []struct {
		name    string
		env     map[string]string
		tracing bool
		sent    []string // paths the collector must have been sent
		err     string
	}{
		{"nothing set", nil, false, nil, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}, true, []string{"/v1/traces", "/v1/metrics"}, ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.URL + "/v1/traces"}, true, []string{"/v1/traces"}, ""},
		{"metrics endpoint only", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": collector.URL + "/v1/metrics"}, false, []string{"/v1/metrics"}, ""},
		{"blank endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": " "}, false, nil, ""},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_SDK_DISABLED": "true"}, false, nil, ""},
		{"traces exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}, false, nil, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_METRICS_EXPORTER": "none"}, true, nil, ""},
		{"unsupported protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, nil, `protocol "http/json" is not supported`},
		// Without Config.OTLP, this package exports nothing whatever the
		// environment says (it does not link the SDK).
		{"no OTLP func", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}, false, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v) // the exporters read the process environment
			}
			mu.Lock()
			clear(got)
			mu.Unlock()
			before := runtime.NumGoroutine()
			cfg := telemetry.Config{OTLP: otlpexport.FromEnv}
			if tt.name == "no OTLP func" {
				cfg.OTLP = nil
			}
			tel, err := telemetry.New(cfg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tel.Tracing(); got != tt.tracing {
				t.Errorf("Tracing: got %v, want %v", got, tt.tracing)
			}
			if len(tt.sent) == 0 && !tt.tracing && tt.err == "" {
				if after := runtime.NumGoroutine(); after > before { // another test's goroutine may end meanwhile
					t.Errorf("goroutines: got %d after New, want %d: nothing may start without OTLP", after, before)
				}
			}
			tool := tools.Wrap(tools.New(tools.Info{Name: "t", Description: "d"}, func(context.Context, json.RawMessage) (tools.Result, error) {
				return tools.Text("x"), nil
			}), tel.Middleware)
			tool.Call(context.Background(), json.RawMessage(`{}`))
			wait := 5 * time.Second
			if tt.name == "grpc" {
				wait = 200 * time.Millisecond // nothing listens: the export fails
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			err = tel.Shutdown(ctx)
			if tt.name == "grpc" {
				return // nothing listens: the export fails, but the exporter was made
			}
			if err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range tt.sent {
				if got[p] == 0 {
					t.Errorf("the collector got nothing at %s; got %v", p, got)
				}
			}
			if len(tt.sent) == 0 && len(got) > 0 {
				t.Errorf("the collector got %v, want nothing", got)
			}
		})
	}
}

// spanTree indexes ended spans.
type spanTree struct {
	byID map[trace.SpanID]tracetest.SpanStub
}

func (s spanTree) children(parent trace.SpanID) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, sp := range s.byID {
		if sp.Parent.SpanID() == parent {
			out = append(out, sp)
		}
	}
	return out
}

func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, a := range s.Attributes {
		m[string(a.Key)] = a.Value.Emit()
	}
	return m
}

func TestPipelineSpanTreeAndPropagation(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}

	var seenHeader string
	web := serve127(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenHeader = r.Header.Get("traceparent")
		io.WriteString(w, "from the web")
	}))
	fetch, err := remote.NewHTTP(remote.HTTPConfig{Common: remote.Common{Name: "fetch", Description: "d"}, URL: web.URL + "/x"})
	if err != nil {
		t.Fatal(err)
	}
	show, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "show", Description: "d"},
		Command: []string{"sh", "-c", `printf '{"success":true,"output":"%s"}' "$TRACEPARENT"`}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Name: "pipe", Description: "d", Steps: []pipeline.Step{{Tool: fetch}, {Tool: show}}})
	if err != nil {
		t.Fatal(err)
	}
	call := tools.Wrap(p, tel.Middleware)

	const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	const clientSpan = "00f067aa0ba902b7"
	ctx := telemetry.WithRequest(context.Background(), &telemetry.Request{
		ID: "7", ProtocolVersion: "2025-06-18", SessionID: "s-1", Transport: telemetry.TransportTCP,
		TraceParent: "00-" + clientTrace + "-" + clientSpan + "-01", TraceState: "vendor=1",
	})
	res, err := call.Call(ctx, json.RawMessage(`{"input":"go"}`))
	if err != nil {
		t.Fatal(err)
	}

	tree := spanTree{byID: map[trace.SpanID]tracetest.SpanStub{}}
	for _, s := range exp.GetSpans() {
		tree.byID[s.SpanContext.SpanID()] = s
		if got := s.SpanContext.TraceID().String(); got != clientTrace {
			t.Errorf("span %q: trace %s, want the client's %s", s.Name, got, clientTrace)
		}
	}
	if len(tree.byID) != 5 {
		t.Fatalf("got %d spans, want 5 (call, two steps, request, subprocess)", len(tree.byID))
	}
	rootID, err := trace.SpanIDFromHex(clientSpan)
	if err != nil {
		t.Fatal(err)
	}
	roots := tree.children(rootID)
	if len(roots) != 1 {
		t.Fatalf("got %d spans under the client's span, want 1", len(roots))
	}
	root := roots[0]
	if root.Name != "tools/call pipe" || root.SpanKind != trace.SpanKindServer {
		t.Errorf("root: got %s %q, want a server span \"tools/call pipe\"", root.SpanKind, root.Name)
	}
	if got := root.SpanContext.TraceState().String(); got != "vendor=1" {
		t.Errorf("root tracestate: got %q, want the client's", got)
	}
	wantAttrs := map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "pipe",
		"jsonrpc.request.id": "7", "mcp.protocol.version": "2025-06-18", "mcp.session.id": "s-1", "network.transport": "tcp",
	}
	got := attrs(root)
	for k, v := range wantAttrs {
		if got[k] != v {
			t.Errorf("root attribute %s: got %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "error.type"} {
		if _, ok := got[k]; ok {
			t.Errorf("root has %s; want none (no opt-in, no error)", k)
		}
	}

	want := map[string]string{"execute_tool fetch": "POST", "execute_tool show": "subprocess show"}
	steps := tree.children(root.SpanContext.SpanID())
	if len(steps) != 2 {
		t.Fatalf("got %d step spans, want 2", len(steps))
	}
	for _, st := range steps {
		inner := tree.children(st.SpanContext.SpanID())
		if len(inner) != 1 || inner[0].Name != want[st.Name] {
			t.Errorf("under %q: got %v, want one %q", st.Name, names(inner), want[st.Name])
			continue
		}
		tp := "00-" + clientTrace + "-" + inner[0].SpanContext.SpanID().String() + "-01"
		switch inner[0].Name {
		case "POST":
			if seenHeader != tp {
				t.Errorf("the HTTP tool saw traceparent %q, want its request span's %q", seenHeader, tp)
			}
		default:
			if res.Text != tp {
				t.Errorf("the subprocess saw TRACEPARENT %q, want its span's %q", res.Text, tp)
			}
		}
	}
}

func names(spans []tracetest.SpanStub) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestArgumentsAttributeBounded: the arguments attribute of a large call is
// within MaxAttributeBytes, valid UTF-8 whatever the arguments hold, and
// the secret is hidden, not cut through.
func TestArgumentsAttributeBounded(t *testing.T) {
	tests := []struct {
		name, args string
		want       string
	}{
		{"4 MiB with a secret", `{"token":"s3cret","q":"` + strings.Repeat("é", 2<<20) + `"}`, `{"token":"[hidden]","q":"` + strings.Repeat("é", 18) + "…"},
		{"invalid UTF-8", "{\"q\":\"\xff\xfe\",\"token\":\"s3cret\"}", "{\"q\":\"\ufffd\",\"token\":\"[hidden]\"}"},
		{"small", `{"q":"cats","token":"s3cret"}`, `{"q":"cats","token":"[hidden]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, RecordArguments: true, MaxAttributeBytes: 64, Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			tool := tools.Wrap(tools.New(tools.Info{Name: "search", Description: "d", Secret: []string{"token"}}, func(context.Context, json.RawMessage) (tools.Result, error) {
				return tools.Text("found"), nil
			}), tel.Middleware)
			tool.Call(context.Background(), json.RawMessage(tt.args))
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("got %d spans, want 1", len(spans))
			}
			got := attrs(spans[0])["gen_ai.tool.call.arguments"]
			if got != tt.want {
				t.Errorf("arguments: got %q, want %q", got, tt.want)
			}
			if len(got) > 64 || !utf8.ValidString(got) || strings.Contains(got, "s3cret") {
				t.Errorf("arguments: %q (%d bytes): want at most 64 bytes of valid UTF-8, no secret", got, len(got))
			}
		})
	}
}

func TestSpanErrorsAndArguments(t *testing.T) {
	tests := []struct {
		name      string
		record    bool
		fail      bool
		wantError string
		wantArgs  string
	}{
		{"failure", false, true, "tool_error", ""},
		{"success", false, false, "", ""},
		{"arguments opted in, secret hidden", true, false, "", `{"q":"cats","token":"[hidden]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, RecordArguments: tt.record, Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			tool := tools.Wrap(tools.New(tools.Info{Name: "search", Description: "d", Secret: []string{"token"}}, func(context.Context, json.RawMessage) (tools.Result, error) {
				if tt.fail {
					return tools.Result{}, tools.Failed("no")
				}
				return tools.Text("found"), nil
			}), tel.Middleware)
			tool.Call(context.Background(), json.RawMessage(`{"q":"cats","token":"s3cret"}`))
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("got %d spans, want 1", len(spans))
			}
			a := attrs(spans[0])
			if a["error.type"] != tt.wantError {
				t.Errorf("error.type: got %q, want %q", a["error.type"], tt.wantError)
			}
			if a["gen_ai.tool.call.arguments"] != tt.wantArgs {
				t.Errorf("arguments: got %q, want %q", a["gen_ai.tool.call.arguments"], tt.wantArgs)
			}
			for k, v := range a {
				if strings.Contains(v, "s3cret") {
					t.Errorf("attribute %s holds the secret: %q", k, v)
				}
			}
		})
	}
}
