package otlp

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/encoding/protowire"
)

// The append functions of this package write protobuf fields as
// proto.Marshal writes the generated OTLP messages: fields in the order
// of their numbers, except that the member of a oneof comes after all
// other fields (as the historic Go encoder wrote it; proto3 optional
// fields are not oneofs here); proto3 zero values left out; fields with
// presence (oneof members, optional fields, set message fields) written
// even when zero. Tests compare the bytes with proto.Marshal's. Unlike
// proto.Marshal, they never fail: a string that is not UTF-8 is mended
// (see appendStringAlways).

// appendMessage appends field num holding the message that body appends.
func appendMessage(b []byte, num protowire.Number, body func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = append(b, 0) // the length: one byte is enough for most messages
	b = body(b)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	// A longer message: make room for the length's other bytes.
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size-1)...)
	copy(b[at+size:], b[at+1:at+1+n])
	protowire.AppendVarint(b[at:at], uint64(n))
	return b
}

// appendString appends field num unless s is empty.
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return appendStringAlways(b, num, s)
}

// appendStringAlways appends field num, empty or not (a oneof member),
// with each run of bytes that are not UTF-8 made U+FFFD. Protobuf's
// strings are UTF-8: proto.Marshal, so OpenTelemetry's exporters, fails
// the whole request for one that is not, and a receiver built on
// protobuf-go rejects it.
func appendStringAlways(b []byte, num protowire.Number, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendBytes appends field num unless v is empty.
func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendVarint appends field num (uint32, uint64, int64, enum or bool)
// unless v is zero.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendSint32 appends field num, a sint32, unless v is zero.
func appendSint32(b []byte, num protowire.Number, v int32) []byte {
	return appendVarint(b, num, protowire.EncodeZigZag(int64(v)))
}

// appendFixed32 appends field num unless v is zero.
func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// appendFixed64 appends field num (fixed64 or sfixed64) unless v is zero.
func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendFixed64Always(b, num, v)
}

// appendFixed64Always appends field num, zero or not: a oneof member or
// an optional field that is set.
func appendFixed64Always(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// appendDouble appends field num unless v is +0 (proto.Marshal writes
// -0 and NaN).
func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	return appendFixed64(b, num, math.Float64bits(v))
}

// appendPackedFixed64 appends field num, a packed repeated fixed64,
// unless vs is empty.
func appendPackedFixed64(b []byte, num protowire.Number, vs []uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(8*len(vs)))
	for _, v := range vs {
		b = protowire.AppendFixed64(b, v)
	}
	return b
}

// appendPackedDouble appends field num, a packed repeated double, unless
// vs is empty.
func appendPackedDouble(b []byte, num protowire.Number, vs []float64) []byte {
	if len(vs) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(8*len(vs)))
	for _, v := range vs {
		b = protowire.AppendFixed64(b, math.Float64bits(v))
	}
	return b
}

// appendPackedVarint appends field num, a packed repeated uint64, unless
// vs is empty.
func appendPackedVarint(b []byte, num protowire.Number, vs []uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	n := 0
	for _, v := range vs {
		n += protowire.SizeVarint(v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// unixNano is t as OTLP's fixed64 time fields hold it: 0 before 1970.
func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }

// appendAttributes appends each attribute of it as a KeyValue in field
// num.
func appendAttributes(b []byte, num protowire.Number, it attribute.Iterator) []byte {
	for it.Next() {
		b = appendKeyValue(b, num, it.Attribute())
	}
	return b
}

// appendKeyValues appends each of kvs as a KeyValue in field num.
func appendKeyValues(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendKeyValue(b, num, kv)
	}
	return b
}

// appendKeyValue appends field num holding the KeyValue kv: key (1) and
// value (2, always written, empty for an EMPTY value).
func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	return appendMessage(b, num, func(b []byte) []byte {
		b = appendString(b, 1, string(kv.Key))
		return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
	})
}

// appendAnyValue appends the fields of the AnyValue for v, as
// OpenTelemetry's exporters convert it: the oneof member is written even
// when zero; an EMPTY value has none; an unknown type is the string
// "INVALID".
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.EMPTY:
		return b
	case attribute.BOOL:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return appendFixed64Always(b, 4, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return appendStringAlways(b, 1, v.AsString())
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		return protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return appendArray(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		return appendMessage(b, 6, func(b []byte) []byte { return appendKeyValues(b, 1, v.AsMap()) })
	default:
		return appendStringAlways(b, 1, "INVALID")
	}
}

// appendArray appends an AnyValue's array_value (5): an ArrayValue whose
// values (1) are vs, each made a Value by value.
func appendArray[T any](b []byte, vs []T, value func(T) attribute.Value) []byte {
	return appendMessage(b, 5, func(b []byte) []byte {
		for _, v := range vs {
			b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyValue(b, value(v)) })
		}
		return b
	})
}

// appendScope appends the fields of an InstrumentationScope: name (1),
// version (2), attributes (3).
func appendScope(b []byte, name, version string, attrs attribute.Iterator) []byte {
	b = appendString(b, 1, name)
	b = appendString(b, 2, version)
	return appendAttributes(b, 3, attrs)
}
