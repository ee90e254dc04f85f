package server_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

// TestTasksHoldTheirSessionsPlaces: a session's running tasks count against
// its --max-in-flight, as its calls do.
func TestTasksHoldTheirSessionsPlaces(t *testing.T) {
	var running, peak atomic.Int64
	hold := typed.MustNew("hold", "Hold a place.", func(ctx context.Context, _ struct{}) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		select {
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
		}
		return "ok", nil
	})
	info := hold.Info()
	info.Task = tools.TaskOptional
	reg, err := tools.NewRegistry(tools.WithInfo(hold, info))
	if err != nil {
		t.Fatal(err)
	}
	base := serveRegistry(t, reg, server.TransportHTTP, server.Options{MaxInFlight: 2, ShutdownGrace: time.Millisecond})
	c := legacyRPC(t, base)
	for range 20 {
		c.do("tools/call", map[string]any{"name": "hold", "arguments": map[string]any{}, "task": map[string]any{}})
	}
	time.Sleep(300 * time.Millisecond)
	if p := peak.Load(); p > 2 {
		t.Errorf("%d calls of one session ran at once, MaxInFlight is 2", p)
	}
}
