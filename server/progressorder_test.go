package server_test

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestStdioProgressBeforeResult: over a real pipe, a call's progress
// notifications all arrive before its result, on the fast path and on
// mcp-go's (README: "the last one always arrives before the result"). They
// used to go through mcp-go's notification queue, which its own goroutine
// writes, and mostly came out after the result, for a token the client had
// already forgotten.
func TestStdioProgressBeforeResult(t *testing.T) {
	r := startRaw(t)
	for i := range 40 {
		extra := ""
		if i%2 == 1 {
			extra = `,"x-slow":true` // mcp-go's path
		}
		token := fmt.Sprintf("p%d", i)
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":%q}%s}}`, i, token, extra))
		var seen []float64
		for len(seen) < 2 {
			line, err := r.out.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v (stderr: %s)", err, r.stderr.String())
			}
			var m struct {
				ID     any    `json:"id"`
				Method string `json:"method"`
				Params struct {
					Token    string  `json:"progressToken"`
					Progress float64 `json:"progress"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("not JSON: %q", line)
			}
			if m.Method == "" {
				t.Fatalf("call %d (slow %v): its result came after %d of its 2 progress notifications: %s", i, extra != "", len(seen), line)
			}
			if m.Params.Token != token {
				t.Fatalf("call %d: a notification for %q: %s", i, m.Params.Token, line)
			}
			seen = append(seen, m.Params.Progress)
		}
		line, err := r.out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			ID float64 `json:"id"`
		}
		if json.Unmarshal([]byte(line), &res); res.ID != float64(i) {
			t.Fatalf("call %d: after its progress, %s", i, line)
		}
	}
}
