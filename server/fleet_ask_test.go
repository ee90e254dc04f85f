package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/server"
)

// streamCall POSTs a tools/call and sends every JSON-RPC message of its SSE
// stream to out.
func streamCall(t *testing.T, base, sess string, id int, name string, args map[string]any, out chan<- map[string]any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderSessionID, sess)
	req.Header.Set(mcp.HeaderProtocolVersion, "2025-06-18")
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				var m map[string]any
				if json.Unmarshal([]byte(strings.TrimSpace(d)), &m) == nil {
					out <- m
				}
			}
		}
	}()
}

// TestFleetQuestionsHaveFleetWideIDs: two replicas ask questions in one
// session at once (mcp-go numbers them from 1 on each); the ids the client
// sees differ, and an answer posted to either replica reaches the question
// it answers, never the other.
func TestFleetQuestionsHaveFleetWideIDs(t *testing.T) {
	f := startFleet(t, 2, fleetStores[0].open(t), server.Options{ShutdownGrace: 100 * time.Millisecond})
	s := openFleetSession(t, f.replicas[0], true)
	a, b := make(chan map[string]any, 8), make(chan map[string]any, 8)
	streamCall(t, f.replicas[0], s.id, 11, "send", map[string]any{"to": "alice", "body": "approved by the person"}, a)
	streamCall(t, f.replicas[1], s.id, 12, "send", map[string]any{"to": "mallory", "body": "never approved"}, b)
	qa, qb := <-a, <-b
	if qa["method"] != "elicitation/create" || qb["method"] != "elicitation/create" || qa["id"] == qb["id"] {
		t.Fatalf("questions: %v and %v; want two elicitations with different ids", qa, qb)
	}
	// The person approves the question that named alice; the balancer
	// sends the answer to replica 1.
	ans := map[string]any{"jsonrpc": "2.0", "id": qa["id"], "result": map[string]any{"action": "accept", "content": map[string]any{}}}
	if resp, _ := post(t, f.replicas[1], s.id, ans); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("answer posted to the other replica: HTTP %d, want 202", resp.StatusCode)
	}
	select {
	case m := <-a:
		if r, _ := m["result"].(map[string]any); r == nil || r["isError"] == true {
			t.Errorf("alice's call after its approval: %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("alice's call got no result after its approval")
	}
	if got := f.outbox.list(); len(got) != 1 || got[0] != "alice:approved by the person" {
		t.Errorf("sent %v, want only alice's message", got)
	}
}
