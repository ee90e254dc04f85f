package server

import "log/slog"

// LevelTrace is a level below DEBUG: at it, New logs each tool
// descriptor's JSON. A logger that should show those lines is built with
// this level or lower (cmd/mcp-tools names it TRACE).
const LevelTrace = slog.Level(-8)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
