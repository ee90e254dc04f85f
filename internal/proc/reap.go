package proc

import (
	"context"
	"log/slog"
	"time"
)

// DefaultRescan is ReaperConfig.Rescan's default.
const DefaultRescan = 5 * time.Second

// ReaperConfig configures StartReaper. Its zero value works.
type ReaperConfig struct {
	// Rescan is how often the reaper looks for zombies without being
	// woken by SIGCHLD (signals coalesce, and a zombie skipped because
	// its pid was still on the record needs a later look). Zero:
	// DefaultRescan.
	Rescan time.Duration
	// Logger gets a DEBUG line for each reaped process and a WARN line
	// when /proc cannot be read. Nil: discarded.
	Logger *slog.Logger
}

// StartReaper starts a reaper when the process must reap what it inherits:
// when it is PID 1 or a child subreaper (Linux only; elsewhere it never runs). Otherwise it starts
// nothing and returns running false. The reaper wakes on SIGCHLD and every
// cfg.Rescan, and reaps each zombie child of this process that Start is
// not waiting for. It runs until ctx ends or stop is called; stop ends it
// and waits for it, and may be called more than once.
func StartReaper(ctx context.Context, cfg ReaperConfig) (stop func(), running bool) {
	if cfg.Rescan <= 0 {
		cfg.Rescan = DefaultRescan
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if !mustReap() {
		return func() {}, false
	}
	return startReaper(ctx, cfg), true
}
