//go:build !linux

package proc

import "context"

// mustReap reports false: outside Linux there are no subreapers, and
// without /proc the reaper could not tell orphans from children os/exec
// waits for, so even PID 1 does not reap.
func mustReap() bool { return false }

// startReaper is never called: mustReap is false.
func startReaper(context.Context, ReaperConfig) func() { return func() {} }
