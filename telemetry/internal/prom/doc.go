// Package prom keeps counters, gauges and histograms and writes them in the
// Prometheus text exposition format 0.0.4, byte for byte as the Prometheus
// client library (client_golang's promhttp with expfmt) writes the same
// metrics: families sorted by name, each with its # HELP and # TYPE lines,
// series sorted by their label values, label pairs sorted by label name,
// families without a series left out.
//
// It does only what the telemetry package needs: families with fixed label
// names whose series are made once and kept (CounterVec, GaugeVec,
// HistogramVec, with fixed buckets), the Go runtime and process metrics
// of client_golang's default collectors under the same names (GoCollector,
// ProcessCollector), a Registry that writes them all, and an HTTP Handler.
// There are no exemplars, native histograms, summaries of observations,
// timestamps, OpenMetrics or protobuf.
//
// Recording is cheap and never allocates: a series is a handful of atomic
// words; counters and gauges are lock-free; a histogram's observation is
// lock-free too, and its snapshot is consistent (the +Inf bucket equals
// the count, the buckets never exceed it) however many observe at once.
package prom
