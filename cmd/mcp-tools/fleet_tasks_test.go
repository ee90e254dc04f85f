package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/internal/testredis"
)

// taskFleet is a fleet whose replicas serve testdata/fleet/tasks.yaml's
// steps tool, which may run as a task; its processes write their pid
// files to dir.
type taskFleet struct {
	*fleet
	dir string
}

// endpoint is a named URL that answers MCP: a replica's own, or nginx's.
type endpoint struct{ name, url string }

// TestFleetTasks runs tasks in the deployment of TestFleet (three replicas
// of the binary sharing a redis-server, behind nginx) with a subprocess
// tool: a task is polled on replicas other than the one running it,
// cancelled through another one (its process group goes), survives as
// "failed" the kill -9 of its replica, and, in a 2025-11-25 session, is
// read through nginx and hidden from other sessions.
func TestFleetTasks(t *testing.T) {
	nginxBin := requireFleetServers(t)
	f := startTaskFleet(t, nginxBin)
	t.Run("polled on other replicas until completed", f.testPolled)
	t.Run("cancelled through another replica", f.testCancelled)
	t.Run("legacy session through nginx", f.testLegacy)
	// Last: replica0 stays dead.
	t.Run("replica killed while running a task", f.testReplicaKilled)
}

// startTaskFleet starts redis-server, three replicas serving the steps
// tool and nginx, like startFleet; everything is stopped when the test
// ends, and the logs are printed when it failed.
func startTaskFleet(t *testing.T, nginxBin string) *taskFleet {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	// Every request of the test is bounded; the longest (tasks/result)
	// waits a couple of seconds.
	hc := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	f := &taskFleet{fleet: &fleet{hc: hc, redis: testredis.Start(t)}, dir: t.TempDir()}
	logs := t.TempDir()
	args := []string{
		"--state", f.redis.URL(),
		"--config", filepath.Join("testdata", "fleet", "tasks.yaml"),
		"--shutdown-grace", "1s",
	}
	env := []string{"MCP_TOOLS_STATE_KEY=" + fleetStateKey, "MCP_TOOLS_FLEET_TASK_DIR=" + f.dir}
	f.launch(t, nginxBin, logs, args, env)
	return f
}

// endpoints returns every replica's endpoint and nginx's.
func (f *taskFleet) endpoints() []endpoint {
	var out []endpoint
	for _, r := range f.replicas {
		out = append(out, endpoint{r.name, r.url()})
	}
	return append(out, endpoint{"nginx", f.nginx.url()})
}

// taskView is a task as a tasks/* or tools/call reply shows it, in either
// era (a 2026-07-28 tasks/get has the outcome inline: result or error).
type taskView struct {
	ResultType    string      `json:"resultType"`
	TaskID        string      `json:"taskId"`
	Status        string      `json:"status"`
	StatusMessage string      `json:"statusMessage"`
	Result        *toolResult `json:"result"`
	Error         *rpcError   `json:"error"`
}

// modernTask sends one 2026-07-28 request declaring the tasks extension
// to url, with the headers the protocol asks for (Mcp-Name is the tool for
// tools/call, the task id for tasks/*), and decodes its result.
func (f *taskFleet) modernTask(ctx context.Context, url, method string, params map[string]any) (taskView, error) {
	var v taskView
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion": modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "fleet-task-test", "version": "1"},
	}
	name, _ := params["name"].(string)
	if id, ok := params["taskId"].(string); ok {
		name = id
	}
	c := &mcpConn{hc: f.hc, url: url}
	raw, err := c.request(ctx, "", method, params, map[string]string{
		"Mcp-Protocol-Version": modernVersion,
		"Mcp-Method":           method,
		"Mcp-Name":             name,
	})
	if err != nil {
		return v, fmt.Errorf("%s: %w", method, err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("%s result %.300s: %w", method, raw, err)
	}
	return v, nil
}

// start starts the steps tool as a task on r, with input "tag n" (n steps
// of 0.2 s), and returns the task's id.
func (f *taskFleet) start(t *testing.T, ctx context.Context, r *replica, tag string, n int) string {
	t.Helper()
	v, err := f.modernTask(ctx, r.url(), "tools/call", map[string]any{"name": "steps",
		"arguments": map[string]any{"input": fmt.Sprintf("%s %d", tag, n)}})
	if err != nil {
		t.Fatalf("start on %s: %v", r.name, err)
	}
	if v.ResultType != "task" || v.TaskID == "" || v.Status != "working" {
		t.Fatalf("start on %s: got resultType %q, taskId %q, status %q; want a working task", r.name, v.ResultType, v.TaskID, v.Status)
	}
	return v.TaskID
}

// get is tasks/get of task id at e.
func (f *taskFleet) get(ctx context.Context, e endpoint, id string) (taskView, error) {
	v, err := f.modernTask(ctx, e.url, "tasks/get", map[string]any{"taskId": id})
	if err != nil {
		return v, fmt.Errorf("on %s: %w", e.name, err)
	}
	if v.ResultType != "complete" || v.TaskID != id {
		return v, fmt.Errorf("on %s: got resultType %q, taskId %q; want complete, %q", e.name, v.ResultType, v.TaskID, id)
	}
	return v, nil
}

// waitPid waits for the steps process of tag to write its pid file.
func (f *taskFleet) waitPid(ctx context.Context, tag string) (int, error) {
	path := filepath.Join(f.dir, tag+".pid")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		var pid int
		if b, err := os.ReadFile(path); err == nil {
			if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
				return pid, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no pid in %s: the tool's process did not start", path)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitGroupGone waits until process group pid no longer exists and
// returns how long that took.
func waitGroupGone(ctx context.Context, pid int, within time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		err := syscall.Kill(-pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("process group %d still there after %v (kill 0: %v)", pid, within, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sleepCtx waits d, or less when ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

var stepMessage = regexp.MustCompile(`^step \d+ of 15$`)

// testPolled: a task started on replica0 is polled on replica1 and through
// nginx until it completes; the polls show the subprocess's progress as
// the status message, and the last one has the result inline.
func (f *taskFleet) testPolled(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	id := f.start(t, ctx, f.replicas[0], "polled", 15) // 3 s
	pollers := []endpoint{{f.replicas[1].name, f.replicas[1].url()}, {"nginx", f.nginx.url()}}
	seen := map[string]bool{}
	polls := 0
	for {
		p := pollers[polls%len(pollers)]
		polls++
		v, err := f.get(ctx, p, id)
		if err != nil {
			t.Fatalf("poll %d: %v", polls, err)
		}
		if v.Status == "working" {
			if stepMessage.MatchString(v.StatusMessage) {
				seen[v.StatusMessage] = true
			} else if v.StatusMessage != "the task is running" {
				t.Errorf("poll %d on %s: got statusMessage %q, want a step of 15", polls, p.name, v.StatusMessage)
			}
			sleepCtx(ctx, 150*time.Millisecond)
			continue
		}
		if v.Status != "completed" {
			t.Fatalf("poll %d on %s: got status %q (%q), want working, then completed", polls, p.name, v.Status, v.StatusMessage)
		}
		if v.Result == nil || v.Result.IsError || v.Result.text() != "polled: 15 steps done" {
			t.Errorf("completed task on %s: got result %+v, want %q inline", p.name, v.Result, "polled: 15 steps done")
		}
		break
	}
	t.Logf("%d polls; progress seen: %v", polls, seen)
	if len(seen) < 2 {
		t.Errorf("saw %d distinct progress messages while polling (%v), want several", len(seen), seen)
	}
}

// testCancelled: a task running on replica0, cancelled through replica2,
// has its subprocess's whole process group killed and reads cancelled on
// every replica, before and after its work ended.
func (f *taskFleet) testCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	id := f.start(t, ctx, f.replicas[0], "cancelled", 1000) // 200 s
	pid, err := f.waitPid(ctx, "cancelled")
	if err != nil {
		t.Fatal(err)
	}
	r2 := endpoint{f.replicas[2].name, f.replicas[2].url()}
	if v, err := f.get(ctx, r2, id); err != nil || v.Status != "working" {
		t.Fatalf("before cancelling: got %q (%v), want working", v.Status, err)
	}
	v, err := f.modernTask(ctx, r2.url, "tasks/cancel", map[string]any{"taskId": id})
	if err != nil || v.ResultType != "complete" {
		t.Fatalf("tasks/cancel on %s: got %+v (%v), want an acknowledgement (resultType complete)", r2.name, v, err)
	}
	// The group is gone once its members are reaped: the shell by
	// replica0, its sleep (an orphan once the shell died) by PID 1, which
	// may take a second or so.
	took, err := waitGroupGone(ctx, pid, 10*time.Second)
	if err != nil {
		t.Fatalf("after tasks/cancel on %s: %v", r2.name, err)
	}
	t.Logf("process group %d gone %v after tasks/cancel returned", pid, took.Round(time.Millisecond))
	for _, e := range f.endpoints() {
		v, err := f.get(ctx, e, id)
		if err != nil {
			t.Errorf("after the cancel: %v", err)
			continue
		}
		if v.Status != "cancelled" || v.Result != nil {
			t.Errorf("on %s: got status %q (%q, result %+v), want cancelled with no result", e.name, v.Status, v.StatusMessage, v.Result)
		}
	}
}

// testLegacy: a 2025-11-25 session, every request of it through nginx,
// asks for a task with params.task, polls it and reads its result with
// tasks/result; another session is told the task does not exist (-32602)
// on every replica.
func (f *taskFleet) testLegacy(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := f.conn()
	if err := c.initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := c.request(ctx, "", "tools/call", map[string]any{"name": "steps",
		"arguments": map[string]any{"input": "legacy 10"}, "task": map[string]any{"ttl": 60000}}, nil)
	if err != nil {
		t.Fatalf("tools/call with params.task: %v", err)
	}
	var created struct{ Task taskView }
	if err := json.Unmarshal(raw, &created); err != nil || created.Task.TaskID == "" || created.Task.Status != "working" {
		t.Fatalf("tools/call with params.task: got %.300s (%v), want {task: a working task}", raw, err)
	}
	id := created.Task.TaskID
	for i := range 3 {
		raw, err := c.request(ctx, "", "tasks/get", map[string]any{"taskId": id}, nil)
		var v taskView
		if err == nil {
			err = json.Unmarshal(raw, &v)
		}
		if err != nil || v.TaskID != id || (v.Status != "working" && v.Status != "completed") {
			t.Fatalf("tasks/get %d: got %.300s (%v), want the task, working or completed", i, raw, err)
		}
	}
	raw, err = c.request(ctx, "", "tasks/result", map[string]any{"taskId": id}, nil)
	if err != nil {
		t.Fatalf("tasks/result: %v", err)
	}
	var res toolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("tasks/result %.300s: %v", raw, err)
	}
	if res.IsError || res.text() != "legacy: 10 steps done" {
		t.Errorf("tasks/result: got %q (isError %v), want %q", res.text(), res.IsError, "legacy: 10 steps done")
	}
	if related, _ := res.Meta["io.modelcontextprotocol/related-task"].(map[string]any); related["taskId"] != id {
		t.Errorf("tasks/result _meta: got %v, want the related task %q", res.Meta, id)
	}

	other := f.conn()
	if err := other.initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, e := range f.endpoints() {
		for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			_, err := other.request(ctx, e.url, method, map[string]any{"taskId": id}, nil)
			if rpc := (*rpcError)(nil); !errors.As(err, &rpc) || rpc.Code != -32602 {
				t.Errorf("another session's %s on %s: got %v, want JSON-RPC error -32602", method, e.name, err)
			}
		}
	}
	// The owner still reads it: the other session's cancel did nothing.
	raw, err = c.request(ctx, "", "tasks/get", map[string]any{"taskId": id}, nil)
	var v taskView
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil || v.Status != "completed" {
		t.Errorf("the owner's tasks/get after the other session's: got %.300s (%v), want completed", raw, err)
	}
}

// testReplicaKilled: replica0 is killed (SIGKILL) while it runs a task;
// polled on replica1, the task reads working, then failed with a message
// saying its replica stopped, never "not found"; replica2 and nginx agree.
// The tool's shell dies with its replica (its parent-death signal); the
// 0.2 s sleep it was running then ends on its own, so the group goes.
func (f *taskFleet) testReplicaKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	victim := f.replicas[0]
	id := f.start(t, ctx, victim, "killed", 1000) // 200 s
	pid, err := f.waitPid(ctx, "killed")
	if err != nil {
		t.Fatal(err)
	}
	r1 := endpoint{f.replicas[1].name, f.replicas[1].url()}
	if v, err := f.get(ctx, r1, id); err != nil || v.Status != "working" {
		t.Fatalf("before the kill: got %q (%v), want working", v.Status, err)
	}
	victim.stop(syscall.SIGKILL)
	killed := time.Now()
	const bound = 15 * time.Second // the liveness mark lives 4 s
	var v taskView
	for polls := 1; ; polls++ {
		v, err = f.get(ctx, r1, id)
		if err != nil {
			t.Fatalf("poll %d, %v after the kill: %v", polls, time.Since(killed).Round(time.Millisecond), err)
		}
		if v.Status != "working" {
			break
		}
		if time.Since(killed) > bound {
			t.Fatalf("still working %v after its replica was killed (%d polls), want failed", bound, polls)
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	t.Logf("seen %s on %s %v after the kill", v.Status, r1.name, time.Since(killed).Round(time.Millisecond))
	if v.Status != "failed" || !strings.Contains(v.StatusMessage, "replica") || !strings.Contains(v.StatusMessage, "stopped") {
		t.Fatalf("got status %q (%q), want failed with a message saying the replica stopped", v.Status, v.StatusMessage)
	}
	if v.Error == nil || v.Error.Message != v.StatusMessage {
		t.Errorf("failed task's inline error: got %+v, want one with the message %q", v.Error, v.StatusMessage)
	}
	for _, e := range []endpoint{{f.replicas[2].name, f.replicas[2].url()}, {"nginx", f.nginx.url()}} {
		if w, err := f.get(ctx, e, id); err != nil || w.Status != "failed" || w.StatusMessage != v.StatusMessage {
			t.Errorf("on %s: got %q (%q, %v), want failed (%q)", e.name, w.Status, w.StatusMessage, err, v.StatusMessage)
		}
	}
	if _, err := waitGroupGone(ctx, pid, 5*time.Second); err != nil {
		t.Errorf("the tool's shell outlived its replica: %v", err)
	}
}
