package remote_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// recorder is a remote.Observer that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	exits  []int
	status []int
}

func (r *recorder) Exited(tool string, code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exits = append(r.exits, code)
}

func (r *recorder) Responded(tool string, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = append(r.status, status)
}

// tracedContext returns a context under a recording span of a provider
// whose spans land in the returned exporter.
func tracedContext(t *testing.T) (context.Context, trace.Span, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(context.Background(), "tools/call parent", trace.WithSpanKind(trace.SpanKindServer))
	return ctx, span, exp
}

// listen127 serves h on 127.0.0.1.
func listen127(t *testing.T, h http.Handler) *httptest.Server {
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

func TestHTTPPropagatesTraceContext(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := listen127(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("traceparent"))
		mu.Unlock()
		if r.URL.Query().Get("input") == "fail" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	obs := &recorder{}
	tool, err := remote.NewHTTP(remote.HTTPConfig{Common: remote.Common{Name: "hook", Description: "d"}, URL: srv.URL + "/hook?key=1", Method: "GET",
		Headers: map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}

	ctx, parent, exp := tracedContext(t)
	if _, err := tool.Call(ctx, json.RawMessage(`{"input":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Call(ctx, json.RawMessage(`{"input":"fail"}`)); err == nil {
		t.Fatal("got no error for HTTP 503")
	}
	parent.End()
	// Without a span context nothing is injected, and a configured
	// header of that name is sent as configured.
	if _, err := tool.Call(context.Background(), json.RawMessage(`{"input":"x"}`)); err != nil {
		t.Fatal(err)
	}

	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want 3 (two requests and the parent)", len(spans))
	}
	for i, s := range spans[:2] {
		if s.SpanKind != trace.SpanKindClient || s.Name != "GET" {
			t.Errorf("span %d: got %s %q, want a client span \"GET\"", i, s.SpanKind, s.Name)
		}
		if s.Parent.SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %d: parent %s, want the call's span %s", i, s.Parent.SpanID(), parent.SpanContext().SpanID())
		}
		want := "00-" + s.SpanContext.TraceID().String() + "-" + s.SpanContext.SpanID().String() + "-01"
		if got[i] != want {
			t.Errorf("request %d: got traceparent %q, want the request span's %q", i, got[i], want)
		}
		attrs := map[string]string{}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.Emit()
		}
		if strings.Contains(attrs["url.full"], "key=1") {
			t.Errorf("span %d: url.full %q holds the query, which may hold a secret", i, attrs["url.full"])
		}
	}
	if got, want := spans[1].Status.Code.String(), "Error"; got != want {
		t.Errorf("failed request's span status: got %s, want %s", got, want)
	}
	if got[2] != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Errorf("untraced request: got traceparent %q, want the configured header", got[2])
	}
	if want := []int{200, 503, 200}; !equalInts(obs.status, want) {
		t.Errorf("observer statuses: got %v, want %v", obs.status, want)
	}
}

func TestCommandPropagatesTraceContext(t *testing.T) {
	obs := &recorder{}
	tool, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "env", Description: "d"},
		Command: []string{"sh", "-c", `printf '{"success":true,"output":"%s|%s"}' "$TRACEPARENT" "$TRACESTATE"; exit "${CODE:-0}"`},
		Env:     map[string]string{"TRACEPARENT": "from-config"}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	failing, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "fails", Description: "d"},
		Command: []string{"sh", "-c", `exit 3`}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}

	ctx, parent, exp := tracedContext(t)
	res, err := tool.Call(ctx, json.RawMessage(`{"input":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := failing.Call(ctx, json.RawMessage(`{"input":"x"}`)); err == nil {
		t.Fatal("got no error for exit 3")
	}
	parent.End()
	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want 3", len(spans))
	}
	run := spans[0]
	if run.Name != "subprocess env" || run.Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("got span %q under %s, want \"subprocess env\" under the call's span", run.Name, run.Parent.SpanID())
	}
	want := "00-" + run.SpanContext.TraceID().String() + "-" + run.SpanContext.SpanID().String() + "-01|"
	if res.Text != want {
		t.Errorf("the program saw TRACEPARENT|TRACESTATE %q, want %q", res.Text, want)
	}

	// Untraced: the environment is the configured one.
	res, err = tool.Call(context.Background(), json.RawMessage(`{"input":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "from-config|" {
		t.Errorf("untraced call: the program saw %q, want %q", res.Text, "from-config|")
	}
	if want := []int{0, 3, 0}; !equalInts(obs.exits, want) {
		t.Errorf("observer exits: got %v, want %v", obs.exits, want)
	}
}

func equalInts(a, b []int) bool {
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
