package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	_ "google.golang.org/grpc/encoding/gzip" // the test server takes gzip exports
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// fastRetry keeps the tests' retries short.
var fastRetry = retryPolicy{initial: 10 * time.Millisecond, max: 20 * time.Millisecond, maxElapsed: 5 * time.Second}

// request is one export a stand-in collector took.
type request struct {
	path    string
	header  http.Header
	body    []byte // decompressed
	gzipped bool
}

// httpCollector is an OTLP/HTTP stand-in on 127.0.0.1; answer decides
// each answer (nil: 200 and an empty response).
type httpCollector struct {
	*httptest.Server
	mu     sync.Mutex
	got    []request
	answer func(n int, w http.ResponseWriter) // n: 0 for the first request
}

func newHTTPCollector(t *testing.T, answer func(n int, w http.ResponseWriter)) *httpCollector {
	t.Helper()
	c := &httpCollector{answer: answer}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		gz := r.Header.Get("Content-Encoding") == "gzip"
		if gz {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body, _ = io.ReadAll(zr)
		}
		c.mu.Lock()
		n := len(c.got)
		c.got = append(c.got, request{path: r.URL.Path, header: r.Header.Clone(), body: body, gzipped: gz})
		c.mu.Unlock()
		if c.answer != nil {
			c.answer(n, w)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *httpCollector) requests() []request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]request(nil), c.got...)
}

// testSpans are two spans with the fields a transform could lose.
func testSpans() []sdktrace.ReadOnlySpan {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	res := resource.NewSchemaless(attribute.String("service.name", "test"), attribute.Int("n", 3))
	start := time.Unix(1700000000, 5)
	return tracetest.SpanStubs{
		{
			Name:        "tools/call echo",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled}),
			Parent:      trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9}, Remote: true}),
			SpanKind:    trace.SpanKindServer,
			StartTime:   start, EndTime: start.Add(time.Millisecond),
			Attributes: []attribute.KeyValue{attribute.String("mcp.method.name", "tools/call"), attribute.StringSlice("s", []string{"a", "é"}),
				attribute.Float64("f", 1.5), attribute.Bool("b", true), attribute.Int64Slice("is", []int64{1, -2})},
			Events:               []sdktrace.Event{{Name: "e", Time: start, Attributes: []attribute.KeyValue{attribute.String("k", "v")}}},
			Links:                []sdktrace.Link{{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{7}})}},
			Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
			DroppedAttributes:    2,
			Resource:             res,
			InstrumentationScope: instrumentation.Scope{Name: "scope", Version: "1"},
		},
		{
			Name:        "second",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2}}),
			StartTime:   start, EndTime: start.Add(time.Second),
			Resource:             res,
			InstrumentationScope: instrumentation.Scope{Name: "other"},
		},
	}.Snapshots()
}

// testMetrics holds one metric of every aggregation, with attributes of
// every type and exemplars.
func testMetrics() *metricdata.ResourceMetrics {
	t0, t1 := time.Unix(1700000000, 0), time.Unix(1700000010, 0)
	attrs := attribute.NewSet(attribute.String("tool", "echo"), attribute.Int("code", 0), attribute.BoolSlice("bs", []bool{true}),
		attribute.Float64Slice("fs", []float64{0.5}), attribute.ByteSlice("raw", []byte{0, 1}),
		attribute.Slice("mixed", attribute.StringValue("x"), attribute.IntValue(2)), attribute.Map("m", attribute.String("k", "v")))
	ex := []metricdata.Exemplar[float64]{{FilteredAttributes: []attribute.KeyValue{attribute.String("f", "1")}, Time: t1, Value: 0.25,
		SpanID: []byte{1, 2, 3, 4, 5, 6, 7, 8}, TraceID: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}}
	return &metricdata.ResourceMetrics{
		Resource: resource.NewWithAttributes("https://opentelemetry.io/schemas/1.41.0", attribute.String("service.name", "mcp-tools")),
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: "github.com/mcp-tools/mcp-tools/telemetry", Version: "v1", SchemaURL: "s",
				Attributes: attribute.NewSet(attribute.String("a", "b"))},
			Metrics: []metricdata.Metrics{
				{Name: "mcp.server.operation.duration", Description: "d", Unit: "s", Data: metricdata.Histogram[float64]{
					Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.HistogramDataPoint[float64]{{Attributes: attrs, StartTime: t0, Time: t1, Count: 3,
						Bounds: []float64{0.1, 1}, BucketCounts: []uint64{1, 1, 1}, Min: metricdata.NewExtrema(0.05), Max: metricdata.NewExtrema(2.0), Sum: 2.55, Exemplars: ex}},
				}},
				{Name: "ints", Data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.HistogramDataPoint[int64]{{StartTime: t0, Time: t1, Count: 1, Bounds: []float64{1}, BucketCounts: []uint64{0, 1}, Sum: 4}}}},
				{Name: "calls", Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[int64]{{Attributes: attrs, StartTime: t0, Time: t1, Value: 7,
						Exemplars: []metricdata.Exemplar[int64]{{Time: t1, Value: 1}}}}}},
				{Name: "ratio", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.DataPoint[float64]{{StartTime: t0, Time: t1, Value: 0.5}}}},
				{Name: "in_flight", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Time: t1, Value: 2}}}},
				{Name: "temp", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Time: t1, Value: -1.5}}}},
				{Name: "exp", Data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{{StartTime: t0, Time: t1, Count: 4, Sum: 3, Scale: 2, ZeroCount: 1,
						ZeroThreshold: 0.001, PositiveBucket: metricdata.ExponentialBucket{Offset: 1, Counts: []uint64{1, 2}},
						NegativeBucket: metricdata.ExponentialBucket{Offset: -1, Counts: []uint64{1}}, Min: metricdata.NewExtrema(-0.5), Exemplars: ex}}}},
				{Name: "expint", Data: metricdata.ExponentialHistogram[int64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.ExponentialHistogramDataPoint[int64]{{Time: t1, Count: 1, Sum: 2}}}},
				{Name: "summary", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{Time: t1, Count: 2, Sum: 3,
					QuantileValues: []metricdata.QuantileValue{{Quantile: 0.5, Value: 1}, {Quantile: 1, Value: 2}}}}}},
			},
		}},
	}
}

func settings(t *testing.T, env map[string]string, signal, path string) Settings {
	t.Helper()
	s, err := FromEnv(func(k string) string { return env[k] }, signal, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMatchesOpenTelemetry sends the same spans and metrics through
// OpenTelemetry's OTLP/HTTP exporters and through this package: the
// collector must read the same requests.
func TestMatchesOpenTelemetry(t *testing.T) {
	ctx := context.Background()
	theirs, ours := newHTTPCollector(t, nil), newHTTPCollector(t, nil)

	te, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(theirs.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	oe := NewTraceExporter(settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ours.URL}, "TRACES", "/v1/traces"))
	me, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(theirs.URL+"/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": ours.URL + "/m"}
	om, err := NewMetricExporter(func(k string) string { return env[k] }, settings(t, env, "METRICS", "/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	for _, exp := range []sdktrace.SpanExporter{te, oe} {
		if err := exp.ExportSpans(ctx, testSpans()); err != nil {
			t.Fatal(err)
		}
		if err := exp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := me.Export(ctx, testMetrics()); err != nil {
		t.Fatal(err)
	}
	if err := om.Export(ctx, testMetrics()); err != nil {
		t.Fatal(err)
	}
	tr, or := theirs.requests(), ours.requests()
	if len(tr) != 2 || len(or) != 2 {
		t.Fatalf("got %d and %d requests, want 2 each", len(tr), len(or))
	}
	if or[0].path != "/v1/traces" || or[1].path != "/m" {
		t.Errorf("paths: got %s and %s, want /v1/traces and /m", or[0].path, or[1].path)
	}
	for _, r := range or {
		if ct := r.header.Get("Content-Type"); ct != "application/x-protobuf" {
			t.Errorf("Content-Type: got %q", ct)
		}
	}
	for i, msgs := range [][2]proto.Message{
		{new(coltracepb.ExportTraceServiceRequest), new(coltracepb.ExportTraceServiceRequest)},
		{new(colmetricpb.ExportMetricsServiceRequest), new(colmetricpb.ExportMetricsServiceRequest)},
	} {
		if err := proto.Unmarshal(tr[i].body, msgs[0]); err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(or[i].body, msgs[1]); err != nil {
			t.Fatalf("the collector cannot read our request: %v", err)
		}
		if !proto.Equal(msgs[0], msgs[1]) {
			t.Errorf("request %d differs:\ntheirs %v\nours   %v", i, msgs[0], msgs[1])
		}
	}
	var got colmetricpb.ExportMetricsServiceRequest
	_ = proto.Unmarshal(or[1].body, &got)
	if n := len(got.ResourceMetrics[0].ScopeMetrics[0].Metrics); n != 9 {
		t.Errorf("got %d metrics, want 9", n)
	}
}

// newTraceExporter is NewTraceExporter with short retries.
func newTraceExporter(t *testing.T, s Settings) *TraceExporter {
	t.Helper()
	exp := NewTraceExporter(s)
	exp.c.retry = fastRetry
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

func TestHTTPAnswers(t *testing.T) {
	partial, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 1, ErrorMessage: "span too big"}})
	tests := []struct {
		name     string
		answer   func(n int, w http.ResponseWriter)
		requests int
		err      string
	}{
		{"503 then 200 is retried", func(n int, w http.ResponseWriter) {
			if n == 0 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}, 2, ""},
		{"429 and 502 and 504 are retried", func(n int, w http.ResponseWriter) {
			if n < 3 {
				w.WriteHeader([]int{429, 502, 504}[n])
			}
		}, 4, ""},
		{"400 is not retried and its status message is shown", func(n int, w http.ResponseWriter) {
			b, _ := proto.Marshal(status.New(grpccodes.InvalidArgument, "bad span").Proto())
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(b)
		}, 1, `collector answered 400 Bad Request: "bad span"`},
		{"a partial success is an error, not retried", func(n int, w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write(partial)
		}, 1, `the collector rejected 1 item(s): "span too big"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newHTTPCollector(t, tt.answer)
			exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL,
				"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20s3cret", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, "TRACES", "/v1/traces"))
			err := exp.ExportSpans(context.Background(), testSpans())
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("got error %v, want %q", err, tt.err)
			}
			got := c.requests()
			if len(got) != tt.requests {
				t.Fatalf("got %d requests, want %d", len(got), tt.requests)
			}
			for _, r := range got {
				var req coltracepb.ExportTraceServiceRequest
				if !r.gzipped || proto.Unmarshal(r.body, &req) != nil || len(req.ResourceSpans) != 1 {
					t.Errorf("a request was not a gzipped export of the spans (gzip %v)", r.gzipped)
				}
				if a := r.header.Get("Authorization"); a != "Bearer s3cret" {
					t.Errorf("Authorization: got %q", a)
				}
			}
		})
	}
}

// TestTimeoutAndShutdown: a collector that never answers costs an export
// its timeout, no more; Shutdown ends an export under way.
func TestTimeoutAndShutdown(t *testing.T) {
	release := make(chan struct{})
	c := newHTTPCollector(t, func(int, http.ResponseWriter) { <-release })
	defer close(release) // before the collectors' Cleanup, which waits for their handlers

	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "200"}, "TRACES", "/v1/traces"))
	done := make(chan error, 1)
	go func() { done <- exp.ExportSpans(context.Background(), testSpans()) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("an export to a collector that never answers succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the export outlived its 200 ms timeout by far")
	}

	// A minute's timeout: only Shutdown can end this export in time. Its
	// own collector says when the request is under way.
	arrived := make(chan struct{}, 1)
	c2 := newHTTPCollector(t, func(int, http.ResponseWriter) {
		arrived <- struct{}{}
		<-release
	})
	exp2 := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c2.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "60000"}, "TRACES", "/v1/traces"))
	go func() { done <- exp2.ExportSpans(context.Background(), testSpans()) }()
	<-arrived
	if err := exp2.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("an export ended by Shutdown succeeded")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Shutdown did not end the export under way")
	}
	if err := exp2.ExportSpans(context.Background(), testSpans()); err == nil {
		t.Error("an export after Shutdown succeeded")
	}
}

// grpcCollector is an OTLP/gRPC stand-in on 127.0.0.1, served by grpc-go
// itself; fail decides each answer's error (nil: success).
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu     sync.Mutex
	traces []*coltracepb.ExportTraceServiceRequest
	metric []*colmetricpb.ExportMetricsServiceRequest
	md     []metadata.MD
	fail   func(n int) error
	// rejectMetrics, when set, is the message of a partial success
	// rejecting two data points of every metrics export.
	rejectMetrics string
}

func (g *grpcCollector) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	g.mu.Lock()
	n := len(g.traces)
	g.traces, g.md = append(g.traces, req), append(g.md, md)
	g.mu.Unlock()
	if g.fail != nil {
		if err := g.fail(n); err != nil {
			return nil, err
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// metricsService takes metric exports for a grpcCollector.
type metricsService struct {
	colmetricpb.UnimplementedMetricsServiceServer
	g *grpcCollector
}

func (m metricsService) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	m.g.mu.Lock()
	defer m.g.mu.Unlock()
	m.g.metric = append(m.g.metric, req)
	if m.g.rejectMetrics != "" {
		return &colmetricpb.ExportMetricsServiceResponse{PartialSuccess: &colmetricpb.ExportMetricsPartialSuccess{RejectedDataPoints: 2, ErrorMessage: m.g.rejectMetrics}}, nil
	}
	return &colmetricpb.ExportMetricsServiceResponse{PartialSuccess: &colmetricpb.ExportMetricsPartialSuccess{}}, nil
}

// serveGRPC starts g; with certFile set it serves TLS with that
// certificate (and keyFile).
func serveGRPC(t *testing.T, g *grpcCollector, certFile, keyFile string) string {
	t.Helper()
	var opts []grpc.ServerOption
	if certFile != "" {
		creds, err := credentials.NewServerTLSFromFile(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, grpc.Creds(creds))
	}
	srv := grpc.NewServer(opts...)
	coltracepb.RegisterTraceServiceServer(srv, g)
	colmetricpb.RegisterMetricsServiceServer(srv, metricsService{g: g})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "collector"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestGRPC exports to grpc-go's own server, in clear (h2c) and over TLS,
// with and without gzip, and checks what it read.
func TestGRPC(t *testing.T) {
	cert, key := selfSigned(t)
	tests := []struct {
		name string
		tls  bool
		env  map[string]string
	}{
		{"h2c", false, map[string]string{"OTEL_EXPORTER_OTLP_INSECURE": "true"}},
		{"h2c with an http URL and gzip", false, map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}},
		{"TLS", true, map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &grpcCollector{}
			addr := ""
			if tt.tls {
				addr = serveGRPC(t, g, cert, key)
			} else {
				addr = serveGRPC(t, g, "", "")
			}
			env := map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=t1"}
			for k, v := range tt.env {
				env[k] = v
			}
			switch {
			case tt.env["OTEL_EXPORTER_OTLP_INSECURE"] == "true":
				env["OTEL_EXPORTER_OTLP_ENDPOINT"] = addr
			case tt.tls:
				env["OTEL_EXPORTER_OTLP_ENDPOINT"] = addr // secure by default
			default:
				env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://" + addr
			}
			exp := newTraceExporter(t, settings(t, env, "TRACES", "/v1/traces"))
			if err := exp.ExportSpans(context.Background(), testSpans()); err != nil {
				t.Fatal(err)
			}
			om, err := NewMetricExporter(func(k string) string { return env[k] }, settings(t, env, "METRICS", "/v1/metrics"))
			if err != nil {
				t.Fatal(err)
			}
			if err := om.Export(context.Background(), testMetrics()); err != nil {
				t.Fatal(err)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if len(g.traces) != 1 || len(g.metric) != 1 {
				t.Fatalf("got %d trace and %d metric exports, want 1 each", len(g.traces), len(g.metric))
			}
			if n := len(g.traces[0].ResourceSpans[0].ScopeSpans); n != 2 {
				t.Errorf("got %d scopes of spans, want 2", n)
			}
			if n := len(g.metric[0].ResourceMetrics[0].ScopeMetrics[0].Metrics); n != 9 {
				t.Errorf("got %d metrics, want 9", n)
			}
			if got := g.md[0].Get("x-tenant"); len(got) != 1 || got[0] != "t1" {
				t.Errorf("x-tenant metadata: got %v", got)
			}
		})
	}
}

// TestGRPCStatus: the codes OpenTelemetry's exporters retry are retried,
// RESOURCE_EXHAUSTED only with a RetryInfo; others are errors at once.
func TestGRPCStatus(t *testing.T) {
	exhausted, err := status.New(grpccodes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		fail     func(n int) error
		requests int
		err      string
	}{
		{"unavailable then ok", func(n int) error {
			if n == 0 {
				return status.Error(grpccodes.Unavailable, "restarting")
			}
			return nil
		}, 2, ""},
		{"resource exhausted with retry info", func(n int) error {
			if n == 0 {
				return exhausted.Err()
			}
			return nil
		}, 2, ""},
		{"unavailable with a RetryInfo longer than the export may take", func(int) error {
			st, err := status.New(grpccodes.Unavailable, "come back tomorrow").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(24 * time.Hour)})
			if err != nil {
				return err
			}
			return st.Err()
		}, 1, `UNAVAILABLE): "come back tomorrow"`},
		{"resource exhausted with a RetryInfo of no delay", func(n int) error {
			if n == 0 {
				st, err := status.New(grpccodes.ResourceExhausted, "now").WithDetails(&errdetails.RetryInfo{})
				if err != nil {
					return err
				}
				return st.Err()
			}
			return nil
		}, 2, ""},
		{"resource exhausted without", func(int) error { return status.Error(grpccodes.ResourceExhausted, "full") }, 1,
			`gRPC status 8 (RESOURCE_EXHAUSTED): "full"`},
		{"invalid argument, message percent-encoded on the wire", func(int) error { return status.Error(grpccodes.InvalidArgument, "bad span: 100% é") }, 1,
			`gRPC status 3 (INVALID_ARGUMENT): "bad span: 100% é"`},
		{"unimplemented", func(int) error { return status.Error(grpccodes.Unimplemented, "no") }, 1, "UNIMPLEMENTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &grpcCollector{fail: tt.fail}
			addr := serveGRPC(t, g, "", "")
			exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + addr}, "TRACES", "/v1/traces"))
			err := exp.ExportSpans(context.Background(), testSpans())
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("got error %v, want %q", err, tt.err)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if len(g.traces) != tt.requests {
				t.Errorf("got %d requests, want %d", len(g.traces), tt.requests)
			}
		})
	}
}

// TestGRPCPartialSuccess: a partial success is reported, not retried,
// also when grpc-go gzips its answer (as it does when the request was).
func TestGRPCPartialSuccess(t *testing.T) {
	for _, compression := range []string{"none", "gzip"} {
		t.Run(compression, func(t *testing.T) {
			g := &grpcCollector{rejectMetrics: "too many points"}
			env := map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_COMPRESSION": compression,
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + serveGRPC(t, g, "", "")}
			om, err := NewMetricExporter(func(k string) string { return env[k] }, settings(t, env, "METRICS", "/v1/metrics"))
			if err != nil {
				t.Fatal(err)
			}
			err = om.Export(context.Background(), testMetrics())
			if want := `the collector rejected 2 item(s): "too many points"`; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got error %v, want %q", err, want)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if len(g.metric) != 1 {
				t.Errorf("got %d exports, want 1: a partial success is not retried", len(g.metric))
			}
		})
	}
}

func TestGRPCNotAGRPCServer(t *testing.T) {
	// A plain HTTP server (no gRPC) answering 503: the export fails as
	// UNAVAILABLE and is retried until its timeout, as gRPC says.
	var n int
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	s := settings(t, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": u.Host,
		"OTEL_EXPORTER_OTLP_INSECURE": "true", "OTEL_EXPORTER_OTLP_TIMEOUT": "300"}, "TRACES", "/v1/traces")
	exp := newTraceExporter(t, s)
	err := exp.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "UNAVAILABLE") {
		t.Fatalf("got error %v, want UNAVAILABLE", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n < 2 {
		t.Errorf("the server had %d requests, want retries", n)
	}
}

func TestUnknownAggregation(t *testing.T) {
	c := newHTTPCollector(t, nil)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}
	om, err := NewMetricExporter(func(k string) string { return env[k] }, settings(t, env, "METRICS", "/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	rm := testMetrics()
	rm.ScopeMetrics[0].Metrics = append(rm.ScopeMetrics[0].Metrics, metricdata.Metrics{Name: "odd", Data: nil},
		metricdata.Metrics{Name: "undefined temporality", Data: metricdata.Sum[int64]{}})
	err = om.Export(context.Background(), rm)
	if err == nil || !strings.Contains(err.Error(), "odd") || !strings.Contains(err.Error(), "undefined temporality") {
		t.Fatalf("got error %v, want one naming both metrics left out", err)
	}
	var req colmetricpb.ExportMetricsServiceRequest
	if got := c.requests(); len(got) != 1 || proto.Unmarshal(got[0].body, &req) != nil || len(req.ResourceMetrics[0].ScopeMetrics[0].Metrics) != 9 {
		t.Fatal("the other metrics were not sent")
	}
}

func TestMetricPreferences(t *testing.T) {
	tests := []struct {
		env       map[string]string
		histogram metricdata.Temporality
		upDown    metricdata.Temporality
		exp       bool
		err       string
	}{
		{map[string]string{}, metricdata.CumulativeTemporality, metricdata.CumulativeTemporality, false, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "delta"}, metricdata.DeltaTemporality, metricdata.CumulativeTemporality, false, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "LowMemory", "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": "base2_exponential_bucket_histogram"},
			metricdata.DeltaTemporality, metricdata.CumulativeTemporality, true, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "sometimes"}, 0, 0, false, `"sometimes" is not supported`},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": "x"}, 0, 0, false, `"x" is not supported`},
	}
	for _, tt := range tests {
		tt.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:1"
		e, err := NewMetricExporter(func(k string) string { return tt.env[k] }, settings(t, tt.env, "METRICS", "/v1/metrics"))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: got error %v, want %q", tt.env, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Temporality(sdkmetric.InstrumentKindHistogram); got != tt.histogram {
			t.Errorf("%v: histogram temporality: got %v, want %v", tt.env, got, tt.histogram)
		}
		if got := e.Temporality(sdkmetric.InstrumentKindUpDownCounter); got != tt.upDown {
			t.Errorf("%v: up-down counter temporality: got %v, want %v", tt.env, got, tt.upDown)
		}
		if _, got := e.Aggregation(sdkmetric.InstrumentKindHistogram).(sdkmetric.AggregationBase2ExponentialHistogram); got != tt.exp {
			t.Errorf("%v: exponential histogram: got %v, want %v", tt.env, got, tt.exp)
		}
	}
}
