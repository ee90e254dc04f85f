package otlp

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	cpb "go.opentelemetry.io/proto/otlp/common/v1"
	mpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	rpb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// resourceMetrics is rm as OTLP, field for field as OpenTelemetry's OTLP
// metric exporters write it (a test compares the two). A metric of an
// unknown aggregation is left out, and named in the error.
func resourceMetrics(rm *metricdata.ResourceMetrics) (*mpb.ResourceMetrics, error) {
	out := &mpb.ResourceMetrics{
		Resource:  &rpb.Resource{Attributes: attrs(rm.Resource.Iter())},
		SchemaUrl: rm.Resource.SchemaURL(),
	}
	var bad []string
	for _, sm := range rm.ScopeMetrics {
		s := &mpb.ScopeMetrics{
			Scope: &cpb.InstrumentationScope{
				Name:       sm.Scope.Name,
				Version:    sm.Scope.Version,
				Attributes: attrs(sm.Scope.Attributes.Iter()),
			},
			Metrics:   make([]*mpb.Metric, 0, len(sm.Metrics)),
			SchemaUrl: sm.Scope.SchemaURL,
		}
		for _, m := range sm.Metrics {
			pm, ok := metric(m)
			if !ok {
				bad = append(bad, fmt.Sprintf("%s (%T)", m.Name, m.Data))
				continue
			}
			s.Metrics = append(s.Metrics, pm)
		}
		out.ScopeMetrics = append(out.ScopeMetrics, s)
	}
	if bad != nil {
		return out, fmt.Errorf("otlp: metrics of an unknown aggregation or temporality left out: %v", bad)
	}
	return out, nil
}

// metric converts one metric; false for an aggregation or temporality
// OTLP has no form for.
func metric(m metricdata.Metrics) (*mpb.Metric, bool) {
	out := &mpb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit}
	ok := true
	switch a := m.Data.(type) {
	case metricdata.Gauge[int64]:
		out.Data = &mpb.Metric_Gauge{Gauge: &mpb.Gauge{DataPoints: numberPoints(a.DataPoints)}}
	case metricdata.Gauge[float64]:
		out.Data = &mpb.Metric_Gauge{Gauge: &mpb.Gauge{DataPoints: numberPoints(a.DataPoints)}}
	case metricdata.Sum[int64]:
		out.Data, ok = sum(a)
	case metricdata.Sum[float64]:
		out.Data, ok = sum(a)
	case metricdata.Histogram[int64]:
		out.Data, ok = histogram(a)
	case metricdata.Histogram[float64]:
		out.Data, ok = histogram(a)
	case metricdata.ExponentialHistogram[int64]:
		out.Data, ok = expHistogram(a)
	case metricdata.ExponentialHistogram[float64]:
		out.Data, ok = expHistogram(a)
	case metricdata.Summary:
		out.Data = summary(a)
	default:
		return nil, false
	}
	return out, ok
}

func temporality(t metricdata.Temporality) (mpb.AggregationTemporality, bool) {
	switch t {
	case metricdata.DeltaTemporality:
		return mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, true
	case metricdata.CumulativeTemporality:
		return mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, true
	}
	return mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_UNSPECIFIED, false
}

func sum[N int64 | float64](s metricdata.Sum[N]) (*mpb.Metric_Sum, bool) {
	t, ok := temporality(s.Temporality)
	return &mpb.Metric_Sum{Sum: &mpb.Sum{
		AggregationTemporality: t,
		IsMonotonic:            s.IsMonotonic,
		DataPoints:             numberPoints(s.DataPoints),
	}}, ok
}

func numberPoints[N int64 | float64](pts []metricdata.DataPoint[N]) []*mpb.NumberDataPoint {
	out := make([]*mpb.NumberDataPoint, 0, len(pts))
	for _, p := range pts {
		np := &mpb.NumberDataPoint{
			Attributes:        attrs(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Exemplars:         exemplars(p.Exemplars),
		}
		switch v := any(p.Value).(type) {
		case int64:
			np.Value = &mpb.NumberDataPoint_AsInt{AsInt: v}
		case float64:
			np.Value = &mpb.NumberDataPoint_AsDouble{AsDouble: v}
		}
		out = append(out, np)
	}
	return out
}

func histogram[N int64 | float64](h metricdata.Histogram[N]) (*mpb.Metric_Histogram, bool) {
	t, ok := temporality(h.Temporality)
	pts := make([]*mpb.HistogramDataPoint, 0, len(h.DataPoints))
	for _, p := range h.DataPoints {
		s := float64(p.Sum)
		hp := &mpb.HistogramDataPoint{
			Attributes:        attrs(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Count:             p.Count,
			Sum:               &s,
			BucketCounts:      p.BucketCounts,
			ExplicitBounds:    p.Bounds,
			Exemplars:         exemplars(p.Exemplars),
		}
		hp.Min, hp.Max = extremum(p.Min), extremum(p.Max)
		pts = append(pts, hp)
	}
	return &mpb.Metric_Histogram{Histogram: &mpb.Histogram{AggregationTemporality: t, DataPoints: pts}}, ok
}

func expHistogram[N int64 | float64](h metricdata.ExponentialHistogram[N]) (*mpb.Metric_ExponentialHistogram, bool) {
	t, ok := temporality(h.Temporality)
	pts := make([]*mpb.ExponentialHistogramDataPoint, 0, len(h.DataPoints))
	for _, p := range h.DataPoints {
		s := float64(p.Sum)
		ep := &mpb.ExponentialHistogramDataPoint{
			Attributes:        attrs(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Count:             p.Count,
			Sum:               &s,
			Scale:             p.Scale,
			ZeroCount:         p.ZeroCount,
			ZeroThreshold:     p.ZeroThreshold,
			Exemplars:         exemplars(p.Exemplars),
			Positive:          &mpb.ExponentialHistogramDataPoint_Buckets{Offset: p.PositiveBucket.Offset, BucketCounts: p.PositiveBucket.Counts},
			Negative:          &mpb.ExponentialHistogramDataPoint_Buckets{Offset: p.NegativeBucket.Offset, BucketCounts: p.NegativeBucket.Counts},
		}
		ep.Min, ep.Max = extremum(p.Min), extremum(p.Max)
		pts = append(pts, ep)
	}
	return &mpb.Metric_ExponentialHistogram{ExponentialHistogram: &mpb.ExponentialHistogram{AggregationTemporality: t, DataPoints: pts}}, ok
}

func summary(s metricdata.Summary) *mpb.Metric_Summary {
	pts := make([]*mpb.SummaryDataPoint, 0, len(s.DataPoints))
	for _, p := range s.DataPoints {
		qs := make([]*mpb.SummaryDataPoint_ValueAtQuantile, 0, len(p.QuantileValues))
		for _, q := range p.QuantileValues {
			qs = append(qs, &mpb.SummaryDataPoint_ValueAtQuantile{Quantile: q.Quantile, Value: q.Value})
		}
		pts = append(pts, &mpb.SummaryDataPoint{
			Attributes:        attrs(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Count:             p.Count,
			Sum:               p.Sum,
			QuantileValues:    qs,
		})
	}
	return &mpb.Metric_Summary{Summary: &mpb.Summary{DataPoints: pts}}
}

// extremum is a histogram's min or max, nil when not recorded.
func extremum[N int64 | float64](e metricdata.Extrema[N]) *float64 {
	v, ok := e.Value()
	if !ok {
		return nil
	}
	f := float64(v)
	return &f
}

func exemplars[N int64 | float64](es []metricdata.Exemplar[N]) []*mpb.Exemplar {
	out := make([]*mpb.Exemplar, 0, len(es))
	for _, e := range es {
		pe := &mpb.Exemplar{
			FilteredAttributes: keyValues(e.FilteredAttributes),
			TimeUnixNano:       unixNano(e.Time),
			SpanId:             e.SpanID,
			TraceId:            e.TraceID,
		}
		switch v := any(e.Value).(type) {
		case int64:
			pe.Value = &mpb.Exemplar_AsInt{AsInt: v}
		case float64:
			pe.Value = &mpb.Exemplar_AsDouble{AsDouble: v}
		}
		out = append(out, pe)
	}
	return out
}

func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }

func attrs(it attribute.Iterator) []*cpb.KeyValue {
	if it.Len() == 0 {
		return nil
	}
	out := make([]*cpb.KeyValue, 0, it.Len())
	for it.Next() {
		kv := it.Attribute()
		out = append(out, &cpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func keyValues(kvs []attribute.KeyValue) []*cpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*cpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &cpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *cpb.AnyValue {
	av := new(cpb.AnyValue)
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &cpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &cpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &cpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &cpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &cpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		av.Value = array(v.AsBoolSlice(), func(b bool) *cpb.AnyValue { return &cpb.AnyValue{Value: &cpb.AnyValue_BoolValue{BoolValue: b}} })
	case attribute.INT64SLICE:
		av.Value = array(v.AsInt64Slice(), func(i int64) *cpb.AnyValue { return &cpb.AnyValue{Value: &cpb.AnyValue_IntValue{IntValue: i}} })
	case attribute.FLOAT64SLICE:
		av.Value = array(v.AsFloat64Slice(), func(f float64) *cpb.AnyValue { return &cpb.AnyValue{Value: &cpb.AnyValue_DoubleValue{DoubleValue: f}} })
	case attribute.STRINGSLICE:
		av.Value = array(v.AsStringSlice(), func(s string) *cpb.AnyValue { return &cpb.AnyValue{Value: &cpb.AnyValue_StringValue{StringValue: s}} })
	case attribute.SLICE:
		av.Value = array(v.AsSlice(), anyValue)
	case attribute.MAP:
		av.Value = &cpb.AnyValue_KvlistValue{KvlistValue: &cpb.KeyValueList{Values: keyValues(v.AsMap())}}
	case attribute.EMPTY:
	default:
		av.Value = &cpb.AnyValue_StringValue{StringValue: "INVALID"}
	}
	return av
}

func array[T any](vs []T, conv func(T) *cpb.AnyValue) *cpb.AnyValue_ArrayValue {
	out := make([]*cpb.AnyValue, len(vs))
	for i, v := range vs {
		out[i] = conv(v)
	}
	return &cpb.AnyValue_ArrayValue{ArrayValue: &cpb.ArrayValue{Values: out}}
}
