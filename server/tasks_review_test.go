package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/state"
)

// TestStdioTaskResultAnsweredAtEOF: a client that asks tasks/result and
// then closes stdin (a script piping its requests in) gets the result of a
// task that ends within the shutdown grace, not silence.
func TestStdioTaskResultAnsweredAtEOF(t *testing.T) {
	c, inW := stdioTaskSession(t, server.Options{ShutdownGrace: 10 * time.Second})
	m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "millis_per_step": 100}, "task": map[string]any{}})
	id, _ := result(t, m)["task"].(map[string]any)["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", m)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "tasks/result", "params": map[string]any{"taskId": id}})
	inW.Write(append(b, '\n'))
	time.Sleep(50 * time.Millisecond) // the request is read before the end of the input
	inW.Close()
	for {
		var m map[string]any
		if err := c.out.Decode(&m); err != nil {
			t.Fatalf("stdout ended without an answer to tasks/result: %v", err)
		}
		if m["id"] == float64(99) {
			if r := result(t, m); text(r) != "done after 3 steps" {
				t.Errorf("tasks/result = %v, want the tool's result", m)
			}
			return
		}
	}
}

// TestTaskHugeTTLIsClamped: a 2025-11-25 client that asks for a very long
// ttl gets the server's most, not a ttl that wrapped around in the
// conversion to a duration (18446744073710 ms is 448384 ns modulo 2^64).
func TestTaskHugeTTLIsClamped(t *testing.T) {
	var stopped atomic.Int64
	c := legacyRPC(t, startTaskServer(t, server.Options{}, &stopped))
	for _, ttl := range []int64{18446744073710, 1<<63 - 1, 9223372036855} {
		_, m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}, "task": map[string]any{"ttl": ttl}})
		task, _ := result(t, m)["task"].(map[string]any)
		if task["ttl"] != float64(server.DefaultTaskTTL.Milliseconds()) {
			t.Errorf("ttl %d asked: task ttl %v, want the server's most, %d", ttl, task["ttl"], server.DefaultTaskTTL.Milliseconds())
		}
	}
}

// TestTaskOutlivingItsTTL: a task still running when its TTL is over is
// kept while it runs, and its result after it ends; it was dropped at its
// TTL, so a job longer than the TTL (at most an hour from the command
// line, whatever the tool's timeout) could never be read.
func TestTaskOutlivingItsTTL(t *testing.T) {
	var stopped atomic.Int64
	base := startTaskServer(t, server.Options{TaskTTL: 300 * time.Millisecond}, &stopped)
	c := &rpc{t: t, base: base, modern: true, ext: true}
	_, m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 12, "millis_per_step": 100}})
	id := result(t, m)["taskId"].(string)
	r := c.pollUntil(id, "completed")
	if text(r["result"].(map[string]any)) != "done after 12 steps" {
		t.Fatalf("tasks/get = %v, want the result", r)
	}
	created, _ := time.Parse(time.RFC3339Nano, r["createdAt"].(string))
	updated, _ := time.Parse(time.RFC3339Nano, r["lastUpdatedAt"].(string))
	if ttl := time.Duration(r["ttlMs"].(float64)) * time.Millisecond; created.Add(ttl).Before(updated.Add(300 * time.Millisecond)) {
		t.Errorf("ttlMs %v: the task is said to go before its TTL after its end (created %v, ended %v)", r["ttlMs"], created, updated)
	}

	// 2025-11-25: tasks/result waits, and gets it.
	l := legacyRPC(t, base)
	_, m = l.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 12, "millis_per_step": 100}, "task": map[string]any{}})
	id = result(t, m)["task"].(map[string]any)["taskId"].(string)
	if _, m := l.do("tasks/result", map[string]any{"taskId": id}); text(result(t, m)) != "done after 12 steps" {
		t.Errorf("tasks/result of a task that outlived its TTL = %v", m)
	}
}

// lossyBus is a shared store whose messages are lost, as a Redis
// subscription's are while it reconnects (delivery is at most once).
type lossyBus struct{ sharedMemory }

func (lossyBus) Publish(context.Context, string, []byte) error { return nil }

// TestCancelledTaskStopsWithoutTheMessage: a task cancelled on another
// replica stops even when the cancel message is lost: the replica running
// it sees the terminal record. It ran to its end (up to the tool's
// timeout), holding its session's place.
func TestCancelledTaskStopsWithoutTheMessage(t *testing.T) {
	m := state.NewMemory()
	t.Cleanup(func() { m.Close() })
	st := lossyBus{sharedMemory{m}}
	var stopped atomic.Int64
	a := &rpc{t: t, base: startTaskServer(t, server.Options{State: st}, &stopped), modern: true, ext: true}
	b := &rpc{t: t, base: startTaskServer(t, server.Options{State: st}, &stopped), modern: true, ext: true}
	_, resp := a.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 300, "millis_per_step": 100}})
	id := result(t, resp)["taskId"].(string)
	b.do("tasks/cancel", map[string]any{"taskId": id})
	deadline := time.Now().Add(10 * time.Second)
	for stopped.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a cancelled task whose cancel message was lost kept running")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := a.pollUntil(id, "cancelled", "completed", "failed"); r["status"] != "cancelled" {
		t.Errorf("status %v, want cancelled", r["status"])
	}
}

// countingStore counts the task records written.
type countingStore struct {
	sharedMemory
	records atomic.Int64
}

func (c *countingStore) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if strings.HasPrefix(key, "task:") && bytes.Contains(v, []byte(`"m":"the task is running"`)) {
		c.records.Add(1)
	}
	return c.sharedMemory.Set(ctx, key, v, ttl)
}

// TestBusyTaskLeavesNoRecord: a call refused because the server runs its
// most tasks leaves nothing behind; it left a working record (read as
// failed) for the TTL, an hour, for every refusal.
func TestBusyTaskLeavesNoRecord(t *testing.T) {
	m := state.NewMemory()
	t.Cleanup(func() { m.Close() })
	st := &countingStore{sharedMemory: sharedMemory{m}}
	var stopped atomic.Int64
	c := &rpc{t: t, base: startTaskServer(t, server.Options{State: st, ShutdownGrace: time.Millisecond}, &stopped), modern: true, ext: true}
	const most = 1000 // maxRunningTasks
	for i := range most {
		if _, m := c.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 1000, "millis_per_step": 1000}}); result(t, m)["taskId"] == nil {
			t.Fatalf("task %d: %v", i, m)
		}
	}
	for range 5 {
		if _, m := c.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}}); !strings.Contains(fmt.Sprint(m), "busy") {
			t.Fatalf("call past the most tasks = %v, want busy", m)
		}
	}
	if n := st.records.Load(); n != most {
		t.Errorf("%d task records written for %d tasks", n, most)
	}
}

// TestOneClientCannotTakeEveryTaskPlace: a session may have twice
// MaxInFlight tasks running at once; past that its task calls are refused
// (and leave no record), while another session still gets its tasks, and
// the first gets a place back when one of its tasks ends.
func TestOneClientCannotTakeEveryTaskPlace(t *testing.T) {
	var stopped atomic.Int64
	base := startTaskServer(t, server.Options{MaxInFlight: 2, ShutdownGrace: time.Millisecond}, &stopped)
	long := map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1000, "millis_per_step": 1000}, "task": map[string]any{}}
	taskID := func(c *rpc) (string, map[string]any) {
		t.Helper()
		_, m := c.do("tools/call", long)
		r, _ := m["result"].(map[string]any)
		task, _ := r["task"].(map[string]any)
		id, _ := task["taskId"].(string)
		return id, m
	}
	a := legacyRPC(t, base)
	var ids []string
	for i := range 4 { // 2 × MaxInFlight
		id, m := taskID(a)
		if id == "" {
			t.Fatalf("task %d of the first session: %v", i+1, m)
		}
		ids = append(ids, id)
	}
	if id, m := taskID(a); id != "" || !strings.Contains(fmt.Sprint(m), "too many tasks") {
		t.Fatalf("a fifth task of one session = %v, want refused: too many tasks", m)
	}
	b := legacyRPC(t, base)
	if id, m := taskID(b); id == "" {
		t.Fatalf("another session's task = %v, want a task", m)
	}
	if _, m := a.do("tasks/cancel", map[string]any{"taskId": ids[0]}); m["error"] != nil {
		t.Fatalf("tasks/cancel = %v", m)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		id, m := taskID(a)
		if id != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a cancel, the session's task call = %v, want a task", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStdioTaskRequestsAreBounded: tasks/* requests over stdio count
// against --max-queued-calls like calls do; each waiting tasks/result held
// a goroutine polling the store, without bound.
func TestStdioTaskRequestsAreBounded(t *testing.T) {
	c, inW := stdioTaskSession(t, server.Options{MaxQueuedCalls: 3, ShutdownGrace: time.Millisecond})
	m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1000, "millis_per_step": 1000}, "task": map[string]any{}})
	id, _ := result(t, m)["task"].(map[string]any)["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", m)
	}
	for i := range 4 { // three wait; the fourth is one too many
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 100 + i, "method": "tasks/result", "params": map[string]any{"taskId": id}})
		inW.Write(append(b, '\n'))
	}
	var m2 map[string]any
	if err := c.out.Decode(&m2); err != nil {
		t.Fatal(err)
	}
	if m2["id"] != float64(103) || !strings.Contains(fmt.Sprint(m2["error"]), "busy") {
		t.Fatalf("first answer = %v, want the fourth tasks/result refused: server busy", m2)
	}
	// At the bound, tasks/cancel is still read (as a cancellation is), and
	// the waiting results are then answered.
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 200, "method": "tasks/cancel", "params": map[string]any{"taskId": id}})
	inW.Write(append(b, '\n'))
	seen := map[float64]bool{}
	for len(seen) < 4 {
		var m map[string]any
		if err := c.out.Decode(&m); err != nil {
			t.Fatalf("after tasks/cancel, answers %v and then: %v", seen, err)
		}
		id, _ := m["id"].(float64)
		if m["error"] != nil && id != 200 {
			t.Errorf("answer %v = %v", id, m)
		}
		seen[id] = true
	}
	if !seen[200] || !seen[100] || !seen[101] || !seen[102] {
		t.Errorf("answered %v, want the cancel and the three waiting results", seen)
	}
	b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 300, "method": "tasks/get", "params": map[string]any{"taskId": id}})
	inW.Write(append(b, '\n'))
	var m4 map[string]any
	if err := c.out.Decode(&m4); err != nil || m4["id"] != float64(300) || result(t, m4)["status"] != "cancelled" {
		t.Errorf("once the places are free, tasks/get = %v (%v), want the task, cancelled", m4, err)
	}
}
