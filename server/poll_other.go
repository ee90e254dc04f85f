//go:build !unix || aix

package server

import "io"

// pollable returns in unchanged: stdin is read through the poller only
// on the Unix systems of poll_unix.go.
func pollable(in io.Reader) (io.Reader, func()) { return in, func() {} }

// watchHangup watches nothing: only Linux watches stdout for a reader that
// went away; elsewhere the next write finds it.
func watchHangup(io.Writer, func()) (stop func()) { return func() {} }
