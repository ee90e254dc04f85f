package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxResponseBytes caps the part of a collector's answer that is read.
const maxResponseBytes = 64 << 10

// userAgent names this exporter to collectors.
const userAgent = "mcp-tools OTLP exporter"

// retryPolicy spaces the retries of one export: from initial, growing
// 1.5 times each time up to max, randomised by ±50%, none after maxElapsed
// (and none past the export's timeout). The defaults are OpenTelemetry
// Go's exporters'.
type retryPolicy struct {
	initial, max, maxElapsed time.Duration
}

var defaultRetry = retryPolicy{initial: 5 * time.Second, max: 30 * time.Second, maxElapsed: time.Minute}

// client sends one signal's encoded export requests.
type client struct {
	s       Settings
	url     string
	grpc    bool
	hc      *http.Client
	retry   retryPolicy
	stop    context.Context // done when the exporter shuts down
	cancel  context.CancelFunc
	mu      sync.Mutex
	stopped bool                  // under mu: no export starts
	conns   map[net.Conn]struct{} // under mu: open connections
	wg      sync.WaitGroup        // exports under way
}

// newClient makes a client for s; grpcMethod is the gRPC service
// method's path, used when s.Protocol is GRPC.
func newClient(s Settings, grpcMethod string) *client {
	c := &client{s: s, url: s.URL.String(), retry: defaultRetry, conns: map[net.Conn]struct{}{}}
	tr := &http.Transport{
		DialContext:         c.dial,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	if s.TLS != nil {
		tr.TLSClientConfig = s.TLS.Clone()
	}
	c.hc = &http.Client{
		Transport: tr,
		// A redirect would carry the headers (API keys) to another
		// host, and turn the POST into a GET: it is an error instead.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if s.Protocol == GRPC {
		// gRPC is HTTP/2 only: with TLS as negotiated, without it with
		// prior knowledge (h2c), as gRPC clients do.
		c.grpc, c.url = true, strings.TrimSuffix(c.url, "/")+grpcMethod
		tr.Protocols = new(http.Protocols)
		if s.URL.Scheme == "https" {
			tr.Protocols.SetHTTP2(true)
			tr.Proxy = http.ProxyFromEnvironment // a CONNECT tunnel, as grpc-go does
		} else {
			tr.Protocols.SetUnencryptedHTTP2(true) // no proxy: h2c cannot go through one
		}
	} else {
		tr.Proxy = http.ProxyFromEnvironment
	}
	c.stop, c.cancel = context.WithCancel(context.Background())
	return c
}

// dialer makes the client's connections.
var dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// dial opens a connection and keeps it in c.conns until it closes, so
// that shutdown can close it: an HTTP/2 connection whose last stream was
// cancelled is not idle yet when the export returns.
func (c *client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		conn.Close()
		return nil, errStopped
	}
	t := &trackedConn{Conn: conn, c: c}
	c.conns[t] = struct{}{}
	return t, nil
}

// trackedConn leaves its client's set when it closes.
type trackedConn struct {
	net.Conn
	c    *client
	once sync.Once
}

// Close closes the connection and forgets it.
func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.c.mu.Lock()
		delete(t.c.conns, t)
		t.c.mu.Unlock()
	})
	return t.Conn.Close()
}

// shutdown ends exports under way, waits for them (until ctx is done)
// and closes the connections.
func (c *client) shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.cancel()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.hc.CloseIdleConnections()
	c.mu.Lock()
	open := make([]net.Conn, 0, len(c.conns))
	for conn := range c.conns {
		open = append(open, conn)
	}
	c.mu.Unlock()
	for _, conn := range open {
		conn.Close()
	}
	return err
}

// retryable is an error worth another attempt, after at least after.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// export sends msg, an encoded Export*ServiceRequest, retrying as the
// policy says within the export's timeout.
func (c *client) export(ctx context.Context, msg []byte) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return errStopped
	}
	c.wg.Add(1)
	c.mu.Unlock()
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	stop := context.AfterFunc(c.stop, cancel)
	defer stop()
	payload, err := c.encode(msg)
	if err != nil {
		return err
	}
	start, delay := time.Now(), c.retry.initial
	var last error // the previous attempt's
	for {
		err := c.send(ctx, payload)
		var r *retryable
		if err == nil || !errors.As(err, &r) {
			if err != nil && last != nil && ctx.Err() != nil {
				return fmt.Errorf("%w (the attempt before: %v)", err, last)
			}
			return err
		}
		last = r.err
		wait := max(delay/2+rand.N(delay+1), r.after)
		deadline, _ := ctx.Deadline()
		if time.Since(start)+wait > c.retry.maxElapsed || time.Now().Add(wait).After(deadline) {
			return r.err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return r.err
		case <-t.C:
		}
		delay = min(delay*3/2, c.retry.max)
	}
}

// encode compresses msg when asked and frames it for gRPC.
func (c *client) encode(msg []byte) ([]byte, error) {
	var b bytes.Buffer
	if c.grpc {
		b.Write(make([]byte, 5)) // compressed flag and length, below
	}
	if c.s.Gzip {
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write(msg); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
	} else {
		b.Write(msg)
	}
	out := b.Bytes()
	if c.grpc {
		if c.s.Gzip {
			out[0] = 1
		}
		n := len(out) - 5
		out[1], out[2], out[3], out[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	}
	return out, nil
}

// send makes one attempt.
func (c *client) send(ctx context.Context, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", userAgent) // before the user's headers: theirs win
	for k, v := range c.s.Headers {
		req.Header.Set(k, v)
	}
	if c.grpc {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
		if c.s.Gzip {
			req.Header.Set("Grpc-Encoding", "gzip")
		}
		if d, ok := ctx.Deadline(); ok {
			req.Header.Set("Grpc-Timeout", grpcTimeout(time.Until(d)))
		}
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		if c.s.Gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil || permanent(err) {
			return err
		}
		return &retryable{err: err} // the collector may be restarting
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes)) // let the connection be reused
	if c.grpc {
		if err != nil { // the status comes after the body
			return &retryable{err: fmt.Errorf("reading the collector's answer: %w", err)}
		}
		return grpcResult(resp, body)
	}
	// Over HTTP the status line decides, whatever became of the body: an
	// export the collector took is not sent again.
	return httpResult(resp, body)
}

// httpResult reads an OTLP/HTTP answer.
func httpResult(resp *http.Response, body []byte) error {
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return partialSuccess(body)
	case code == http.StatusTooManyRequests || code == http.StatusBadGateway ||
		code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		return &retryable{err: fmt.Errorf("collector answered %s%s", resp.Status, statusMessage(body)), after: retryAfter(resp.Header)}
	default:
		return fmt.Errorf("collector answered %s%s", resp.Status, statusMessage(body))
	}
}

// permanent reports whether a transport error would recur on a retry: a
// certificate that does not verify, a TLS handshake with a server that
// does not speak TLS (net/http turns the RecordHeaderError of one that
// answers in plain HTTP into ErrSchemeMismatch).
func permanent(err error) bool {
	if errors.Is(err, http.ErrSchemeMismatch) {
		return true
	}
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &unknownCA) ||
		errors.As(err, &hostname) || errors.As(err, &invalid)
}

// grpcTimeout encodes d as a grpc-timeout value: at most 8 digits, in the
// finest unit that fits.
func grpcTimeout(d time.Duration) string {
	d = max(d, time.Millisecond)
	for _, u := range []struct {
		unit string
		size time.Duration
	}{{"m", time.Millisecond}, {"S", time.Second}, {"M", time.Minute}, {"H", time.Hour}} {
		if n := d / u.size; n < 1e8 {
			return strconv.FormatInt(int64(n), 10) + u.unit
		}
	}
	return "99999999H"
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	// A number past int64 is its largest (ErrRange), and one past a
	// Duration the longest wait: never one wrapped round to a short or
	// negative wait.
	if s, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if s < 0 {
			return 0
		}
		if s > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
