package otlp

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// FuzzAttributeValue: any attribute value, as a span's attribute, an
// event's and a link's, encodes as otlptrace's message does, byte for
// byte, once its strings are made UTF-8 (otlptrace fails on others).
func FuzzAttributeValue(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{4, 3, 'a', 'b', 'c'})
	f.Add([]byte{9, 3, 1, 1, 2, 7, 0, 0, 0, 0, 0, 0, 0, 0, 10, 2, 1, 'k', 3, 1, 'v'})
	f.Add([]byte{2, 0x80, 0, 0, 0, 0, 0, 0xf8, 0x7f, 8, 4, 0, 1, 0xff, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, valid, _ := fuzzValue(data, 0)
		spans := func(v attribute.Value) []sdktrace.ReadOnlySpan {
			kv := attribute.KeyValue{Key: "k", Value: v}
			return tracetest.SpanStubs{{
				SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}),
				Attributes:  []attribute.KeyValue{kv},
				Events:      []sdktrace.Event{{Attributes: []attribute.KeyValue{kv}}},
				Links:       []sdktrace.Link{{Attributes: []attribute.KeyValue{kv}}},
			}}.Snapshots()
		}
		compareEncodings(t, traceRequest(spans(v)), theirTraceRequest(t, spans(valid)))
	})
}

// fuzzValue reads an attribute value from data: a type byte, then its
// content; slices and maps nest up to a depth of 4. It returns the value,
// the same with its strings made UTF-8, and what is left of data.
func fuzzValue(data []byte, depth int) (v, valid attribute.Value, rest []byte) {
	if len(data) == 0 {
		return attribute.Value{}, attribute.Value{}, nil
	}
	typ, data := data[0]%12, data[1:]
	count := func() int {
		if len(data) == 0 {
			return 0
		}
		n := int(data[0] % 8)
		data = data[1:]
		return n
	}
	str := func() string {
		n := min(count()*37, len(data)) // lengths past 127 too
		s := string(data[:n])
		data = data[n:]
		return s
	}
	twin := func(v attribute.Value) (attribute.Value, attribute.Value, []byte) { return v, v, data }
	u64 := func() uint64 {
		var b [8]byte
		n := copy(b[:], data)
		data = data[n:]
		return binary.LittleEndian.Uint64(b[:])
	}
	switch typ {
	case 1:
		return twin(attribute.BoolValue(u64()%2 == 1))
	case 2:
		return twin(attribute.Int64Value(int64(u64())))
	case 3:
		return twin(attribute.Float64Value(math.Float64frombits(u64())))
	case 4:
		s := str()
		return attribute.StringValue(s), attribute.StringValue(utf8Twin(s)), data
	case 5:
		return twin(attribute.ByteSliceValue([]byte(str())))
	case 6:
		n := count()
		vs := make([]bool, n)
		for i := range vs {
			vs[i] = u64()%2 == 1
		}
		return twin(attribute.BoolSliceValue(vs))
	case 7:
		n := count()
		vs := make([]int64, n)
		for i := range vs {
			vs[i] = int64(u64())
		}
		return twin(attribute.Int64SliceValue(vs))
	case 8:
		n := count()
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = math.Float64frombits(u64())
		}
		return twin(attribute.Float64SliceValue(vs))
	case 9:
		n := count()
		vs, valid := make([]string, n), make([]string, n)
		for i := range vs {
			vs[i] = str()
			valid[i] = utf8Twin(vs[i])
		}
		return attribute.StringSliceValue(vs), attribute.StringSliceValue(valid), data
	case 10, 11:
		if depth >= 4 {
			return twin(attribute.Value{})
		}
		n := count()
		vs, valid := make([]attribute.Value, n), make([]attribute.Value, n)
		kvs, validKVs := make([]attribute.KeyValue, n), make([]attribute.KeyValue, n)
		for i := range vs {
			// Keys are UTF-8 here: a map value sorts its keys, and
			// mending one could change its place.
			k := attribute.Key(utf8Twin(str()))
			vs[i], valid[i], data = fuzzValue(data, depth+1)
			kvs[i] = attribute.KeyValue{Key: k, Value: vs[i]}
			validKVs[i] = attribute.KeyValue{Key: k, Value: valid[i]}
		}
		if typ == 10 {
			return attribute.MapValue(kvs...), attribute.MapValue(validKVs...), data
		}
		return attribute.SliceValue(vs...), attribute.SliceValue(valid...), data
	}
	return twin(attribute.Value{})
}

// utf8Twin is s with each run of bytes that are not UTF-8 made U+FFFD.
func utf8Twin(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
