package otlp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
)

func TestRedirectIsAnError(t *testing.T) {
	other := newHTTPCollector(t, nil)
	c := newHTTPCollector(t, func(_ int, w http.ResponseWriter) {
		w.Header().Set("Location", other.URL+"/v1/traces")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL, "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s3cret"}, "TRACES", "/v1/traces"))
	err := exp.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "307") {
		t.Fatalf("got error %v, want the 307 as an error", err)
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the redirect's target got %d requests (and the API key): want none", n)
	}
}

func TestUserAgentIsTheUsers(t *testing.T) {
	c := newHTTPCollector(t, nil)
	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}, "TRACES", "/v1/traces"))
	exp2 := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL, "OTEL_EXPORTER_OTLP_HEADERS": "User-Agent=mine"}, "TRACES", "/v1/traces"))
	for _, e := range []sdktrace.SpanExporter{exp, exp2} {
		if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
			t.Fatal(err)
		}
	}
	got := c.requests()
	if got[0].header.Get("User-Agent") != userAgent || got[1].header.Get("User-Agent") != "mine" {
		t.Errorf("User-Agent: got %q and %q, want %q and \"mine\"", got[0].header.Get("User-Agent"), got[1].header.Get("User-Agent"), userAgent)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	c := newHTTPCollector(t, func(n int, w http.ResponseWriter) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}, "TRACES", "/v1/traces"))
	if err := exp.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 2 {
		t.Fatalf("got %d requests, want 2", len(at))
	}
	// A lower bound only: the retry waited at least what the collector
	// asked (the policy's own delay here is 10-20 ms).
	if d := at[1].Sub(at[0]); d < 900*time.Millisecond {
		t.Errorf("the retry came %v after a Retry-After of 1 s", d)
	}
}

// TestRetryAfterParsing: seconds or an HTTP date; a number of seconds too
// large for a time.Duration is the longest wait, never a wrapped one.
func TestRetryAfterParsing(t *testing.T) {
	for _, tt := range []struct {
		value string
		min   time.Duration // at least
		max   time.Duration // at most
	}{
		{"", 0, 0}, {"0", 0, 0}, {"-5", 0, 0}, {"soon", 0, 0},
		{"120", 2 * time.Minute, 2 * time.Minute},
		{"9223372036", 9223372036 * time.Second, 9223372036 * time.Second},
		{"9223372037", math.MaxInt64, math.MaxInt64},
		{"10000000000", math.MaxInt64, math.MaxInt64},
		{"99999999999999999999", math.MaxInt64, math.MaxInt64},
		{"Mon, 02 Jan 2006 15:04:05 GMT", 0, 0},
		{time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), 50 * time.Minute, time.Hour},
	} {
		got := retryAfter(http.Header{"Retry-After": {tt.value}})
		if got < tt.min || got > tt.max {
			t.Errorf("Retry-After %q: got %v, want from %v to %v", tt.value, got, tt.min, tt.max)
		}
	}
}

// TestRetryDelayParsing: a RetryInfo's delay as a Duration, the longest
// one when it is past a Duration's range; none when it is negative or
// malformed.
func TestRetryDelayParsing(t *testing.T) {
	details := func(d *durationpb.Duration) string {
		st, err := status.New(grpccodes.Unavailable, "x").WithDetails(&errdetails.RetryInfo{RetryDelay: d})
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(st.Proto())
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	for _, tt := range []struct {
		d    *durationpb.Duration
		want time.Duration
	}{
		{durationpb.New(1500 * time.Millisecond), 1500 * time.Millisecond},
		{durationpb.New(2 * time.Hour), 2 * time.Hour},
		{&durationpb.Duration{Seconds: 9223372035, Nanos: 999999999}, 9223372035*time.Second + 999999999},
		{&durationpb.Duration{Seconds: 9223372036, Nanos: 999999999}, math.MaxInt64},
		{&durationpb.Duration{Seconds: math.MaxInt64}, math.MaxInt64},
		{&durationpb.Duration{Seconds: -5}, 0},
		{&durationpb.Duration{Seconds: 1, Nanos: -1}, 0},
	} {
		if got, ok := retryDelay(details(tt.d)); got != tt.want || !ok {
			t.Errorf("RetryInfo of %v: got %v (found: %v), want %v", tt.d, got, ok, tt.want)
		}
	}
}

// TestHugeRetryAfterIsNotRetried: a collector asking to wait longer than
// the export may take gets no retry, however large its number.
func TestHugeRetryAfterIsNotRetried(t *testing.T) {
	c := newHTTPCollector(t, func(_ int, w http.ResponseWriter) {
		w.Header().Set("Retry-After", "10000000000")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}, "TRACES", "/v1/traces"))
	if err := exp.ExportSpans(context.Background(), testSpans()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("got error %v, want the 503", err)
	}
	if n := len(c.requests()); n != 1 {
		t.Errorf("got %d requests, want 1: the collector asked to wait for centuries", n)
	}
}

func TestCertificateErrorIsNotRetried(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake
	srv.StartTLS()
	defer srv.Close()
	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}, "TRACES", "/v1/traces"))
	err := exp.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("got error %v, want a certificate error", err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("got %d connections, want 1: a certificate that does not verify will not on a retry", n)
	}
}

// TestAcceptedExportIsNotResent: a collector that accepted an export (200)
// and lost the connection in its answer's body gets the export once: the
// status says it was taken, and a retry would duplicate the spans.
func TestAcceptedExportIsNotResent(t *testing.T) {
	c := newHTTPCollector(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte{0x0a})
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection drops
		}
	})
	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}, "TRACES", "/v1/traces"))
	_ = exp.ExportSpans(context.Background(), testSpans())
	if n := len(c.requests()); n != 1 {
		t.Errorf("got %d requests, want 1: the first was accepted", n)
	}
}

// TestPlainHTTPServerIsNotRetried: an https endpoint whose server speaks
// plain HTTP fails at once (net/http reports it as ErrSchemeMismatch, no
// longer a tls.RecordHeaderError): the server will not learn TLS on a
// retry.
func TestPlainHTTPServerIsNotRetried(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": strings.Replace(srv.URL, "http://", "https://", 1)}, "TRACES", "/v1/traces"))
	err := exp.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "HTTP response to HTTPS client") {
		t.Fatalf("got error %v, want the scheme mismatch", err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("got %d connections, want 1", n)
	}
}

// deadlineCollector records the deadline of each export it takes.
type deadlineCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	left chan time.Duration
}

func (d *deadlineCollector) Export(ctx context.Context, _ *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		d.left <- -1
	} else {
		d.left <- time.Until(dl)
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func TestGRPCTimeoutReachesTheServer(t *testing.T) {
	d := &deadlineCollector{left: make(chan time.Duration, 1)}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	exp := newTraceExporter(t, settings(t, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String(),
		"OTEL_EXPORTER_OTLP_TIMEOUT": "7000"}, "TRACES", "/v1/traces"))
	if err := exp.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Fatal(err)
	}
	if left := <-d.left; left <= 0 || left > 7*time.Second {
		t.Errorf("the server saw %v left, want a deadline within the 7 s timeout", left)
	}
}

func TestGRPCTimeoutEncoding(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "1m"}, {-time.Second, "1m"}, {1500 * time.Millisecond, "1500m"},
		{99999999 * time.Millisecond, "99999999m"}, {100000000 * time.Millisecond, "100000S"},
		{maxTimeout, "86400000m"}, {200000000 * time.Second, "3333333M"},
	} {
		if got := grpcTimeout(tt.d); got != tt.want {
			t.Errorf("grpcTimeout(%v): got %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestGRPCMutualTLS(t *testing.T) {
	cert, key := selfSigned(t)
	pemBytes, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemBytes)
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	g := &grpcCollector{}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})))
	coltracepb.RegisterTraceServiceServer(srv, g)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	base := map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": ln.Addr().String(),
		"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_TIMEOUT": "2000"}
	exp := newTraceExporter(t, settings(t, base, "TRACES", "/v1/traces"))
	if err := exp.ExportSpans(context.Background(), testSpans()); err == nil {
		t.Fatal("an export without a client certificate succeeded")
	}
	base["OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"], base["OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY"] = cert, key
	exp = newTraceExporter(t, settings(t, base, "TRACES", "/v1/traces"))
	if err := exp.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.traces) != 1 {
		t.Errorf("got %d exports, want 1", len(g.traces))
	}
}

// TestGRPCResultMalformed: what a faulty collector sends is never a panic.
func TestGRPCResultMalformed(t *testing.T) {
	ok := http.Header{"Grpc-Status": {"0"}}
	for _, tt := range []struct {
		name    string
		trailer http.Header
		header  http.Header
		body    []byte
		err     string
	}{
		{"length past the body (and past 2^31)", ok, nil, []byte{0, 0x80, 0, 0, 5, 1}, ""},
		{"short frame", ok, nil, []byte{0, 0, 0}, ""},
		{"compressed, no encoding named", ok, nil, []byte{1, 0, 0, 0, 1, 0xff}, ""},
		{"compressed, not gzip", ok, http.Header{"Grpc-Encoding": {"gzip"}}, []byte{1, 0, 0, 0, 1, 0xff}, ""},
		{"garbage message", ok, nil, []byte{0, 0, 0, 0, 3, 0x0a, 0xff, 0xff}, ""},
		{"no status", http.Header{}, nil, nil, "no grpc-status"},
		{"bad percent-encoding shows the raw message", http.Header{"Grpc-Status": {"3"}, "Grpc-Message": {"bad%zz\nspan"}}, nil, nil, `"bad%zz\nspan"`},
		{"trailers-only", nil, http.Header{"Grpc-Status": {"14"}, "Grpc-Message": {"down"}}, nil, `UNAVAILABLE): "down"`},
		{"garbage details", http.Header{"Grpc-Status": {"8"}, "Grpc-Status-Details-Bin": {"!!!"}}, nil, nil, "RESOURCE_EXHAUSTED"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.header
			if h == nil {
				h = http.Header{}
			}
			err := grpcResult(&http.Response{StatusCode: 200, Header: h, Trailer: tt.trailer}, tt.body)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("got %v, want %q", err, tt.err)
			}
		})
	}
}

// TestShutdownClosesConnections: an export that Shutdown cancels leaves no
// HTTP/2 connection (and its reading goroutine) behind.
func TestShutdownClosesConnections(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 1)
	g := &grpcCollector{fail: func(int) error { arrived <- struct{}{}; <-release; return nil }}
	c := newClient(settings(t, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + serveGRPC(t, g, "", "")}, "TRACES", "/v1/traces"), traceMethod)
	done := make(chan error, 1)
	go func() { done <- c.export(context.Background(), nil) }()
	<-arrived // the export is under way
	if err := c.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Error("the export Shutdown ended succeeded")
	}
	readLoops := func() int {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		n := 0
		for _, st := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(st, "http2ClientConn).readLoop") || strings.Contains(st, "http2clientConnReadLoop") {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(5 * time.Second); readLoops() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d HTTP/2 connections outlive Stop", readLoops())
		}
	}
	if err := c.export(context.Background(), nil); err == nil {
		t.Error("an export after Stop succeeded")
	}
}
