//go:build !unix

package server

import "io"

// pollable returns in unchanged: only Unix pipes are made pollable.
func pollable(in io.Reader) (io.Reader, func()) { return in, func() {} }
