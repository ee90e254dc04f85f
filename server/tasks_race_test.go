package server_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/state"
)

// slowUpdates delays the write of a progress update of a working task
// record (a slow Redis), and says when one is in flight.
type slowUpdates struct {
	state.Store
	inFlight chan struct{}
	once     atomic.Bool
}

func (s *slowUpdates) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if bytes.HasPrefix([]byte(key), []byte("task:")) && bytes.Contains(v, []byte(`"s":"working"`)) && bytes.Contains(v, []byte(`"m":"step`)) && s.once.CompareAndSwap(false, true) {
		close(s.inFlight)
		time.Sleep(400 * time.Millisecond)
	}
	return s.Store.Set(ctx, key, v, ttl)
}

// TestCancelledTaskStaysCancelled: a progress update that read the
// working record before a cancel and writes it back after cannot revive
// the task.
func TestCancelledTaskStaysCancelled(t *testing.T) {
	var stopped atomic.Int64
	m := state.NewMemory()
	t.Cleanup(func() { m.Close() })
	st := &slowUpdates{Store: m, inFlight: make(chan struct{})}
	base := startTaskServer(t, server.Options{State: st}, &stopped)
	c := &rpc{t: t, base: base, modern: true, ext: true}
	_, resp := c.do("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 200, "millis_per_step": 20}})
	id := result(t, resp)["taskId"].(string)
	<-st.inFlight // a progress update has read the working record and is writing it back
	c.do("tasks/cancel", map[string]any{"taskId": id})
	deadline := time.Now().Add(2 * time.Second)
	var last any
	for time.Now().Before(deadline) {
		_, m := c.do("tasks/get", map[string]any{"taskId": id})
		last = result(t, m)["status"]
		time.Sleep(200 * time.Millisecond)
	}
	if last != "cancelled" {
		t.Errorf("2 s after tasks/cancel the task reads %v, want cancelled", last)
	}
}
