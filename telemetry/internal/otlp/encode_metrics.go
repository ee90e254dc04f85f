package otlp

import (
	"fmt"
	"math"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/encoding/protowire"
)

// metricsRequest encodes rm as an ExportMetricsServiceRequest, field for
// field as OpenTelemetry's OTLP metric exporters write it (a test
// compares the two). A metric of an unknown aggregation or temporality is
// left out, and named in the error; the others are encoded.
func metricsRequest(rm *metricdata.ResourceMetrics) ([]byte, error) {
	var bad []string
	b := appendMessage(nil, 1, func(b []byte) []byte {
		// ResourceMetrics: resource (1), scope_metrics (2), schema_url (3).
		b = appendMessage(b, 1, func(b []byte) []byte { return appendAttributes(b, 1, rm.Resource.Iter()) })
		for _, sm := range rm.ScopeMetrics {
			b = appendMessage(b, 2, func(b []byte) []byte {
				// ScopeMetrics: scope (1), metrics (2), schema_url (3).
				b = appendMessage(b, 1, func(b []byte) []byte {
					return appendScope(b, sm.Scope.Name, sm.Scope.Version, sm.Scope.Attributes.Iter())
				})
				for _, m := range sm.Metrics {
					mark, ok := len(b), false
					b = appendMessage(b, 2, func(b []byte) []byte {
						b, ok = appendMetric(b, m)
						return b
					})
					if !ok {
						b = b[:mark]
						bad = append(bad, fmt.Sprintf("%s (%T)", m.Name, m.Data))
					}
				}
				return appendString(b, 3, sm.Scope.SchemaURL)
			})
		}
		return appendString(b, 3, rm.Resource.SchemaURL())
	})
	if bad != nil {
		return b, fmt.Errorf("otlp: metrics of an unknown aggregation or temporality left out: %v", bad)
	}
	return b, nil
}

// appendMetric appends the fields of a Metric: name (1), description
// (2), unit (3) and its data, a oneof; false for an aggregation or
// temporality OTLP has no form for.
func appendMetric(b []byte, m metricdata.Metrics) ([]byte, bool) {
	b = appendString(b, 1, m.Name)
	b = appendString(b, 2, m.Description)
	b = appendString(b, 3, m.Unit)
	switch a := m.Data.(type) {
	case metricdata.Gauge[int64]:
		return appendGauge(b, a), true
	case metricdata.Gauge[float64]:
		return appendGauge(b, a), true
	case metricdata.Sum[int64]:
		return appendSum(b, a)
	case metricdata.Sum[float64]:
		return appendSum(b, a)
	case metricdata.Histogram[int64]:
		return appendHistogram(b, a)
	case metricdata.Histogram[float64]:
		return appendHistogram(b, a)
	case metricdata.ExponentialHistogram[int64]:
		return appendExpHistogram(b, a)
	case metricdata.ExponentialHistogram[float64]:
		return appendExpHistogram(b, a)
	case metricdata.Summary:
		return appendSummary(b, a), true
	}
	return b, false
}

// temporality is t as OTLP's AggregationTemporality enum; false when
// OTLP has none for it.
func temporality(t metricdata.Temporality) (uint64, bool) {
	switch t {
	case metricdata.DeltaTemporality:
		return 1, true
	case metricdata.CumulativeTemporality:
		return 2, true
	}
	return 0, false
}

// appendGauge appends Metric.gauge (5): a Gauge of data_points (1).
func appendGauge[N int64 | float64](b []byte, g metricdata.Gauge[N]) []byte {
	return appendMessage(b, 5, func(b []byte) []byte { return appendNumberPoints(b, g.DataPoints) })
}

// appendSum appends Metric.sum (7): a Sum of data_points (1),
// aggregation_temporality (2), is_monotonic (3).
func appendSum[N int64 | float64](b []byte, s metricdata.Sum[N]) ([]byte, bool) {
	t, ok := temporality(s.Temporality)
	if !ok {
		return b, false
	}
	return appendMessage(b, 7, func(b []byte) []byte {
		b = appendNumberPoints(b, s.DataPoints)
		b = appendVarint(b, 2, t)
		return appendVarint(b, 3, protowire.EncodeBool(s.IsMonotonic))
	}), true
}

// appendNumberPoints appends each point as a NumberDataPoint in field 1:
// start_time_unix_nano (2), time_unix_nano (3), exemplars (5),
// attributes (7), then the value oneof: as_double (4) or as_int (6).
func appendNumberPoints[N int64 | float64](b []byte, pts []metricdata.DataPoint[N]) []byte {
	for _, p := range pts {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendFixed64(b, 2, unixNano(p.StartTime))
			b = appendFixed64(b, 3, unixNano(p.Time))
			b = appendExemplars(b, 5, p.Exemplars)
			b = appendAttributes(b, 7, p.Attributes.Iter())
			return appendNumber(b, 4, 6, p.Value)
		})
	}
	return b
}

// appendNumber appends v, a oneof member written even when zero: as a
// double in field asDouble, or an sfixed64 in field asInt.
func appendNumber[N int64 | float64](b []byte, asDouble, asInt protowire.Number, v N) []byte {
	switch v := any(v).(type) {
	case float64:
		return appendFixed64Always(b, asDouble, math.Float64bits(v))
	case int64:
		return appendFixed64Always(b, asInt, uint64(v))
	}
	return b
}

// appendHistogram appends Metric.histogram (9): a Histogram of
// data_points (1) and aggregation_temporality (2).
func appendHistogram[N int64 | float64](b []byte, h metricdata.Histogram[N]) ([]byte, bool) {
	t, ok := temporality(h.Temporality)
	if !ok {
		return b, false
	}
	return appendMessage(b, 9, func(b []byte) []byte {
		for _, p := range h.DataPoints {
			b = appendMessage(b, 1, func(b []byte) []byte {
				// HistogramDataPoint: start_time_unix_nano (2),
				// time_unix_nano (3), count (4), sum (5, optional: always
				// set), bucket_counts (6), explicit_bounds (7), exemplars
				// (8), attributes (9), min (11), max (12).
				b = appendFixed64(b, 2, unixNano(p.StartTime))
				b = appendFixed64(b, 3, unixNano(p.Time))
				b = appendFixed64(b, 4, p.Count)
				b = appendFixed64Always(b, 5, math.Float64bits(float64(p.Sum)))
				b = appendPackedFixed64(b, 6, p.BucketCounts)
				b = appendPackedDouble(b, 7, p.Bounds)
				b = appendExemplars(b, 8, p.Exemplars)
				b = appendAttributes(b, 9, p.Attributes.Iter())
				b = appendExtremum(b, 11, p.Min)
				return appendExtremum(b, 12, p.Max)
			})
		}
		return appendVarint(b, 2, t)
	}), true
}

// appendExpHistogram appends Metric.exponential_histogram (10): an
// ExponentialHistogram of data_points (1) and aggregation_temporality (2).
func appendExpHistogram[N int64 | float64](b []byte, h metricdata.ExponentialHistogram[N]) ([]byte, bool) {
	t, ok := temporality(h.Temporality)
	if !ok {
		return b, false
	}
	return appendMessage(b, 10, func(b []byte) []byte {
		for _, p := range h.DataPoints {
			b = appendMessage(b, 1, func(b []byte) []byte {
				// ExponentialHistogramDataPoint: attributes (1),
				// start_time_unix_nano (2), time_unix_nano (3), count (4),
				// sum (5, optional: always set), scale (6), zero_count (7),
				// positive (8), negative (9), exemplars (11), min (12),
				// max (13), zero_threshold (14).
				b = appendAttributes(b, 1, p.Attributes.Iter())
				b = appendFixed64(b, 2, unixNano(p.StartTime))
				b = appendFixed64(b, 3, unixNano(p.Time))
				b = appendFixed64(b, 4, p.Count)
				b = appendFixed64Always(b, 5, math.Float64bits(float64(p.Sum)))
				b = appendSint32(b, 6, p.Scale)
				b = appendFixed64(b, 7, p.ZeroCount)
				b = appendBuckets(b, 8, p.PositiveBucket)
				b = appendBuckets(b, 9, p.NegativeBucket)
				b = appendExemplars(b, 11, p.Exemplars)
				b = appendExtremum(b, 12, p.Min)
				b = appendExtremum(b, 13, p.Max)
				return appendDouble(b, 14, p.ZeroThreshold)
			})
		}
		return appendVarint(b, 2, t)
	}), true
}

// appendBuckets appends field num holding the Buckets of an exponential
// histogram: offset (1), bucket_counts (2). It is written even when
// empty, as OpenTelemetry's exporters write it.
func appendBuckets(b []byte, num protowire.Number, bk metricdata.ExponentialBucket) []byte {
	return appendMessage(b, num, func(b []byte) []byte {
		b = appendSint32(b, 1, bk.Offset)
		return appendPackedVarint(b, 2, bk.Counts)
	})
}

// appendSummary appends Metric.summary (11): a Summary of data_points (1).
func appendSummary(b []byte, s metricdata.Summary) []byte {
	return appendMessage(b, 11, func(b []byte) []byte {
		for _, p := range s.DataPoints {
			b = appendMessage(b, 1, func(b []byte) []byte {
				// SummaryDataPoint: start_time_unix_nano (2),
				// time_unix_nano (3), count (4), sum (5), quantile_values
				// (6), attributes (7).
				b = appendFixed64(b, 2, unixNano(p.StartTime))
				b = appendFixed64(b, 3, unixNano(p.Time))
				b = appendFixed64(b, 4, p.Count)
				b = appendDouble(b, 5, p.Sum)
				for _, q := range p.QuantileValues {
					b = appendMessage(b, 6, func(b []byte) []byte {
						// ValueAtQuantile: quantile (1), value (2).
						b = appendDouble(b, 1, q.Quantile)
						return appendDouble(b, 2, q.Value)
					})
				}
				return appendAttributes(b, 7, p.Attributes.Iter())
			})
		}
		return b
	})
}

// appendExtremum appends field num, an optional double, when e was
// recorded.
func appendExtremum[N int64 | float64](b []byte, num protowire.Number, e metricdata.Extrema[N]) []byte {
	v, ok := e.Value()
	if !ok {
		return b
	}
	return appendFixed64Always(b, num, math.Float64bits(float64(v)))
}

// appendExemplars appends each exemplar as an Exemplar in field num:
// time_unix_nano (2), span_id (4), trace_id (5), filtered_attributes (7),
// then the value oneof: as_double (3) or as_int (6).
func appendExemplars[N int64 | float64](b []byte, num protowire.Number, es []metricdata.Exemplar[N]) []byte {
	for _, e := range es {
		b = appendMessage(b, num, func(b []byte) []byte {
			b = appendFixed64(b, 2, unixNano(e.Time))
			b = appendBytes(b, 4, e.SpanID)
			b = appendBytes(b, 5, e.TraceID)
			b = appendKeyValues(b, 7, e.FilteredAttributes)
			return appendNumber(b, 3, 6, e.Value)
		})
	}
	return b
}
