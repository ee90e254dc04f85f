package prom

import "sync"

// ProcessCollector writes the process metrics client_golang's
// collectors.NewProcessCollector(ProcessCollectorOpts{}) writes, under the
// same names, types and help texts: process_cpu_seconds_total,
// process_open_fds, process_max_fds, process_virtual_memory_bytes,
// process_virtual_memory_max_bytes, process_resident_memory_bytes,
// process_start_time_seconds and process_network_{receive,transmit}_bytes_total.
// On Linux it reads them from /proc/self and the resource limits; on
// macOS it writes those it can read without cgo (CPU time, descriptors,
// limits, start time); on Windows those client_golang writes there (no
// network counters, no virtual memory limit; handles for descriptors);
// elsewhere none. A value it cannot read is left out, as client_golang
// leaves it out. Make it with NewProcessCollector.
type ProcessCollector struct {
	mu    sync.Mutex // one read at a time
	start float64    // process_start_time_seconds once known, else 0
}

// NewProcessCollector returns a collector of the process metrics.
func NewProcessCollector() *ProcessCollector { return &ProcessCollector{} }

// procStat is one process metric, read or not.
type procStat struct {
	v  float64
	ok bool
}

// procStats are the process metrics as read at one moment.
type procStats struct {
	cpu, openFDs, maxFDs, vsize, maxVsize, rss, start, netIn, netOut procStat
}

func (c *ProcessCollector) describe() ([]string, error) {
	var names []string
	for _, m := range processMetrics(&procStats{}) {
		names = append(names, m.name)
	}
	return names, nil
}

func (c *ProcessCollector) collect(e *encoder) {
	c.mu.Lock()
	s := c.read()
	c.mu.Unlock()
	for _, m := range processMetrics(&s) {
		if m.stat.ok {
			e.family(m.name, m.help, m.typ)
			e.sample(m.name, "", "", "", 0, m.stat.v)
		}
	}
}

// processMetric is one process family and its value.
type processMetric struct {
	name, help, typ string
	stat            procStat
}

// processMetrics names the values of s as client_golang does.
func processMetrics(s *procStats) []processMetric {
	return []processMetric{
		{"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", typeCounter, s.cpu},
		{"process_open_fds", "Number of open file descriptors.", typeGauge, s.openFDs},
		{"process_max_fds", "Maximum number of open file descriptors.", typeGauge, s.maxFDs},
		{"process_virtual_memory_bytes", "Virtual memory size in bytes.", typeGauge, s.vsize},
		{"process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", typeGauge, s.maxVsize},
		{"process_resident_memory_bytes", "Resident memory size in bytes.", typeGauge, s.rss},
		{"process_start_time_seconds", "Start time of the process since unix epoch in seconds.", typeGauge, s.start},
		{"process_network_receive_bytes_total", "Number of bytes received by the process over the network.", typeCounter, s.netIn},
		{"process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", typeCounter, s.netOut},
	}
}
