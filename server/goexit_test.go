package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// goexitAnswer is what a call of the goexit tool must be answered with.
const goexitAnswer = `internal error in tool "goexit"`

// TestGoexitIsAnswered: a tool that ends its goroutine with
// runtime.Goexit cannot be stopped, as a panic can, but its call is still
// answered, as an internal error, and the server goes on serving: on both
// fast paths (over streamable HTTP the connection used to close with no
// response), on stdio when mcp-go runs the call (each such call used to end
// one of mcp-go's stdio workers for good), in Server.Call (which used to
// end its caller's goroutine: in mcp-tools call, the process), and in a
// task (which used to end only when seen later as the task of a dead
// replica). mcp-go's other paths (legacy SSE, and the calls the HTTP fast
// path leaves to mcp-go) still leave such a call unanswered: a goroutine
// per call there doubled a call's time.
func TestGoexitIsAnswered(t *testing.T) {
	// More calls than the stdio fast path keeps workers (64), so that a
	// path that lost a worker per call would show it.
	const calls = 70
	viaClient := func(t *testing.T, c *client.Client) {
		t.Helper()
		for i := range calls {
			res, err := callTool(t, c, "goexit", map[string]any{})
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if !res.IsError || errorKind(res) != "internal_error" || !strings.Contains(resultText(res), goexitAnswer) {
				t.Fatalf("call %d = %v %q %q", i, res.IsError, resultText(res), errorKind(res))
			}
		}
		if res := mustCall(t, c, "echo", map[string]any{"text": "still here"}); resultText(res) != "still here" {
			t.Errorf("after goexit echo = %q", resultText(res))
		}
	}
	t.Run("streamable HTTP (the fast path)", func(t *testing.T) {
		viaClient(t, httpClient(t, startHTTP(t, server.TransportHTTP, server.Options{}), nil))
	})
	// extra, a member of params besides name and arguments, leaves the
	// call to mcp-go, whose stdio server runs it on a fixed pool of
	// workers (64): a worker lost per call would show.
	stdio := func(extra string) func(t *testing.T) {
		return func(t *testing.T) {
			s := startPipeSession(t)
			for i := range calls {
				id := fmt.Sprintf(`"g-%d"`, i)
				m := s.ask(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"goexit"`+extra+`}}`, id)
				r, _ := m["result"].(map[string]any)
				if r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), goexitAnswer) {
					t.Fatalf("call %d = %v", i, m)
				}
			}
			m := s.ask(t, `{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}`+extra+`}}`, `"e"`)
			if !strings.Contains(fmt.Sprint(m["result"]), "still here") {
				t.Errorf("after goexit echo = %v", m)
			}
		}
	}
	t.Run("stdio (the fast path)", stdio(""))
	t.Run("stdio (mcp-go's path)", stdio(`,"x-slow":1`))
	t.Run("Server.Call (mcp-go's path)", func(t *testing.T) {
		srv := newServer(t, server.Options{})
		for i := range calls {
			res, err := srv.Call(context.Background(), "goexit", nil, server.CallOptions{})
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if !res.IsError || res.Kind != tools.KindInternal || !strings.Contains(res.Text, goexitAnswer) {
				t.Fatalf("call %d = %+v", i, res)
			}
		}
	})
	t.Run("a task", func(t *testing.T) {
		var goexit tools.Tool
		for _, tl := range testTools() {
			if tl.Info().Name == "goexit" {
				info := tl.Info()
				info.Task = tools.TaskOptional
				goexit = tools.WithInfo(tl, info)
			}
		}
		reg, err := tools.NewRegistry(goexit)
		if err != nil {
			t.Fatal(err)
		}
		c := legacyRPC(t, serveRegistry(t, reg, server.TransportHTTP, server.Options{}))
		_, m := c.do("tools/call", map[string]any{"name": "goexit", "task": map[string]any{"ttl": 60000}})
		task, _ := result(t, m)["task"].(map[string]any)
		id, _ := task["taskId"].(string)
		if id == "" {
			t.Fatalf("no task: %v", m)
		}
		r := c.pollUntil(id, "completed", "failed")
		b, _ := json.Marshal(r)
		// Ended by its own replica, with the tool's outcome (an error
		// result: failed), not seen later as the task of a replica that
		// died.
		if r["status"] != "failed" || !strings.Contains(fmt.Sprint(r["statusMessage"]), goexitAnswer) {
			t.Errorf("task = %s, want failed with the internal error", b)
		}
	})
}
