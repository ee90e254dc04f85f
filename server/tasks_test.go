package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/remote"
	"github.com/mcp-tools/mcp-tools/typed"
)

type slowIn struct {
	Steps  int `json:"steps" jsonschema:"minimum=1,maximum=1000"`
	Millis int `json:"millis_per_step" jsonschema:"minimum=1,maximum=10000"`
}

// taskTools are a tool that may run as a task (slow: progress at each
// step, stops when cancelled), one that must, and the usual test tools.
func taskTools(stopped *atomic.Int64) []tools.Tool {
	slow := func(ctx context.Context, in slowIn) (string, error) {
		for i := 1; i <= in.Steps; i++ {
			select {
			case <-time.After(time.Duration(in.Millis) * time.Millisecond):
			case <-ctx.Done():
				stopped.Add(1)
				return "", ctx.Err()
			}
			tools.ReportProgress(ctx, float64(i), float64(in.Steps), fmt.Sprintf("step %d of %d", i, in.Steps))
		}
		return fmt.Sprintf("done after %d steps", in.Steps), nil
	}
	withMode := func(t tools.Tool, mode tools.TaskMode) tools.Tool {
		info := t.Info()
		info.Task = mode
		return tools.WithInfo(t, info)
	}
	return append(testTools(),
		withMode(typed.MustNew("slow", "Work in steps.", slow), tools.TaskOptional),
		withMode(typed.MustNew("batch", "Work in steps; only as a task.", slow), tools.TaskRequired),
	)
}

// rpc is a raw JSON-RPC client of one streamable HTTP server: a
// 2025-11-25 session, or 2026-07-28 requests with no session.
type rpc struct {
	t      *testing.T
	base   string
	sess   string
	modern bool
	ext    bool // 2026-07-28: declare the tasks extension
}

func (c *rpc) do(method string, params map[string]any) (int, map[string]any) {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if c.modern {
		caps := map[string]any{}
		if c.ext {
			caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
		}
		params["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: mcp.ProtocolVersion20260728,
			mcp.MetaKeyClientCapabilities: caps, mcp.MetaKeyClientInfo: map[string]any{"name": "task-test", "version": "1"}}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.base+"/mcp", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.modern {
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
		req.Header.Set(mcp.HeaderMethod, method)
		if name, ok := params["name"].(string); ok {
			req.Header.Set(mcp.HeaderName, name)
		}
		if id, ok := params["taskId"].(string); ok {
			req.Header.Set(mcp.HeaderName, id)
		}
	} else {
		req.Header.Set(mcp.HeaderSessionID, c.sess)
		req.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, lastMessage(raw)
}

func legacyRPC(t *testing.T, base string) *rpc {
	t.Helper()
	resp, _ := post(t, base, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "task-test", "version": "1"}}})
	c := &rpc{t: t, base: base, sess: resp.Header.Get(mcp.HeaderSessionID)}
	if c.sess == "" {
		t.Fatalf("initialize: no session (HTTP %d)", resp.StatusCode)
	}
	return c
}

func result(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", m)
	}
	return r
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// pollUntil polls tasks/get until the task's status is one of want.
func (c *rpc) pollUntil(id string, want ...string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, m := c.do("tasks/get", map[string]any{"taskId": id})
		r := result(c.t, m)
		for _, w := range want {
			if r["status"] == w {
				return r
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s still %v after 20s, want %v", id, r["status"], want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func startTaskServer(t *testing.T, opts server.Options, stopped *atomic.Int64) string {
	t.Helper()
	reg, err := tools.NewRegistry(taskTools(stopped)...)
	if err != nil {
		t.Fatal(err)
	}
	return serveRegistry(t, reg, server.TransportHTTP, opts)
}

func TestTasksLegacy(t *testing.T) {
	var stopped atomic.Int64
	base := startTaskServer(t, server.Options{}, &stopped)

	// Advertised as 2025-11-25 says: the capability and taskSupport.
	_, m := post(t, base, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}}})
	caps, _ := result(t, m)["capabilities"].(map[string]any)
	tasksCap, _ := caps["tasks"].(map[string]any)
	if requests, _ := tasksCap["requests"].(map[string]any); tasksCap["cancel"] == nil || requests["tools"] == nil || tasksCap["list"] != nil {
		t.Errorf("initialize capabilities.tasks = %v, want cancel and requests.tools.call, no list", tasksCap)
	}
	c := legacyRPC(t, base)
	_, m = c.do("tools/list", nil)
	support := map[string]any{}
	for _, tl := range result(t, m)["tools"].([]any) {
		tool := tl.(map[string]any)
		exec, _ := tool["execution"].(map[string]any)
		support[tool["name"].(string)] = exec["taskSupport"]
	}
	if support["slow"] != "optional" || support["batch"] != "required" || support["echo"] != nil {
		t.Errorf("taskSupport = slow %v, batch %v, echo %v; want optional, required, none", support["slow"], support["batch"], support["echo"])
	}

	t.Run("a call as a task", func(t *testing.T) {
		_, m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 4, "millis_per_step": 100}, "task": map[string]any{"ttl": 60000}})
		task, _ := result(t, m)["task"].(map[string]any)
		id, _ := task["taskId"].(string)
		if id == "" || task["status"] != "working" || task["ttl"] != float64(60000) || task["createdAt"] == nil || task["pollInterval"] == nil {
			t.Fatalf("CreateTaskResult = %v, want a working task with ttl 60000", result(t, m))
		}
		if len(id) < 20 {
			t.Errorf("task id %q is too short to be unguessable", id)
		}
		seen := c.pollUntil(id, "working")
		_ = seen
		// The polled status carries the last progress message.
		deadline := time.Now().Add(10 * time.Second)
		for {
			r := c.pollUntil(id, "working", "completed")
			if msg, _ := r["statusMessage"].(string); strings.HasPrefix(msg, "step ") || r["status"] == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no progress in the status message")
			}
			time.Sleep(50 * time.Millisecond)
		}
		_, m = c.do("tasks/result", map[string]any{"taskId": id})
		r := result(t, m)
		if text(r) != "done after 4 steps" {
			t.Errorf("tasks/result = %v, want the tool's result", r)
		}
		meta, _ := r["_meta"].(map[string]any)
		if related, _ := meta["io.modelcontextprotocol/related-task"].(map[string]any); related["taskId"] != id {
			t.Errorf("tasks/result _meta = %v, want the related task", meta)
		}
		if r := c.pollUntil(id, "completed"); r["statusMessage"] == nil {
			t.Errorf("completed task = %v", r)
		}
	})

	t.Run("modes refused", func(t *testing.T) {
		if _, m := c.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}}); errorCode(m) != mcp.METHOD_NOT_FOUND {
			t.Errorf("required tool without params.task = %v, want -32601", m)
		}
		if _, m := c.do("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}}); errorCode(m) != mcp.METHOD_NOT_FOUND {
			t.Errorf("tool without task support, with params.task = %v, want -32601", m)
		}
		if _, m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}}); text(result(t, m)) != "done after 1 steps" {
			t.Errorf("optional tool without params.task = %v, want it run at once", m)
		}
		if _, m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 0}, "task": map[string]any{}}); result(t, m)["isError"] != true {
			t.Errorf("invalid arguments with params.task = %v, want an error result and no task", m)
		}
		if _, m := c.do("tasks/list", nil); errorCode(m) != mcp.METHOD_NOT_FOUND {
			t.Errorf("tasks/list = %v, want -32601 (not declared)", m)
		}
		if _, m := c.do("tasks/get", map[string]any{"taskId": "nope"}); errorCode(m) != mcp.INVALID_PARAMS {
			t.Errorf("tasks/get of an unknown task = %v, want -32602", m)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		before := stopped.Load()
		_, m := c.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 100, "millis_per_step": 100}, "task": map[string]any{}})
		id := result(t, m)["task"].(map[string]any)["taskId"].(string)
		c.pollUntil(id, "working")
		_, m = c.do("tasks/cancel", map[string]any{"taskId": id})
		if r := result(t, m); r["status"] != "cancelled" || r["taskId"] != id {
			t.Fatalf("tasks/cancel = %v, want the task, cancelled", r)
		}
		deadline := time.Now().Add(10 * time.Second)
		for stopped.Load() == before {
			if time.Now().After(deadline) {
				t.Fatal("the tool's work was not stopped")
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		if r := c.pollUntil(id, "cancelled", "completed", "failed"); r["status"] != "cancelled" {
			t.Errorf("after cancel, status %v, want it to stay cancelled", r["status"])
		}
		if _, m := c.do("tasks/cancel", map[string]any{"taskId": id}); errorCode(m) != mcp.INVALID_PARAMS {
			t.Errorf("cancelling an ended task = %v, want -32602", m)
		}
	})

	t.Run("another session", func(t *testing.T) {
		_, m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}, "task": map[string]any{}})
		id := result(t, m)["task"].(map[string]any)["taskId"].(string)
		other := legacyRPC(t, base)
		for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			if _, m := other.do(method, map[string]any{"taskId": id}); errorCode(m) != mcp.INVALID_PARAMS {
				t.Errorf("%s by another session = %v, want -32602 not found", method, m)
			}
		}
	})
}

func TestTasksModern(t *testing.T) {
	var stopped atomic.Int64
	base := startTaskServer(t, server.Options{}, &stopped)
	c := &rpc{t: t, base: base, modern: true, ext: true}

	_, m := c.do("server/discover", nil)
	caps, _ := result(t, m)["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if ext["io.modelcontextprotocol/tasks"] == nil || caps["tasks"] != nil {
		t.Errorf("discover capabilities = %v, want the tasks extension and no legacy tasks", caps)
	}
	_, m = c.do("tools/list", nil)
	for _, tl := range result(t, m)["tools"].([]any) {
		if tool := tl.(map[string]any); tool["execution"] != nil {
			t.Errorf("2026-07-28 tools/list: %s has execution %v, want none", tool["name"], tool["execution"])
		}
	}

	_, m = c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "millis_per_step": 50}, "task": map[string]any{"ttl": 5}})
	r := result(t, m)
	id, _ := r["taskId"].(string)
	if r["resultType"] != "task" || id == "" || r["status"] != "working" || r["ttlMs"] == nil || r["pollIntervalMs"] == nil || r["task"] != nil {
		t.Fatalf("CreateTaskResult = %v, want flat, resultType task", r)
	}
	if r["ttlMs"] == float64(5) {
		t.Error("params.task was honoured on 2026-07-28; it must be ignored")
	}
	done := c.pollUntil(id, "completed")
	inline, _ := done["result"].(map[string]any)
	if done["resultType"] != "complete" || text(inline) != "done after 3 steps" {
		t.Errorf("tasks/get of a completed task = %v, want resultType complete and the result inline", done)
	}
	if status, m := c.do("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{}}); result(t, m)["resultType"] != "complete" || status != http.StatusOK {
		t.Errorf("tasks/update = %d %v, want an acknowledgement", status, m)
	}
	if status, m := c.do("tasks/result", map[string]any{"taskId": id}); errorCode(m) != mcp.METHOD_NOT_FOUND || status != http.StatusNotFound {
		t.Errorf("tasks/result on 2026-07-28 = %d %v, want -32601", status, m)
	}
	// An error result is completed, with the result, in this era.
	_, m = c.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 50, "millis_per_step": 100}})
	id = result(t, m)["taskId"].(string)
	if _, m := c.do("tasks/cancel", map[string]any{"taskId": id}); result(t, m)["resultType"] != "complete" {
		t.Errorf("tasks/cancel = %v, want an acknowledgement", m)
	}
	if r := c.pollUntil(id, "cancelled", "completed"); r["status"] != "cancelled" {
		t.Errorf("cancelled task reads %v", r["status"])
	}

	// Without the extension: an optional tool runs at once; a required one
	// is refused with the missing capability.
	plain := &rpc{t: t, base: base, modern: true}
	if _, m := plain.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}}); text(result(t, m)) != "done after 1 steps" {
		t.Errorf("optional tool without the extension = %v, want the result", m)
	}
	status, m := plain.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}})
	data, _ := m["error"].(map[string]any)["data"].(map[string]any)
	if errorCode(m) != mcp.MISSING_REQUIRED_CLIENT_CAPABILITY || status != http.StatusBadRequest || data["requiredCapabilities"] == nil {
		t.Errorf("required tool without the extension = %d %v, want -32021 with requiredCapabilities, HTTP 400", status, m)
	}
	if _, m := plain.do("tasks/get", map[string]any{"taskId": id}); errorCode(m) != mcp.MISSING_REQUIRED_CLIENT_CAPABILITY {
		t.Errorf("tasks/get without the extension = %v, want -32021", m)
	}
}

func TestTasksAcrossReplicas(t *testing.T) {
	for _, st := range fleetStores {
		t.Run(st.name, func(t *testing.T) {
			var stopped atomic.Int64
			shared := st.open(t)
			var bases []string
			for range 2 {
				reg, _ := tools.NewRegistry(taskTools(&stopped)...)
				bases = append(bases, serveRegistry(t, reg, server.TransportHTTP, server.Options{State: shared, StateKeys: server.StateKeys{Current: fleetKey}}))
			}
			a := &rpc{t: t, base: bases[0], modern: true, ext: true}
			b := &rpc{t: t, base: bases[1], modern: true, ext: true}
			_, m := a.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 2, "millis_per_step": 50}})
			id := result(t, m)["taskId"].(string)
			if r := b.pollUntil(id, "completed"); text(r["result"].(map[string]any)) != "done after 2 steps" {
				t.Errorf("polled on the other replica: %v", r)
			}
			// Cancelled through B, stopped on A.
			before := stopped.Load()
			_, m = a.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 100, "millis_per_step": 100}})
			id = result(t, m)["taskId"].(string)
			b.do("tasks/cancel", map[string]any{"taskId": id})
			deadline := time.Now().Add(10 * time.Second)
			for stopped.Load() == before {
				if time.Now().After(deadline) {
					t.Fatal("a task cancelled on another replica kept running")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func TestTaskOfAStoppedReplicaFails(t *testing.T) {
	st := sharedMemory{state.NewMemory()}
	var stopped atomic.Int64
	reg, _ := tools.NewRegistry(taskTools(&stopped)...)
	srv, base, stop, _ := launch(t, reg, server.TransportHTTP, server.Options{State: st, ShutdownGrace: time.Millisecond})
	_ = srv
	reg2, _ := tools.NewRegistry(taskTools(&stopped)...)
	other := serveRegistry(t, reg2, server.TransportHTTP, server.Options{State: st})
	a := &rpc{t: t, base: base, modern: true, ext: true}
	_, m := a.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 1000, "millis_per_step": 100}})
	id := result(t, m)["taskId"].(string)
	stop() // the replica running it goes (its grace is over at once)
	b := &rpc{t: t, base: other, modern: true, ext: true}
	r := b.pollUntil(id, "failed")
	if e, _ := r["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(r["statusMessage"]), "shut down") {
		t.Errorf("task of a replica that stopped = %v, want failed, saying why", r)
	}
}

func TestTaskTTL(t *testing.T) {
	var stopped atomic.Int64
	base := startTaskServer(t, server.Options{TaskTTL: 300 * time.Millisecond}, &stopped)
	c := &rpc{t: t, base: base, modern: true, ext: true}
	_, m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}})
	id := result(t, m)["taskId"].(string)
	if r := result(t, m); r["ttlMs"] != float64(300) {
		t.Errorf("ttlMs = %v, want 300", r["ttlMs"])
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, m := c.do("tasks/get", map[string]any{"taskId": id})
		if errorCode(m) == mcp.INVALID_PARAMS {
			return // gone after its TTL
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still there 10s after a 300ms TTL: %v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// muteStore is a replica's view of a shared store in which its writes of
// task liveness marks are lost once mute is set, as when the replica dies.
type muteStore struct {
	sharedMemory
	mute atomic.Bool
}

func (m *muteStore) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if m.mute.Load() && strings.HasPrefix(key, "task-alive:") {
		return nil
	}
	return m.sharedMemory.Set(ctx, key, v, ttl)
}

func TestTaskOfADeadReplicaFails(t *testing.T) {
	shared := sharedMemory{state.NewMemory()}
	dying := &muteStore{sharedMemory: shared}
	var stopped atomic.Int64
	reg, _ := tools.NewRegistry(taskTools(&stopped)...)
	a := &rpc{t: t, base: serveRegistry(t, reg, server.TransportHTTP, server.Options{State: dying, ShutdownGrace: time.Millisecond}), modern: true, ext: true}
	reg2, _ := tools.NewRegistry(taskTools(&stopped)...)
	b := &rpc{t: t, base: serveRegistry(t, reg2, server.TransportHTTP, server.Options{State: shared}), modern: true, ext: true}
	_, m := a.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 1000, "millis_per_step": 100}})
	id := result(t, m)["taskId"].(string)
	b.pollUntil(id, "working")
	dying.mute.Store(true) // replica A stops renewing: as if it died
	start := time.Now()
	r := b.pollUntil(id, "failed")
	if msg := fmt.Sprint(r["statusMessage"]); !strings.Contains(msg, "stopped before the task ended") {
		t.Errorf("task of a dead replica = %v, want failed saying its replica stopped", r)
	}
	t.Logf("seen failed %v after the replica went silent", time.Since(start).Round(100*time.Millisecond))
}

// trainTool is a subprocess tool that may run as a task: a shell loop of
// steps, each a progress line on stderr, that writes its process id to
// pidFile first.
func trainTool(t *testing.T, pidFile string) tools.Tool {
	t.Helper()
	script := `echo $$ > "$PID_FILE"; read -r line || true; n=$(printf %s "$line" | tr -cd 0-9); i=1
while [ $i -le $n ]; do sleep 0.2; echo "{\"progress\": $i, \"total\": $n, \"message\": \"epoch $i of $n\"}" >&2; i=$((i+1)); done
echo '{"output": "trained", "success": true}'`
	cmd, err := remote.NewCommand(remote.CommandConfig{
		Common:  remote.Common{Name: "train", Description: "Train for N epochs (input: N).", Task: tools.TaskOptional, Timeout: time.Minute},
		Command: []string{"sh", "-c", script},
		Env:     map[string]string{"PID_FILE": pidFile},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestSubprocessTask(t *testing.T) {
	pidFile := t.TempDir() + "/pid"
	reg, err := tools.NewRegistry(append(testTools(), trainTool(t, pidFile))...)
	if err != nil {
		t.Fatal(err)
	}
	c := &rpc{t: t, base: serveRegistry(t, reg, server.TransportHTTP, server.Options{}), modern: true, ext: true}

	t.Run("runs with progress", func(t *testing.T) {
		_, m := c.do("tools/call", map[string]any{"name": "train", "arguments": map[string]any{"input": "50"}}) // 10 s
		id := result(t, m)["taskId"].(string)
		seen := map[string]bool{}
		for {
			r := c.pollUntil(id, "working", "completed")
			if msg, _ := r["statusMessage"].(string); strings.HasPrefix(msg, "epoch ") {
				seen[msg] = true
			}
			if r["status"] == "completed" {
				if out := r["result"].(map[string]any); text(out) != "trained" {
					t.Fatalf("result = %v", out)
				}
				break
			}
			time.Sleep(150 * time.Millisecond)
		}
		if len(seen) < 2 {
			t.Errorf("saw %d distinct progress messages while polling (%v), want several", len(seen), seen)
		}
	})

	t.Run("cancel kills the process", func(t *testing.T) {
		_, m := c.do("tools/call", map[string]any{"name": "train", "arguments": map[string]any{"input": "1000"}})
		id := result(t, m)["taskId"].(string)
		var pid int
		deadline := time.Now().Add(10 * time.Second)
		for pid == 0 {
			b, _ := os.ReadFile(pidFile)
			fmt.Sscan(string(b), &pid)
			if time.Now().After(deadline) {
				t.Fatal("the process did not start")
			}
			time.Sleep(20 * time.Millisecond)
		}
		c.pollUntil(id, "working")
		c.do("tasks/cancel", map[string]any{"taskId": id})
		// The whole process group (the shell and its sleep) goes.
		for syscall.Kill(-pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("process group %d still alive after the task was cancelled", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if r := c.pollUntil(id, "cancelled", "completed"); r["status"] != "cancelled" {
			t.Errorf("status %v, want cancelled", r["status"])
		}
	})
}

// stdioRPC talks JSON-RPC to ServeStdio over a pair of pipes.
type stdioRPC struct {
	t    *testing.T
	in   io.Writer
	out  *json.Decoder
	next int
}

func (c *stdioRPC) do(method string, params map[string]any) map[string]any {
	c.t.Helper()
	c.next++
	id := c.next
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	for {
		var m map[string]any
		if err := c.out.Decode(&m); err != nil {
			c.t.Fatalf("%s: reading the answer: %v", method, err)
		}
		if m["id"] == float64(id) {
			return m
		}
	}
}

// stdioTaskSession serves the task tools over stdio with opts through a
// pipe, and initializes a 2025-11-25 session on it: c asks, in is the
// client's end of stdin (closing it ends the input).
func stdioTaskSession(t *testing.T, opts server.Options) (c *stdioRPC, in io.WriteCloser) {
	t.Helper()
	var stopped atomic.Int64
	reg, _ := tools.NewRegistry(taskTools(&stopped)...)
	srv, err := server.New(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // answers still being written
		<-done
	})
	c = &stdioRPC{t: t, in: inW, out: json.NewDecoder(outR)}
	c.do("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
	inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	return c, inW
}

func TestTasksOverStdio(t *testing.T) {
	c, _ := stdioTaskSession(t, server.Options{})

	m := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 2, "millis_per_step": 50}, "task": map[string]any{}})
	task, _ := result(t, m)["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("tools/call with params.task over stdio = %v, want a task", m)
	}
	if r := result(t, c.do("tasks/result", map[string]any{"taskId": id})); text(r) != "done after 2 steps" {
		t.Errorf("tasks/result = %v", r)
	}
	if r := result(t, c.do("tasks/get", map[string]any{"taskId": id})); r["status"] != "completed" {
		t.Errorf("tasks/get = %v", r)
	}
	m = c.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 100, "millis_per_step": 100}, "task": map[string]any{}})
	id = result(t, m)["task"].(map[string]any)["taskId"].(string)
	if r := result(t, c.do("tasks/cancel", map[string]any{"taskId": id})); r["status"] != "cancelled" {
		t.Errorf("tasks/cancel = %v", r)
	}
	if m := c.do("tools/call", map[string]any{"name": "batch", "arguments": map[string]any{"steps": 1, "millis_per_step": 1}}); errorCode(m) != mcp.METHOD_NOT_FOUND {
		t.Errorf("required tool without a task over stdio = %v, want -32601", m)
	}
}
