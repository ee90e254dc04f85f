package prom

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// GoCollector writes the Go runtime metrics client_golang's
// collectors.NewGoCollector() writes by default, under the same names,
// types and help texts: go_goroutines, go_threads, go_info,
// go_gc_duration_seconds (a summary of the GC pauses, from
// debug.ReadGCStats), go_memstats_last_gc_time_seconds, the go_memstats_*
// that mirror runtime.MemStats (computed from runtime/metrics, without
// stopping the world), and go_gc_gogc_percent, go_gc_gomemlimit_bytes and
// go_sched_gomaxprocs_threads. Make it with NewGoCollector.
type GoCollector struct {
	memstats []memstatMetric
	gauges   []runtimeGauge // those of the three the runtime has

	mu      sync.Mutex // guards the rest: one read at a time
	samples []metrics.Sample
	index   map[string]int // runtime/metrics name -> samples index
	gc      debug.GCStats
}

// memstatMetric is one go_memstats_* family.
type memstatMetric struct {
	name, help, typ string
	eval            func(*memStats) uint64
}

// runtimeGauge is a runtime/metrics value written as a gauge.
type runtimeGauge struct {
	name, help, rm string
}

// memStats holds the runtime.MemStats fields the memstats metrics show.
type memStats struct {
	alloc, totalAlloc, sys, mallocs, frees                         uint64
	heapAlloc, heapSys, heapIdle, heapInuse, heapReleased, heapObj uint64
	stackInuse, stackSys, mspanInuse, mspanSys, mcacheInuse        uint64
	mcacheSys, buckHashSys, gcSys, otherSys, nextGC                uint64
}

// The runtime/metrics the memstats metrics are computed from, as
// client_golang computes them.
const (
	rmTinyAllocs    = "/gc/heap/tiny/allocs:objects"
	rmAllocsObjects = "/gc/heap/allocs:objects"
	rmFreesObjects  = "/gc/heap/frees:objects"
	rmAllocsBytes   = "/gc/heap/allocs:bytes"
	rmHeapObjects   = "/gc/heap/objects:objects"
	rmHeapGoal      = "/gc/heap/goal:bytes"
	rmTotal         = "/memory/classes/total:bytes"
	rmHeapObjBytes  = "/memory/classes/heap/objects:bytes"
	rmHeapUnused    = "/memory/classes/heap/unused:bytes"
	rmHeapReleased  = "/memory/classes/heap/released:bytes"
	rmHeapFree      = "/memory/classes/heap/free:bytes"
	rmHeapStacks    = "/memory/classes/heap/stacks:bytes"
	rmOSStacks      = "/memory/classes/os-stacks:bytes"
	rmMSpanInuse    = "/memory/classes/metadata/mspan/inuse:bytes"
	rmMSpanFree     = "/memory/classes/metadata/mspan/free:bytes"
	rmMCacheInuse   = "/memory/classes/metadata/mcache/inuse:bytes"
	rmMCacheFree    = "/memory/classes/metadata/mcache/free:bytes"
	rmProfBuckets   = "/memory/classes/profiling/buckets:bytes"
	rmMetaOther     = "/memory/classes/metadata/other:bytes"
	rmOther         = "/memory/classes/other:bytes"
)

// NewGoCollector returns a collector of the Go runtime metrics.
func NewGoCollector() *GoCollector {
	c := &GoCollector{memstats: memstatMetrics(), index: map[string]int{}}
	wanted := []string{
		rmTinyAllocs, rmAllocsObjects, rmFreesObjects, rmAllocsBytes, rmHeapObjects, rmHeapGoal,
		rmTotal, rmHeapObjBytes, rmHeapUnused, rmHeapReleased, rmHeapFree, rmHeapStacks, rmOSStacks,
		rmMSpanInuse, rmMSpanFree, rmMCacheInuse, rmMCacheFree, rmProfBuckets, rmMetaOther, rmOther,
	}
	gauges := []runtimeGauge{
		{name: "go_gc_gogc_percent", rm: "/gc/gogc:percent"},
		{name: "go_gc_gomemlimit_bytes", rm: "/gc/gomemlimit:bytes"},
		{name: "go_sched_gomaxprocs_threads", rm: "/sched/gomaxprocs:threads"},
	}
	// Only what this runtime has: reading another name gives KindBad.
	for _, d := range metrics.All() {
		for _, g := range gauges {
			if g.rm == d.Name {
				// client_golang's help: the runtime's description and the source.
				g.help = d.Description + " Sourced from " + d.Name + "."
				c.gauges = append(c.gauges, g)
				wanted = append(wanted, d.Name)
			}
		}
		for _, w := range wanted {
			if w == d.Name {
				if _, ok := c.index[w]; !ok {
					c.index[w] = len(c.samples)
					c.samples = append(c.samples, metrics.Sample{Name: w})
				}
			}
		}
	}
	c.gc.PauseQuantiles = make([]time.Duration, 5)
	return c
}

func (c *GoCollector) describe() ([]string, error) {
	names := []string{"go_goroutines", "go_threads", "go_info", "go_memstats_last_gc_time_seconds",
		"go_gc_duration_seconds", "go_gc_duration_seconds_sum", "go_gc_duration_seconds_count"} // a summary
	for _, m := range c.memstats {
		names = append(names, m.name)
	}
	for _, g := range c.gauges {
		names = append(names, g.name)
	}
	return names, nil
}

func (c *GoCollector) collect(e *encoder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.family("go_goroutines", "Number of goroutines that currently exist.", typeGauge)
	e.sample("go_goroutines", "", "", "", 0, float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	e.family("go_threads", "Number of OS threads created.", typeGauge)
	e.sample("go_threads", "", "", "", 0, float64(threads))

	debug.ReadGCStats(&c.gc)
	q := c.gc.PauseQuantiles // minimum, 25%, 50%, 75%, maximum
	const gcName = "go_gc_duration_seconds"
	e.family(gcName, "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", typeSummary)
	for i, d := range q {
		e.sample(gcName, "", "", "quantile", float64(i)/float64(len(q)-1), d.Seconds())
	}
	e.sample(gcName, "_sum", "", "", 0, c.gc.PauseTotal.Seconds())
	e.sample(gcName, "_count", "", "", 0, float64(c.gc.NumGC))
	e.family("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", typeGauge)
	e.sample("go_memstats_last_gc_time_seconds", "", "", "", 0, float64(c.gc.LastGC.UnixNano())/1e9)

	e.family("go_info", "Information about the Go environment.", typeGauge)
	e.sample("go_info", "", renderLabels([]string{"version"}, []string{runtime.Version()}), "", 0, 1)

	metrics.Read(c.samples)
	for _, g := range c.gauges {
		e.family(g.name, g.help, typeGauge)
		e.sample(g.name, "", "", "", 0, c.scalar(g.rm))
	}
	ms := c.memStats()
	for _, m := range c.memstats {
		e.family(m.name, m.help, m.typ)
		e.sample(m.name, "", "", "", 0, float64(m.eval(&ms)))
	}
}

// scalar returns the value of the runtime metric name as read last.
func (c *GoCollector) scalar(name string) float64 {
	i, ok := c.index[name]
	if !ok {
		return 0
	}
	switch v := c.samples[i].Value; v.Kind() {
	case metrics.KindUint64:
		return float64(v.Uint64())
	case metrics.KindFloat64:
		return v.Float64()
	}
	return 0
}

// u64 returns the runtime metric name as read last, 0 when missing.
func (c *GoCollector) u64(name string) uint64 {
	if i, ok := c.index[name]; ok && c.samples[i].Value.Kind() == metrics.KindUint64 {
		return c.samples[i].Value.Uint64()
	}
	return 0
}

// memStats computes the MemStats fields from the runtime metrics, as
// client_golang's memStatsFromRM does.
func (c *GoCollector) memStats() memStats {
	var ms memStats
	tiny := c.u64(rmTinyAllocs)
	ms.mallocs = c.u64(rmAllocsObjects) + tiny
	ms.frees = c.u64(rmFreesObjects) + tiny
	ms.totalAlloc = c.u64(rmAllocsBytes)
	ms.sys = c.u64(rmTotal)
	ms.heapAlloc = c.u64(rmHeapObjBytes)
	ms.alloc = ms.heapAlloc
	ms.heapInuse = ms.heapAlloc + c.u64(rmHeapUnused)
	ms.heapReleased = c.u64(rmHeapReleased)
	ms.heapIdle = ms.heapReleased + c.u64(rmHeapFree)
	ms.heapSys = ms.heapInuse + ms.heapIdle
	ms.heapObj = c.u64(rmHeapObjects)
	ms.stackInuse = c.u64(rmHeapStacks)
	ms.stackSys = ms.stackInuse + c.u64(rmOSStacks)
	ms.mspanInuse = c.u64(rmMSpanInuse)
	ms.mspanSys = ms.mspanInuse + c.u64(rmMSpanFree)
	ms.mcacheInuse = c.u64(rmMCacheInuse)
	ms.mcacheSys = ms.mcacheInuse + c.u64(rmMCacheFree)
	ms.buckHashSys = c.u64(rmProfBuckets)
	ms.gcSys = c.u64(rmMetaOther)
	ms.otherSys = c.u64(rmOther)
	ms.nextGC = c.u64(rmHeapGoal)
	return ms
}

// memstatMetrics are client_golang's go_memstats_* families (its
// goRuntimeMemStats), help texts verbatim.
func memstatMetrics() []memstatMetric {
	ms := []memstatMetric{
		{"alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", typeGauge, func(m *memStats) uint64 { return m.alloc }},
		{"alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", typeCounter, func(m *memStats) uint64 { return m.totalAlloc }},
		{"sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", typeGauge, func(m *memStats) uint64 { return m.sys }},
		{"mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", typeCounter, func(m *memStats) uint64 { return m.mallocs }},
		{"frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", typeCounter, func(m *memStats) uint64 { return m.frees }},
		{"heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", typeGauge, func(m *memStats) uint64 { return m.heapAlloc }},
		{"heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", typeGauge, func(m *memStats) uint64 { return m.heapSys }},
		{"heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", typeGauge, func(m *memStats) uint64 { return m.heapIdle }},
		{"heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", typeGauge, func(m *memStats) uint64 { return m.heapInuse }},
		{"heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", typeGauge, func(m *memStats) uint64 { return m.heapReleased }},
		{"heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", typeGauge, func(m *memStats) uint64 { return m.heapObj }},
		{"stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", typeGauge, func(m *memStats) uint64 { return m.stackInuse }},
		{"stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", typeGauge, func(m *memStats) uint64 { return m.stackSys }},
		{"mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", typeGauge, func(m *memStats) uint64 { return m.mspanInuse }},
		{"mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", typeGauge, func(m *memStats) uint64 { return m.mspanSys }},
		{"mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", typeGauge, func(m *memStats) uint64 { return m.mcacheInuse }},
		{"mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", typeGauge, func(m *memStats) uint64 { return m.mcacheSys }},
		{"buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", typeGauge, func(m *memStats) uint64 { return m.buckHashSys }},
		{"gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", typeGauge, func(m *memStats) uint64 { return m.gcSys }},
		{"other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", typeGauge, func(m *memStats) uint64 { return m.otherSys }},
		{"next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", typeGauge, func(m *memStats) uint64 { return m.nextGC }},
	}
	for i := range ms {
		ms[i].name = "go_memstats_" + ms[i].name
	}
	return ms
}
