package otlp

import (
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/encoding/protowire"
)

// metricsRequest encodes rm as an ExportMetricsServiceRequest holding one
// ResourceMetrics, field for field as OpenTelemetry's OTLP metric
// exporters write it (a test compares the two). A metric of an unknown
// aggregation or temporality is left out, and named in the error.
func metricsRequest(rm *metricdata.ResourceMetrics) ([]byte, error) {
	var bad []string
	b := msg(nil, 1, func(b []byte) []byte { // ResourceMetrics
		b = msg(b, 1, func(b []byte) []byte { return iterated(b, 1, rm.Resource.Iter()) })
		for _, sm := range rm.ScopeMetrics {
			b = msg(b, 2, func(b []byte) []byte { // ScopeMetrics
				b = msg(b, 1, func(b []byte) []byte {
					return scope(b, sm.Scope.Name, sm.Scope.Version, sm.Scope.Attributes.Iter())
				})
				for _, m := range sm.Metrics {
					if !known(m.Data) {
						bad = append(bad, fmt.Sprintf("%s (%T)", m.Name, m.Data))
						continue
					}
					b = msg(b, 2, func(b []byte) []byte { return metric(b, m) })
				}
				return str(b, 3, sm.Scope.SchemaURL)
			})
		}
		return str(b, 3, rm.Resource.SchemaURL())
	})
	if bad != nil {
		return b, fmt.Errorf("otlp: metrics of an unknown aggregation or temporality left out: %v", bad)
	}
	return b, nil
}

// known reports whether OTLP has a form for the aggregation a, with its
// temporality.
func known(a metricdata.Aggregation) bool {
	switch a := a.(type) {
	case metricdata.Gauge[int64], metricdata.Gauge[float64], metricdata.Summary:
		return true
	case metricdata.Sum[int64]:
		return temporalityKnown(a.Temporality)
	case metricdata.Sum[float64]:
		return temporalityKnown(a.Temporality)
	case metricdata.Histogram[int64]:
		return temporalityKnown(a.Temporality)
	case metricdata.Histogram[float64]:
		return temporalityKnown(a.Temporality)
	case metricdata.ExponentialHistogram[int64]:
		return temporalityKnown(a.Temporality)
	case metricdata.ExponentialHistogram[float64]:
		return temporalityKnown(a.Temporality)
	}
	return false
}

func temporalityKnown(t metricdata.Temporality) bool {
	return t == metricdata.DeltaTemporality || t == metricdata.CumulativeTemporality
}

// temporality is t as metrics.v1.AggregationTemporality.
func temporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}

// metric appends the body of one Metric (metrics.v1) of a known
// aggregation.
func metric(b []byte, m metricdata.Metrics) []byte {
	b = str(b, 1, m.Name)
	b = str(b, 2, m.Description)
	b = str(b, 3, m.Unit)
	switch a := m.Data.(type) {
	case metricdata.Gauge[int64]:
		b = msg(b, 5, func(b []byte) []byte { return numberPoints(b, a.DataPoints) })
	case metricdata.Gauge[float64]:
		b = msg(b, 5, func(b []byte) []byte { return numberPoints(b, a.DataPoints) })
	case metricdata.Sum[int64]:
		b = msg(b, 7, func(b []byte) []byte { return sum(b, a) })
	case metricdata.Sum[float64]:
		b = msg(b, 7, func(b []byte) []byte { return sum(b, a) })
	case metricdata.Histogram[int64]:
		b = msg(b, 9, func(b []byte) []byte { return histogram(b, a) })
	case metricdata.Histogram[float64]:
		b = msg(b, 9, func(b []byte) []byte { return histogram(b, a) })
	case metricdata.ExponentialHistogram[int64]:
		b = msg(b, 10, func(b []byte) []byte { return expHistogram(b, a) })
	case metricdata.ExponentialHistogram[float64]:
		b = msg(b, 10, func(b []byte) []byte { return expHistogram(b, a) })
	case metricdata.Summary:
		b = msg(b, 11, func(b []byte) []byte { return summary(b, a) })
	}
	return b
}

func sum[N int64 | float64](b []byte, s metricdata.Sum[N]) []byte {
	b = numberPoints(b, s.DataPoints)
	b = varint(b, 2, temporality(s.Temporality))
	if s.IsMonotonic {
		b = varint(b, 3, 1)
	}
	return b
}

// numberPoints appends pts as the repeated NumberDataPoint field 1.
func numberPoints[N int64 | float64](b []byte, pts []metricdata.DataPoint[N]) []byte {
	for _, p := range pts {
		b = msg(b, 1, func(b []byte) []byte {
			b = fixed64(b, 2, unixNano(p.StartTime))
			b = fixed64(b, 3, unixNano(p.Time))
			b = exemplars(b, 5, p.Exemplars)
			b = iterated(b, 7, p.Attributes.Iter())
			return number(b, 4, 6, p.Value) // the oneof last, as proto.Marshal writes it
		})
	}
	return b
}

func histogram[N int64 | float64](b []byte, h metricdata.Histogram[N]) []byte {
	for _, p := range h.DataPoints {
		b = msg(b, 1, func(b []byte) []byte {
			b = fixed64(b, 2, unixNano(p.StartTime))
			b = fixed64(b, 3, unixNano(p.Time))
			b = fixed64(b, 4, p.Count)
			b = fixed64Always(b, 5, math.Float64bits(float64(p.Sum)))
			b = packedFixed64(b, 6, p.BucketCounts)
			b = packedFixed64(b, 7, p.Bounds)
			b = exemplars(b, 8, p.Exemplars)
			b = iterated(b, 9, p.Attributes.Iter())
			b = extremum(b, 11, p.Min)
			return extremum(b, 12, p.Max)
		})
	}
	return varint(b, 2, temporality(h.Temporality))
}

func expHistogram[N int64 | float64](b []byte, h metricdata.ExponentialHistogram[N]) []byte {
	for _, p := range h.DataPoints {
		b = msg(b, 1, func(b []byte) []byte {
			b = iterated(b, 1, p.Attributes.Iter())
			b = fixed64(b, 2, unixNano(p.StartTime))
			b = fixed64(b, 3, unixNano(p.Time))
			b = fixed64(b, 4, p.Count)
			b = fixed64Always(b, 5, math.Float64bits(float64(p.Sum)))
			b = sint32(b, 6, p.Scale)
			b = fixed64(b, 7, p.ZeroCount)
			b = msg(b, 8, func(b []byte) []byte { return buckets(b, p.PositiveBucket) })
			b = msg(b, 9, func(b []byte) []byte { return buckets(b, p.NegativeBucket) })
			b = exemplars(b, 11, p.Exemplars)
			b = extremum(b, 12, p.Min)
			b = extremum(b, 13, p.Max)
			return double(b, 14, p.ZeroThreshold)
		})
	}
	return varint(b, 2, temporality(h.Temporality))
}

// buckets appends the body of an ExponentialHistogramDataPoint.Buckets.
func buckets(b []byte, eb metricdata.ExponentialBucket) []byte {
	b = sint32(b, 1, eb.Offset)
	return packedVarint(b, 2, eb.Counts)
}

func summary(b []byte, s metricdata.Summary) []byte {
	for _, p := range s.DataPoints {
		b = msg(b, 1, func(b []byte) []byte {
			b = fixed64(b, 2, unixNano(p.StartTime))
			b = fixed64(b, 3, unixNano(p.Time))
			b = fixed64(b, 4, p.Count)
			b = double(b, 5, p.Sum)
			for _, q := range p.QuantileValues {
				b = msg(b, 6, func(b []byte) []byte {
					b = double(b, 1, q.Quantile)
					return double(b, 2, q.Value)
				})
			}
			return iterated(b, 7, p.Attributes.Iter())
		})
	}
	return b
}

// extremum appends a histogram's min or max (an optional double), left
// out when not recorded.
func extremum[N int64 | float64](b []byte, num protowire.Number, e metricdata.Extrema[N]) []byte {
	v, ok := e.Value()
	if !ok {
		return b
	}
	return fixed64Always(b, num, math.Float64bits(float64(v)))
}

// exemplars appends es as the repeated Exemplar field num.
func exemplars[N int64 | float64](b []byte, num protowire.Number, es []metricdata.Exemplar[N]) []byte {
	for _, e := range es {
		b = msg(b, num, func(b []byte) []byte {
			b = fixed64(b, 2, unixNano(e.Time))
			b = byts(b, 4, e.SpanID)
			b = byts(b, 5, e.TraceID)
			b = keyValues(b, 7, e.FilteredAttributes)
			return number(b, 3, 6, e.Value) // the oneof last
		})
	}
	return b
}

// number appends the oneof of a data point's or an exemplar's value: the
// double as field asDouble, the integer as field asInt (sfixed64).
func number[N int64 | float64](b []byte, asDouble, asInt protowire.Number, v N) []byte {
	if i, ok := any(v).(int64); ok {
		return fixed64Always(b, asInt, uint64(i))
	}
	return fixed64Always(b, asDouble, math.Float64bits(float64(v)))
}

func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }
