package prom

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of the clock ticks in /proc (USER_HZ), 100 on every
// Linux the Go runtime supports; procfs assumes it too.
const userHZ = 100

// read reads the process metrics from /proc/self and getrlimit, as
// client_golang (through procfs) reads them.
func (c *ProcessCollector) read() procStats {
	var s procStats
	if f, err := statFields(); err == nil {
		utime, _ := strconv.ParseUint(f[14], 10, 64)
		stime, _ := strconv.ParseUint(f[15], 10, 64)
		vsize, _ := strconv.ParseUint(f[23], 10, 64)
		rss, _ := strconv.ParseInt(f[24], 10, 64)
		s.cpu = procStat{float64(utime+stime) / userHZ, true}
		s.vsize = procStat{float64(vsize), true}
		s.rss = procStat{float64(rss * int64(os.Getpagesize())), true}
		if c.start == 0 {
			if boot, err := bootTime(); err == nil {
				ticks, _ := strconv.ParseUint(f[22], 10, 64)
				c.start = float64(boot) + float64(ticks)/userHZ
			}
		}
		s.start = procStat{c.start, c.start != 0}
	}
	if n, err := openFDs(); err == nil {
		s.openFDs = procStat{float64(n), true}
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		s.maxFDs = procStat{float64(lim.Cur), true}
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		s.maxVsize = procStat{float64(lim.Cur), true}
	}
	if in, out, err := netOctets(); err == nil {
		s.netIn, s.netOut = procStat{in, true}, procStat{out, true}
	}
	return s
}

// statFields returns the fields of /proc/self/stat numbered as in proc(5):
// f[1] the pid, f[2] the command, f[3] the state and so on.
func statFields() ([]string, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil, err
	}
	// The command, in parentheses, may hold spaces and parentheses.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return nil, os.ErrInvalid
	}
	f := append([]string{"", strings.TrimSpace(string(b[:open])), string(b[open+1 : end])}, strings.Fields(string(b[end+1:]))...)
	if len(f) <= 24 {
		return nil, os.ErrInvalid
	}
	return f, nil
}

// bootTime returns the system's boot time, in seconds since the epoch,
// from the btime line of /proc/stat.
func bootTime() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			return strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
		}
	}
	return 0, os.ErrNotExist
}

// openFDs counts the open file descriptors: the size of /proc/self/fd
// where the kernel reports it (6.2 and later), else its entries.
func openFDs() (int, error) {
	if fi, err := os.Stat("/proc/self/fd"); err == nil && fi.Size() > 0 {
		return int(fi.Size()), nil
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names), err
}

// netOctets returns the IpExt InOctets and OutOctets of
// /proc/self/net/netstat (0 when absent, as procfs reads them).
func netOctets() (in, out float64, err error) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, err
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "IpExt:" || len(names) != len(values) {
			continue
		}
		for j, n := range names {
			switch n {
			case "InOctets":
				in, _ = strconv.ParseFloat(values[j], 64)
			case "OutOctets":
				out, _ = strconv.ParseFloat(values[j], 64)
			}
		}
	}
	return in, out, nil
}
