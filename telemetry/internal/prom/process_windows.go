package prom

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows calls x/sys/windows does not wrap, loaded from System32 on
// first use.
var (
	procGetProcessMemoryInfo  = windows.NewLazySystemDLL("psapi.dll").NewProc("GetProcessMemoryInfo")
	procGetProcessHandleCount = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetProcessHandleCount")
)

// processMemoryCounters is PROCESS_MEMORY_COUNTERS_EX.
type processMemoryCounters struct {
	cb                         uint32
	pageFaultCount             uint32
	peakWorkingSetSize         uintptr
	workingSetSize             uintptr
	quotaPeakPagedPoolUsage    uintptr
	quotaPagedPoolUsage        uintptr
	quotaPeakNonPagedPoolUsage uintptr
	quotaNonPagedPoolUsage     uintptr
	pagefileUsage              uintptr
	peakPagefileUsage          uintptr
	privateUsage               uintptr
}

// maxHandles is what client_golang writes as process_max_fds: Windows
// has a fixed limit of handles, not one per process.
const maxHandles = 16 * 1024 * 1024

// read reads the process metrics as client_golang's Windows collector
// reads them: start and CPU times, private bytes (as the virtual memory
// size), the working set (as the resident memory), and handles (as file
// descriptors). As there, the first call that fails leaves out its
// metrics and every later one.
func (c *ProcessCollector) read() procStats {
	var s procStats
	h := windows.CurrentProcess()
	var start, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &start, &exit, &kernel, &user) != nil {
		return s
	}
	s.start = procStat{float64(start.Nanoseconds() / 1e9), true}
	s.cpu = procStat{fileTimeSeconds(kernel) + fileTimeSeconds(user), true}

	if procGetProcessMemoryInfo.Find() != nil || procGetProcessHandleCount.Find() != nil {
		return s // Call would panic
	}
	mem := processMemoryCounters{cb: uint32(unsafe.Sizeof(processMemoryCounters{}))}
	if ok, _, _ := procGetProcessMemoryInfo.Call(uintptr(h), uintptr(unsafe.Pointer(&mem)), uintptr(mem.cb)); ok == 0 {
		return s
	}
	s.vsize = procStat{float64(mem.privateUsage), true}
	s.rss = procStat{float64(mem.workingSetSize), true}

	var handles uint32
	if ok, _, _ := procGetProcessHandleCount.Call(uintptr(h), uintptr(unsafe.Pointer(&handles))); ok == 0 {
		return s
	}
	s.openFDs = procStat{float64(handles), true}
	s.maxFDs = procStat{maxHandles, true}
	return s
}

// fileTimeSeconds returns a duration given as a FILETIME (in 100 ns
// units), in seconds.
func fileTimeSeconds(ft windows.Filetime) float64 {
	return float64(uint64(ft.HighDateTime)<<32+uint64(ft.LowDateTime)) / 1e7
}
