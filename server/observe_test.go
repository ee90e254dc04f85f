package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/tools"
)

// TestObservedRequest runs real tools/call messages through an mcp-go
// server wired as server.New is to be (recordRequestID as the
// BeforeCallTool hook, observeRequest in the handler, the telemetry
// middleware around the call) and checks the span each one makes.
func TestObservedRequest(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(telemetry.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	fn := tel.Middleware(tools.Info{Name: "echo"}, func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Text("hi"), nil })
	hooks := &mcpserver.Hooks{}
	hooks.AddBeforeCallTool(recordRequestID)
	m := mcpserver.NewMCPServer("t", "1", mcpserver.WithToolCapabilities(false), mcpserver.WithHooks(hooks))
	m.AddTool(mcp.NewTool("echo"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = observeRequest(ctx, tel, req)
		res, err := fn(ctx, rawArguments(req))
		return render(tools.Settle(res, err), 0), nil
	})

	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name      string
		msg       string
		wantID    string
		wantTrace string // the span's parent span id; "" for a root
	}{
		{"meta traceparent", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","_meta":{"traceparent":"` + parent + `","tracestate":"v=1"}}}`, "7", "00f067aa0ba902b7"},
		{"string id, no trace", `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"echo"}}`, "abc", ""},
		{"large number id in decimal", `{"jsonrpc":"2.0","id":1000000,"method":"tools/call","params":{"name":"echo"}}`, "1000000", ""},
		{"client cannot plant the id", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","_meta":{"mcp-tools/jsonrpcRequestId":"forged"}}}`, "8", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp.Reset()
			resp := m.HandleMessage(context.Background(), json.RawMessage(tt.msg))
			if _, ok := resp.(mcp.JSONRPCResponse); !ok {
				t.Fatalf("got %#v, want a result", resp)
			}
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("got %d spans, want 1", len(spans))
			}
			s := spans[0]
			got := map[string]string{}
			for _, a := range s.Attributes {
				got[string(a.Key)] = a.Value.Emit()
			}
			if got["jsonrpc.request.id"] != tt.wantID {
				t.Errorf("jsonrpc.request.id: got %q, want %q", got["jsonrpc.request.id"], tt.wantID)
			}
			if got["network.transport"] != "pipe" {
				t.Errorf("network.transport: got %q, want pipe", got["network.transport"])
			}
			gotParent := ""
			if s.Parent.IsValid() {
				gotParent = s.Parent.SpanID().String()
			}
			if gotParent != tt.wantTrace {
				t.Errorf("parent span: got %q, want %q", gotParent, tt.wantTrace)
			}
		})
	}
}

func TestObserveRequestSources(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	const fromMeta, fromHeader = "00-11111111111111111111111111111111-1111111111111111-01", "00-22222222222222222222222222222222-2222222222222222-01"
	withMeta := func(req mcp.CallToolRequest) mcp.CallToolRequest {
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": fromMeta}}
		return req
	}
	headers := http.Header{"Traceparent": {fromHeader}, "Tracestate": {"h=1"}}
	tests := []struct {
		name          string
		req           mcp.CallToolRequest
		wantParent    string
		wantState     string
		wantTransport string
	}{
		{"stdio, meta", withMeta(mcp.CallToolRequest{}), fromMeta, "", telemetry.TransportPipe},
		{"http, header", mcp.CallToolRequest{Header: headers}, fromHeader, "h=1", telemetry.TransportTCP},
		{"http, meta wins", withMeta(mcp.CallToolRequest{Header: headers}), fromMeta, "", telemetry.TransportTCP},
		{"nothing", mcp.CallToolRequest{}, "", "", telemetry.TransportPipe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := telemetry.RequestFrom(observeRequest(context.Background(), tel, tt.req))
			if got == nil {
				t.Fatal("no telemetry.Request in the context")
			}
			if got.TraceParent != tt.wantParent || got.TraceState != tt.wantState || got.Transport != tt.wantTransport {
				t.Errorf("got %q %q %q, want %q %q %q", got.TraceParent, got.TraceState, got.Transport, tt.wantParent, tt.wantState, tt.wantTransport)
			}
		})
	}
	if ctx := observeRequest(context.Background(), nil, mcp.CallToolRequest{}); telemetry.RequestFrom(ctx) != nil {
		t.Error("without telemetry the context carries a request")
	}
}

func TestOpsHandler(t *testing.T) {
	reg, err := tools.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(reg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.New(telemetry.Config{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	tel.SessionOpened()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	ops := s.OpsHandler(tel.Handler())
	go func() { served <- s.Serve(ln, ops) }()
	base := "http://" + ln.Addr().String()

	get := func(path, origin string, host ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if len(host) > 0 {
			req.Host = host[0]
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	tests := []struct {
		name, path, origin, host string
		want                     int
	}{
		{"healthz", PathHealthz, "", "", 200},
		{"readyz", PathReadyz, "", "", 200},
		{"metrics", PathMetrics, "", "", 200},
		{"localhost", PathMetrics, "", "localhost:" + port, 200},
		{"foreign origin", PathMetrics, "https://evil.example", "", 403},
		// A page whose name was rebound to 127.0.0.1 reads its "own" origin:
		// the browser sends no Origin on a same-origin GET, only its Host.
		{"DNS rebinding", PathMetrics, "", "evil.example:" + port, 403},
		{"DNS rebinding, readyz", PathReadyz, "", "evil.example:" + port, 403},
		{"unknown path", "/mcp", "", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var host []string
			if tt.host != "" {
				host = []string{tt.host}
			}
			if got, body := get(tt.path, tt.origin, host...); got != tt.want {
				t.Errorf("GET %s: got %d (%s), want %d", tt.path, got, body, tt.want)
			}
		})
	}
	_, body := get(PathMetrics, "")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	if got := fams[telemetry.MetricSessions].GetMetric()[0].GetGauge().GetValue(); got != 1 {
		t.Errorf("%s: got %v, want 1", telemetry.MetricSessions, got)
	}

	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if err := s.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: got %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after Shutdown")
	}
	// A handler mounted elsewhere still answers: ready no more, alive.
	for _, tt := range []struct {
		path string
		want int
	}{{PathReadyz, http.StatusServiceUnavailable}, {PathHealthz, http.StatusOK}} {
		rec := httptest.NewRecorder()
		ops.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		if rec.Code != tt.want {
			t.Errorf("%s after shutdown: got %d, want %d", tt.path, rec.Code, tt.want)
		}
	}
	if _, err := http.Get(base + PathHealthz); err == nil {
		t.Error("the listener still accepts after Serve returned")
	}
}

// TestRawRequestID: the fast paths read the id from its raw bytes into what
// mcp-go hands the hook, and telemetry reports both alike.
func TestRawRequestID(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{`7`, "7"}, {`1000000`, "1000000"}, {`1e3`, "1000"}, {`1.5`, "1.5"}, {`-3`, "-3"},
		{`"abc"`, "abc"}, {`"a\"b"`, `a"b`}, {`"\u0041"`, "A"}, {`""`, ""},
	} {
		if got := requestIDString(rawRequestID([]byte(tt.raw))); got != tt.want {
			t.Errorf("id %s: got %q, want %q", tt.raw, got, tt.want)
		}
		var v any
		if err := json.Unmarshal([]byte(tt.raw), &v); err != nil {
			t.Fatal(err)
		}
		if got := requestIDString(v); got != tt.want { // as mcp-go's path has it
			t.Errorf("id %s on mcp-go's path: got %q, want %q", tt.raw, got, tt.want)
		}
	}
}
