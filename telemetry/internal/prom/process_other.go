//go:build !linux && !darwin && !windows

package prom

// read reads nothing: there is no process metric this package can read
// here.
func (c *ProcessCollector) read() procStats { return procStats{} }
