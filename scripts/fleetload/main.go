// Command fleetload measures how many tool calls per second an MCP
// streamable HTTP endpoint serves: N sessions (protocol 2025-11-25), each
// making sequential tools/call of calculator for a given time, over plain
// net/http. It prints calls/s, the median and 99th percentile latency, and
// the errors (an HTTP or JSON-RPC error, an error result, a wrong answer).
//
//	go run ./scripts/fleetload -url http://127.0.0.1:8080/mcp -sessions 16 -duration 10s
//
// scripts/fleet-demo.sh bench runs it against nginx in front of one, two
// and three replicas.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/mcp", "the MCP endpoint")
	sessions := flag.Int("sessions", 16, "sessions, each making one call at a time")
	duration := flag.Duration("duration", 10*time.Second, "how long to make calls")
	flag.Parse()
	if *sessions < 1 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "fleetload: -sessions must be at least 1 and -duration positive")
		os.Exit(2)
	}
	r, err := run(context.Background(), *url, *sessions, *duration)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetload:", err)
		os.Exit(1)
	}
	fmt.Println(r)
	if r.errors > 0 {
		fmt.Fprintln(os.Stderr, "fleetload: first error:", r.firstErr)
		os.Exit(1)
	}
}

// report is what a run measured.
type report struct {
	sessions  int
	elapsed   time.Duration
	latencies []time.Duration // of the calls that succeeded
	errors    int
	firstErr  error
}

func (r report) String() string {
	slices.Sort(r.latencies)
	return fmt.Sprintf("sessions=%d calls=%d calls/s=%.0f p50=%v p99=%v errors=%d",
		r.sessions, len(r.latencies), float64(len(r.latencies))/r.elapsed.Seconds(),
		percentile(r.latencies, 0.50), percentile(r.latencies, 0.99), r.errors)
}

// percentile returns the p-th percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)].Round(10 * time.Microsecond)
}

// run opens the sessions, then makes calls in each until duration has
// passed. Opening the sessions is not measured.
func run(ctx context.Context, url string, sessions int, duration time.Duration) (report, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sessions}, Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	conns := make([]*conn, sessions)
	for i := range conns {
		conns[i] = &conn{hc: hc, url: url}
		if err := conns[i].initialize(ctx); err != nil {
			return report{}, fmt.Errorf("session %d: %w", i, err)
		}
	}
	var (
		mu sync.Mutex
		r  = report{sessions: sessions}
		wg sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(duration)
	for i, c := range conns {
		wg.Go(func() {
			var lat []time.Duration
			var errs int
			var first error
			for n := 0; time.Now().Before(deadline); n++ {
				t := time.Now()
				if err := c.calculate(ctx, i, n); err != nil {
					errs++
					if first == nil {
						first = err
					}
					continue
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			defer mu.Unlock()
			r.latencies = append(r.latencies, lat...)
			r.errors += errs
			if r.firstErr == nil {
				r.firstErr = first
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	for _, c := range conns {
		c.end(ctx)
	}
	return r, nil
}

// conn is one session over plain net/http.
type conn struct {
	hc      *http.Client
	url     string
	session string
	id      int
}

// protocol is the version the sessions speak.
const protocol = "2025-11-25"

// post sends one JSON-RPC message and returns the response's result (nil
// for a notification's 202).
func (c *conn) post(ctx context.Context, method string, params any, notify bool) (json.RawMessage, http.Header, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if !notify {
		c.id++
		msg["id"] = c.id
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", protocol)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if notify {
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusAccepted {
			return nil, nil, fmt.Errorf("%s: HTTP %d, want 202", method, resp.StatusCode)
		}
		return nil, resp.Header, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, strings.Join(strings.Fields(string(b)), " "))
	}
	data, err := message(resp)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	if m.Error != nil {
		return nil, nil, fmt.Errorf("%s: %s", method, m.Error.Message)
	}
	return m.Result, resp.Header, nil
}

// message returns the response's JSON-RPC response: the body, or the
// last data of an SSE stream (a calculator call sends nothing before it).
func message(resp *http.Response) ([]byte, error) {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return io.ReadAll(resp.Body)
	}
	var last []byte
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			last = bytes.Clone(bytes.TrimSpace(d))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if last == nil {
		return nil, errors.New("an SSE stream without data")
	}
	return last, nil
}

// initialize opens the session.
func (c *conn) initialize(ctx context.Context) error {
	_, h, err := c.post(ctx, "initialize", map[string]any{"protocolVersion": protocol, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "fleetload", "version": "1"}}, false)
	if err != nil {
		return err
	}
	if c.session = h.Get("Mcp-Session-Id"); c.session == "" {
		return errors.New("initialize: no Mcp-Session-Id header")
	}
	_, _, err = c.post(ctx, "notifications/initialized", nil, true)
	return err
}

// calculate calls calculator with a*b+1 and checks the answer.
func (c *conn) calculate(ctx context.Context, a, b int) error {
	res, _, err := c.post(ctx, "tools/call", map[string]any{"name": "calculator",
		"arguments": map[string]any{"input": fmt.Sprintf("%d*%d+1", a, b)}}, false)
	if err != nil {
		return err
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	want := strconv.Itoa(a*b + 1)
	if r.IsError || len(r.Content) != 1 || r.Content[0].Text != want {
		return fmt.Errorf("calculator %d*%d+1: got %s, want %s", a, b, res, want)
	}
	return nil
}

// end closes the session (DELETE), best effort.
func (c *conn) end(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", protocol)
	if resp, err := c.hc.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
