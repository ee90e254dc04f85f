//go:build unix && !linux && !aix

package server

import (
	"io"
	"os"
)

// reopenNonblocking returns nil: only Linux opens a pipe anew through
// /proc/self/fd, so elsewhere a pipe stays blocking.
func reopenNonblocking(int, string) *os.File { return nil }

// watchHangup watches nothing: only Linux watches stdout for a reader that
// went away; elsewhere the next write finds it.
func watchHangup(io.Writer, func()) (stop func()) { return func() {} }
