package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxResponseBytes caps the part of a collector's answer that is read.
const maxResponseBytes = 64 << 10

// userAgent names this exporter to collectors.
const userAgent = "mcp-tools OTLP exporter"

// retryPolicy spaces the retries of one export: exponential from initial
// to max, randomised by ±50%, none after maxElapsed (and none past the
// export's timeout). The defaults are OpenTelemetry Go's exporters'.
type retryPolicy struct {
	initial, max, maxElapsed time.Duration
}

var defaultRetry = retryPolicy{initial: 5 * time.Second, max: 30 * time.Second, maxElapsed: time.Minute}

// client sends one signal's encoded export requests.
type client struct {
	s      Settings
	url    string
	grpc   bool
	hc     *http.Client
	retry  retryPolicy
	stop   context.Context // done when the exporter shuts down
	cancel context.CancelFunc
}

// newClient makes a client for s; grpcMethod is the gRPC service
// method's path, used when s.Protocol is GRPC.
func newClient(s Settings, grpcMethod string) *client {
	tr := &http.Transport{
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	if s.TLS != nil {
		tr.TLSClientConfig = s.TLS.Clone()
	}
	c := &client{s: s, url: s.URL.String(), hc: &http.Client{Transport: tr}, retry: defaultRetry}
	if s.Protocol == GRPC {
		// gRPC is HTTP/2 only: with TLS as negotiated, without it with
		// prior knowledge (h2c), as gRPC clients do.
		c.grpc, c.url = true, strings.TrimSuffix(c.url, "/")+grpcMethod
		tr.Protocols = new(http.Protocols)
		if s.URL.Scheme == "https" {
			tr.Protocols.SetHTTP2(true)
		} else {
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
	} else {
		tr.Proxy = http.ProxyFromEnvironment
	}
	c.stop, c.cancel = context.WithCancel(context.Background())
	return c
}

// shutdown ends exports under way and closes idle connections.
func (c *client) shutdown() {
	c.cancel()
	c.hc.CloseIdleConnections()
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
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	stop := context.AfterFunc(c.stop, cancel)
	defer stop()
	payload, err := c.encode(msg)
	if err != nil {
		return err
	}
	start, delay := time.Now(), c.retry.initial
	for {
		err := c.send(ctx, payload)
		var r *retryable
		if err == nil || !errors.As(err, &r) {
			return err
		}
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
		delay = min(2*delay, c.retry.max)
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
	for k, v := range c.s.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", userAgent)
	if c.grpc {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
		if c.s.Gzip {
			req.Header.Set("Grpc-Encoding", "gzip")
		}
		if d, ok := ctx.Deadline(); ok {
			req.Header.Set("Grpc-Timeout", strconv.FormatInt(max(time.Until(d).Milliseconds(), 1), 10)+"m")
		}
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		if c.s.Gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &retryable{err: err} // the collector may be restarting
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes)) // let the connection be reused
	if err != nil {
		return &retryable{err: fmt.Errorf("reading the collector's answer: %w", err)}
	}
	if c.grpc {
		return grpcResult(resp, body)
	}
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

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
