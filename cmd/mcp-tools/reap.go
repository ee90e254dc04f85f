package main

import (
	"context"

	"github.com/mcp-tools/mcp-tools/internal/proc"
)

// startReaper starts reaping orphaned processes when mcp-tools runs as
// PID 1 (a container without an init) or as a child subreaper, and does
// nothing otherwise. Tool processes leave grandchildren that outlive
// them; without a reaper each would stay a zombie for good. stop ends the
// reaper and waits for it.
func startReaper(ctx context.Context) (stop func()) {
	stop, _ = proc.StartReaper(ctx, proc.ReaperConfig{})
	return stop
}
