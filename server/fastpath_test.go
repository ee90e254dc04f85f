package server_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sameAnswerCalls are tools/call params that both fast paths must answer
// as mcp-go's path does (see the tools of startRaw and newFastAndSlow).
var sameAnswerCalls = []string{
	`"name":"echo","arguments":{"text":"héllo \"quoted\" \u2028"}`,
	`"name":"add","arguments":{"a":2,"b":40}`,
	`"name":"add","arguments":{"a":"two","b":40}`,
	`"name":"add","arguments":{"a":2}`,
	`"name":"fail","arguments":{}`,
	`"name":"boom","arguments":{}`,
	`"name":"shout","arguments":{"input":"hey"}`,
	`"name":"echo"`,
	`"name":"echo","arguments":null`,
}

// TestFastPathAnswersAsMCPGo: a tools/call answered by the stdio fast path
// gets the response mcp-go's own path gives the same call. An extra member
// in params (here "x-slow") sends a call down mcp-go's path, so each call is
// made both ways over one real pipe and the answers compared.
func TestFastPathAnswersAsMCPGo(t *testing.T) {
	r := startRaw(t)
	calls := append(slices.Clone(sameAnswerCalls),
		`"name":"big","arguments":{"n":3}`,
		`"name":"progress","arguments":{},"_meta":{"progressToken":"p1"}`,
	)
	answer := func(id string) map[string]any {
		t.Helper()
		for {
			line, err := r.out.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v (stderr: %s)", err, r.stderr.String())
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("not JSON: %q", line)
			}
			if m["method"] != nil {
				continue // a progress notification
			}
			if fmt.Sprint(m["id"]) != id {
				t.Fatalf("got an answer for %v, want %s", m["id"], id)
			}
			delete(m, "id")
			return m
		}
	}
	for i, params := range calls {
		fastID, slowID := fmt.Sprintf("fast-%d", i), fmt.Sprintf("slow-%d", i)
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{%s}}`, fastID, params))
		fast := answer(fastID)
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{%s,"x-slow":true}}`, slowID, params))
		slow := answer(slowID)
		if !reflect.DeepEqual(fast, slow) {
			f, _ := json.Marshal(fast)
			s, _ := json.Marshal(slow)
			t.Errorf("call {%s}:\n fast path: %s\n mcp-go:    %s", params, f, s)
		}
	}
	if !strings.Contains(r.stderr.String(), "echo(") {
		t.Errorf("the calls were not logged: %s", r.stderr.String())
	}
}
