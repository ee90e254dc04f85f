package prom

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// read reads the process metrics macOS gives without cgo, as
// client_golang (built without cgo) reads them: no memory sizes, no
// network counters.
func (c *ProcessCollector) read() procStats {
	var s procStats
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.cpu = procStat{time.Duration(ru.Stime.Nano() + ru.Utime.Nano()).Seconds(), true}
	}
	if d, err := os.Open("/dev/fd"); err == nil {
		names, err := d.Readdirnames(0)
		d.Close()
		if err == nil {
			s.openFDs = procStat{float64(len(names) - 1), true} // less the one just opened
		}
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		s.maxFDs = procStat{float64(lim.Cur), true}
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		s.maxVsize = procStat{float64(lim.Cur), true}
	}
	if c.start == 0 {
		if p, err := unix.SysctlKinfoProc("kern.proc.pid", os.Getpid()); err == nil {
			c.start = float64(p.Proc.P_starttime.Nano() / 1e9)
		}
	}
	s.start = procStat{c.start, c.start != 0}
	return s
}
