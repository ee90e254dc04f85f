package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/internal/testredis"
)

// fleetBudget is every replica's --max-calls-per-session: the subtests
// account for it (no session of theirs makes more calls, but the budget
// test's).
const fleetBudget = 20

// fleetStateKey signs approval states; every replica has the same.
const fleetStateKey = "fleet-test-state-key-0123456789abcdef"

// fleet is three replicas of the binary sharing a redis-server, behind
// nginx.
type fleet struct {
	hc       *http.Client
	redis    *testredis.Server
	replicas []*replica
	nginx    *proxy
}

// conn returns a client whose requests go through nginx.
func (f *fleet) conn() *mcpConn { return &mcpConn{hc: f.hc, url: f.nginx.url()} }

// TestFleet runs the deployment service mode is for: three replicas of
// `mcp-tools serve --transport http --state redis://...` behind nginx
// (round robin, no stickiness), with a real redis-server, and real HTTP
// clients that send every request of a session wherever nginx puts it.
// Every replica has calculator and echo, echo gated (--require-approval),
// and a budget of fleetBudget calls per session.
func TestFleet(t *testing.T) {
	nginxBin := requireFleetServers(t)
	f := startFleet(t, nginxBin)
	t.Run("sessions spread over the replicas", f.testSessions)
	t.Run("legacy approval answered on any replica", f.testLegacyApproval)
	t.Run("delete ends the session on every replica", f.testDelete)
	t.Run("budget is one across replicas", f.testBudget)
	t.Run("sessionless approval retried on another replica", f.testModernApproval)
	t.Run("replica killed and restarted", f.testKill)
	t.Run("redis stopped and restarted", f.testRedisDown)
}

// startFleet starts redis-server, three replicas and nginx; everything is
// stopped when the test ends, and the replicas' and nginx's logs are
// printed when it failed.
func startFleet(t *testing.T, nginxBin string) *fleet {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	f := &fleet{hc: &http.Client{Transport: tr}, redis: testredis.Start(t)}
	dir := t.TempDir()
	args := []string{
		"--state", f.redis.URL(),
		"--builtins", "calculator,echo",
		"--require-approval", "echo",
		"--max-calls-per-session", fmt.Sprint(fleetBudget),
		"--approval-timeout", "60s",
		"--shutdown-grace", "1s",
	}
	env := []string{"MCP_TOOLS_STATE_KEY=" + fleetStateKey}
	f.launch(t, nginxBin, dir, args, env)
	return f
}

// testSessions: 2025-11-25 sessions opened and used through nginx; 300
// calls of calculator in all, every result right, and each replica's own
// /metrics shows it served some of them.
func (f *fleet) testSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	before := f.served(t, ctx)
	const sessions, calls = 15, fleetBudget // 300 calls
	var wg sync.WaitGroup
	sem := make(chan struct{}, 5)
	for s := range sessions {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c := f.conn()
			if err := c.initialize(ctx, nil); err != nil {
				t.Errorf("session %d: %v", s, err)
				return
			}
			raw, err := c.request(ctx, "", "tools/list", map[string]any{}, nil)
			if err != nil {
				t.Errorf("session %d: tools/list: %v", s, err)
				return
			}
			if got := toolNames(raw); !slices.Equal(got, []string{"calculator", "echo"}) {
				t.Errorf("session %d: tools/list: got %v, want [calculator echo]", s, got)
			}
			for i := range calls {
				if err := c.calculate(ctx, "", s, i, 1); err != nil {
					t.Errorf("session %d, call %d: %v", s, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// The counters are bumped as each call ends; give the last a moment.
	var after []float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		after = f.served(t, ctx)
		if sum(after)-sum(before) >= sessions*calls || time.Now().After(deadline) {
			break
		}
	}
	if got, want := sum(after)-sum(before), float64(sessions*calls); got != want {
		t.Errorf("calls served by the replicas together: got %v, want %v", got, want)
	}
	for i, r := range f.replicas {
		n := after[i] - before[i]
		t.Logf("%s served %v calls", r.name, n)
		if n == 0 {
			t.Errorf("%s served no call: nginx did not spread them", r.name)
		}
	}
}

// served returns each replica's count of calculator calls that succeeded,
// from its own /metrics.
func (f *fleet) served(t *testing.T, ctx context.Context) []float64 {
	t.Helper()
	var out []float64
	for _, r := range f.replicas {
		n, err := callsServed(ctx, f.hc, r.base(), "calculator", "ok")
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		out = append(out, n)
	}
	return out
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// toolNames returns the sorted names of a tools/list result.
func toolNames(raw json.RawMessage) []string {
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(raw, &list)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// testLegacyApproval: a gated call of a 2025-11-25 session asks its
// question on the SSE stream of its POST; the answer, a POST of its own,
// is taken wherever it lands (through nginx, or directly on a replica that
// is not the one running the call), and the call's result then arrives on
// the stream. "Remember" holds on every replica; a new session is asked
// again.
func (f *fleet) testLegacyApproval(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	elicit := map[string]any{"elicitation": map[string]any{}}
	c := f.conn()
	if err := c.initialize(ctx, elicit); err != nil {
		t.Fatal(err)
	}
	nginx, r0, r1, r2 := "", f.replicas[0].url(), f.replicas[1].url(), f.replicas[2].url()
	steps := []struct {
		name             string
		callAt, answerAt string
		remember         bool
	}{
		{"call and answer through nginx", nginx, nginx, false},
		{"call through nginx, answer on replica2", nginx, r2, false},
		{"call on replica0, answer on replica1, remembered", r0, r1, true},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			text := "approved: " + st.name
			r, id, q, err := c.startGatedCall(ctx, st.callAt, "echo", map[string]any{"text": text})
			if err != nil {
				t.Fatal(err)
			}
			for _, field := range []string{"text", "remember"} {
				if _, ok := q.Params.RequestedSchema.Properties[field]; !ok {
					r.close()
					t.Fatalf("the form has no %q field: %s", field, q.Params.Message)
				}
			}
			status, err := c.answer(ctx, st.answerAt, q.ID, map[string]any{"action": "accept",
				"content": map[string]any{"text": text, "remember": st.remember}})
			if err != nil || status != http.StatusAccepted {
				r.close()
				t.Fatalf("answer: got HTTP %d (%v), want 202 at the first replica asked", status, err)
			}
			res, err := finish(r, id)
			if err != nil {
				t.Fatalf("after the answer: %v", err)
			}
			if res.IsError || res.text() != text {
				t.Errorf("approved call: got %q (isError %v), want %q", res.text(), res.IsError, text)
			}
		})
	}
	t.Run("remembered on every replica", func(t *testing.T) {
		for _, r := range f.replicas {
			text := "no question on " + r.name
			res, err := c.call(ctx, r.url(), "echo", map[string]any{"text": text})
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			if res.IsError || res.text() != text {
				t.Errorf("%s: got %q (isError %v), want %q", r.name, res.text(), res.IsError, text)
			}
		}
	})
	t.Run("another session is asked", func(t *testing.T) {
		other := f.conn()
		if err := other.initialize(ctx, elicit); err != nil {
			t.Fatal(err)
		}
		r, id, q, err := other.startGatedCall(ctx, r1, "echo", map[string]any{"text": "declined"})
		if err != nil {
			t.Fatalf("another session was not asked: %v", err)
		}
		if status, err := other.answer(ctx, r0, q.ID, map[string]any{"action": "decline"}); err != nil || status != http.StatusAccepted {
			r.close()
			t.Fatalf("decline: got HTTP %d (%v), want 202", status, err)
		}
		res, err := finish(r, id)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || res.kind() != "approval_denied" {
			t.Errorf("declined call: got %q (isError %v, kind %q), want an approval_denied error", res.text(), res.IsError, res.kind())
		}
	})
}

// testDelete: a session used on every replica, ended with DELETE through
// nginx, is unknown (404) on each replica.
func (f *fleet) testDelete(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := f.conn()
	if err := c.initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i, r := range f.replicas {
		if err := c.calculate(ctx, r.url(), i, 2, 3); err != nil {
			t.Fatalf("%s, before DELETE: %v", r.name, err)
		}
	}
	if status, err := c.end(ctx, ""); err != nil || status != http.StatusOK {
		t.Fatalf("DELETE through nginx: got HTTP %d (%v), want 200", status, err)
	}
	for i, r := range f.replicas {
		err := c.calculate(ctx, r.url(), i, 2, 3)
		if !isStatus(err, http.StatusNotFound) {
			t.Errorf("%s, after DELETE: got %v, want HTTP 404", r.name, err)
		}
	}
	if status, err := c.end(ctx, ""); err != nil || status != http.StatusNotFound {
		t.Errorf("DELETE again: got HTTP %d (%v), want 404", status, err)
	}
}

// testBudget: a session's budget is counted once for the fleet: of 25
// calls spread by nginx, the first fleetBudget succeed and the rest are
// refused as budget_exhausted.
func (f *fleet) testBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := f.conn()
	if err := c.initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ok, exhausted := 0, 0
	for i := range fleetBudget + 5 {
		res, err := c.call(ctx, "", "calculator", map[string]any{"input": fmt.Sprintf("%d+1", i)})
		switch {
		case err != nil:
			t.Fatalf("call %d: %v", i, err)
		case !res.IsError && res.text() == fmt.Sprint(i+1):
			ok++
			if i >= fleetBudget {
				t.Errorf("call %d succeeded past the budget of %d", i, fleetBudget)
			}
		case res.IsError && res.kind() == "budget_exhausted":
			exhausted++
		default:
			t.Errorf("call %d: got %q (isError %v, kind %q)", i, res.text(), res.IsError, res.kind())
		}
	}
	if ok != fleetBudget || exhausted != 5 {
		t.Errorf("got %d calls served and %d refused, want %d and 5", ok, exhausted, fleetBudget)
	}
}

// testModernApproval: a 2026-07-28 client (no session) is answered
// input_required by one replica; its retry, with the requestState and its
// answer, runs the tool on another; the same retry on a third is refused:
// the state was already used.
func (f *fleet) testModernApproval(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	args := map[string]any{"text": "sessionless"}
	first, err := modernCall(ctx, f.hc, f.replicas[0].url(), map[string]any{"name": "echo", "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	if first.ResultType != "input_required" || first.RequestState == "" || len(first.InputRequests) == 0 {
		t.Fatalf("first leg on replica0: got %+v, want input_required with a requestState and input requests", first)
	}
	answers := map[string]any{}
	for key := range first.InputRequests {
		answers[key] = map[string]any{"action": "accept"}
	}
	retry := func() map[string]any {
		return map[string]any{"name": "echo", "arguments": args, "requestState": first.RequestState, "inputResponses": answers}
	}
	res, err := modernCall(ctx, f.hc, f.replicas[1].url(), retry())
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.text() != "sessionless" {
		t.Errorf("retry on replica1: got %q (isError %v, kind %q), want %q", res.text(), res.IsError, res.kind(), "sessionless")
	}
	res, err = modernCall(ctx, f.hc, f.replicas[2].url(), retry())
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.kind() != "approval_denied" || !strings.Contains(res.text(), "already used") {
		t.Errorf("the same retry on replica2: got %q (isError %v, kind %q), want approval_denied saying the state was already used",
			res.text(), res.IsError, res.kind())
	}
}

// fleetOp is one request of testKill's clients.
type fleetOp struct {
	client     int
	what       string
	start, end time.Time
	err        error
}

// testKill: replica1 dies (SIGKILL) while four clients call through nginx.
// Only requests in flight on it may fail (a POST already sent is not
// retried: 502); every request made after its death succeeds. Restarted
// on its port, it serves a session opened before.
func (f *fleet) testKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	victim := f.replicas[1]
	old := f.conn()
	if err := old.initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := old.calculate(ctx, victim.url(), 6, 7, 0); err != nil {
		t.Fatalf("%s before the kill: %v", victim.name, err)
	}

	var (
		mu  sync.Mutex
		ops []fleetOp
		wg  sync.WaitGroup
	)
	stop := make(chan struct{})
	for g := range 4 {
		wg.Go(func() {
			c := f.conn()
			calls := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				op := fleetOp{client: g, start: time.Now()}
				rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
				// A new session before the budget runs out.
				if c.session == "" || calls == fleetBudget-5 {
					op.what, calls = "initialize", 0
					op.err = c.initialize(rctx, nil)
				} else {
					op.what = "tools/call"
					op.err = c.calculate(rctx, "", g, calls, 1)
					calls++
				}
				rcancel()
				op.end = time.Now()
				mu.Lock()
				ops = append(ops, op)
				mu.Unlock()
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	signaled := time.Now()
	victim.stop(syscall.SIGKILL)
	killed := time.Now() // the process is gone: its port refuses connections
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()

	var before, after, failed int
	for _, op := range ops {
		if op.start.After(killed) {
			after++
		} else {
			before++
		}
		if op.err == nil {
			continue
		}
		failed++
		t.Logf("client %d: %s started %v before the kill: %v", op.client, op.what, killed.Sub(op.start).Round(time.Millisecond), op.err)
		switch {
		case op.start.After(killed):
			t.Errorf("client %d: %s started after the kill failed: %v", op.client, op.what, op.err)
		case op.end.Before(signaled):
			t.Errorf("client %d: %s failed before the kill: %v", op.client, op.what, op.err)
		case !isStatus(op.err, http.StatusBadGateway):
			t.Errorf("client %d: %s in flight at the kill: got %v, want HTTP 502 from nginx", op.client, op.what, op.err)
		}
	}
	t.Logf("%d requests before the kill, %d after, %d failed", before, after, failed)
	if before == 0 || after == 0 {
		t.Errorf("requests before the kill: %d, after: %d; want some of each", before, after)
	}
	if failed > 4 {
		t.Errorf("%d requests failed; want at most 4 (one in flight per client)", failed)
	}

	if err := victim.start(ctx, f.hc); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if err := old.calculate(ctx, victim.url(), 6, 7, 1); err != nil {
		t.Errorf("%s restarted, a session opened before: %v", victim.name, err)
	}
}

// testRedisDown: with Redis stopped, requests get a clear error at once
// (HTTP 503 naming the state store, or an "unavailable" result), never a
// hang, and every replica's /readyz turns 503. With Redis back (empty: it
// keeps nothing on disk), /readyz is 200 again and new sessions work,
// answers to approvals included, without restarting a replica. Sessions
// opened before are gone with Redis' data.
func (f *fleet) testRedisDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := f.conn()
	if err := c.initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.calculate(ctx, "", 1, 2, 3); err != nil {
		t.Fatal(err)
	}

	f.redis.Stop()
	type target struct{ name, url string }
	targets := []target{{"nginx", ""}}
	for _, r := range f.replicas {
		targets = append(targets, target{r.name, r.url()})
	}
	for _, tg := range targets {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		_, err := c.call(rctx, tg.url, "calculator", map[string]any{"input": "1+1"})
		rcancel()
		if !storeDownError(err) {
			t.Errorf("call on %s with Redis down: got %v after %v, want HTTP 503 saying the state store cannot be reached",
				tg.name, err, time.Since(start).Round(time.Millisecond))
		}
		ic := f.conn()
		if tg.url != "" {
			ic.url = tg.url
		}
		rctx, rcancel = context.WithTimeout(ctx, 10*time.Second)
		err = ic.initialize(rctx, nil)
		rcancel()
		if !storeDownError(err) {
			t.Errorf("initialize on %s with Redis down: got %v, want HTTP 503 saying the state store cannot be reached", tg.name, err)
		}
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	res, err := modernCall(rctx, f.hc, f.nginx.url(), map[string]any{"name": "calculator", "arguments": map[string]any{"input": "1+1"}})
	rcancel()
	if !storeDownError(err) && (err != nil || !res.IsError || res.kind() != "unavailable") {
		t.Errorf("sessionless call with Redis down: got %+v (%v), want an unavailable error or HTTP 503", res, err)
	}
	f.waitReady(t, ctx, http.StatusServiceUnavailable, 5*time.Second)

	f.redis.Restart()
	f.waitReady(t, ctx, http.StatusOK, 10*time.Second)
	err = c.calculate(ctx, "", 1, 2, 3)
	if !isStatus(err, http.StatusNotFound) {
		t.Errorf("a session opened before Redis lost its data: got %v, want HTTP 404", err)
	}
	fresh := f.conn()
	if err := fresh.initialize(ctx, map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatalf("initialize after Redis came back: %v", err)
	}
	for i := range 6 {
		if err := fresh.calculate(ctx, "", i, 3, 1); err != nil {
			t.Errorf("call %d through nginx after Redis came back: %v", i, err)
		}
	}
	r, id, q, err := fresh.startGatedCall(ctx, f.replicas[2].url(), "echo", map[string]any{"text": "after redis"})
	if err != nil {
		t.Fatalf("gated call after Redis came back: %v", err)
	}
	if status, err := fresh.answer(ctx, f.replicas[0].url(), q.ID, map[string]any{"action": "accept",
		"content": map[string]any{"text": "after redis", "remember": false}}); err != nil || status != http.StatusAccepted {
		r.close()
		t.Fatalf("answer on another replica after Redis came back: got HTTP %d (%v), want 202", status, err)
	}
	if res, err := finish(r, id); err != nil || res.text() != "after redis" {
		t.Errorf("approved call after Redis came back: got %q (%v), want %q", res.text(), err, "after redis")
	}
}

// storeDownError reports whether err is the answer of a replica that
// cannot reach the store: HTTP 503 with a JSON-RPC error that says so.
func storeDownError(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.Status == http.StatusServiceUnavailable &&
		se.RPC != nil && strings.Contains(se.RPC.Message, "state store cannot be reached")
}

// waitReady polls every replica's /readyz until it answers want, for at
// most within.
func (f *fleet) waitReady(t *testing.T, ctx context.Context, want int, within time.Duration) {
	t.Helper()
	for _, r := range f.replicas {
		deadline := time.Now().Add(within)
		for {
			code, body := getStatus(ctx, f.hc, r.base()+"/readyz")
			if code == want {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s /readyz: got %d %q for %v, want %d", r.name, code, body, within, want)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
