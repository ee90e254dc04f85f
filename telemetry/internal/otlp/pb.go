package otlp

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP messages are written here with protowire, field by field, as
// proto.Marshal writes the generated types (fields in number order, proto3
// zero values left out, oneofs, optional fields and present sub-messages
// written even when zero; a oneof after the other fields, as the generated
// code orders it), so that neither the generated packages nor the
// protobuf runtime they register themselves with are linked: those cost
// every process, exporting or not, about 1.3 MiB of idle memory. Tests
// decode what is written here with the generated types and compare it with
// what OpenTelemetry's own exporters send.

// msg appends the sub-message field num to b, writing its body with fn;
// the length prefix is fixed up afterwards, so a body is written once.
func msg(b []byte, num protowire.Number, fn func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = append(b, 0) // one byte of length, moved along if the body needs more
	b = fn(b)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size-1)...)
	copy(b[at+size:], b[at+1:at+1+n])
	protowire.AppendVarint(b[:at], uint64(n))
	return b
}

// str appends a string field, left out when empty.
func str(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// byts appends a bytes field, left out when empty.
func byts(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// varint appends a varint field (uint32, uint64, int32, int64, enums,
// bools), left out when zero.
func varint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// fixed64 appends a fixed64 field, left out when zero.
func fixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return fixed64Always(b, num, v)
}

// fixed64Always appends a fixed64 field even when zero (a oneof member or
// an optional field).
func fixed64Always(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// double appends a double field, left out when +0 (as proto3 does: -0 is
// written).
func double(b []byte, num protowire.Number, f float64) []byte {
	return fixed64(b, num, math.Float64bits(f))
}

// fixed32 appends a fixed32 field, left out when zero.
func fixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// sint32 appends a zigzag-encoded sint32 field, left out when zero.
func sint32(b []byte, num protowire.Number, v int32) []byte {
	return varint(b, num, protowire.EncodeZigZag(int64(v)))
}

// packedFixed64 appends a packed repeated fixed64 field, left out when
// empty.
func packedFixed64[T uint64 | float64](b []byte, num protowire.Number, vs []T) []byte {
	if len(vs) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(8*len(vs)))
	for _, v := range vs {
		switch v := any(v).(type) {
		case uint64:
			b = protowire.AppendFixed64(b, v)
		case float64:
			b = protowire.AppendFixed64(b, math.Float64bits(v))
		}
	}
	return b
}

// packedVarint appends a packed repeated varint field, left out when empty.
func packedVarint(b []byte, num protowire.Number, vs []uint64) []byte {
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

// keyValue appends a KeyValue message (common.v1): key 1, value 2.
func keyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	return msg(b, num, func(b []byte) []byte {
		b = str(b, 1, string(kv.Key))
		return msg(b, 2, func(b []byte) []byte { return anyValue(b, kv.Value) })
	})
}

// keyValues appends each of kvs as the repeated KeyValue field num.
func keyValues(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = keyValue(b, num, kv)
	}
	return b
}

// iterated appends the attributes of it as the repeated KeyValue field num.
func iterated(b []byte, num protowire.Number, it attribute.Iterator) []byte {
	for it.Next() {
		b = keyValue(b, num, it.Attribute())
	}
	return b
}

// anyValue appends the body of an AnyValue (common.v1), as OpenTelemetry's
// exporters convert v: the oneof member is written even when zero; an
// EMPTY value has none; a type this code does not know is "INVALID".
func anyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.STRING:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v.AsString())
	case attribute.BOOL:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return fixed64Always(b, 4, math.Float64bits(v.AsFloat64()))
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		return protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return array(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return array(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return array(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return array(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return array(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		return msg(b, 6, func(b []byte) []byte { return keyValues(b, 1, v.AsMap()) })
	case attribute.EMPTY:
		return b
	}
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendString(b, "INVALID")
}

// array appends an ArrayValue (field 5 of AnyValue) of vs.
func array[T any](b []byte, vs []T, conv func(T) attribute.Value) []byte {
	return msg(b, 5, func(b []byte) []byte {
		for _, v := range vs {
			b = msg(b, 1, func(b []byte) []byte { return anyValue(b, conv(v)) })
		}
		return b
	})
}

// scope appends an InstrumentationScope (common.v1) body.
func scope(b []byte, name, version string, attrs attribute.Iterator) []byte {
	b = str(b, 1, name)
	b = str(b, 2, version)
	return iterated(b, 3, attrs)
}
