package jsontmpl

import (
	"encoding/json"
	"fmt"
)

// jsonNumber is json.Number, the one data type with methods.
type jsonNumber = json.Number

// root is the type text/template sees as the data: an anonymous struct, so
// that fmt prints it (%v, %T) as text/template printed the adapter's data.
type root = struct {
	Text       string
	Structured any
}

// rootType is root's name in text/template's messages.
const rootType = "struct { Text string; Structured interface {} }"

// value stands for the reflect.Value text/template would hold. x is nil or
// one of: root, bool, string, json.Number, int, int64, uint8, float64,
// complex128, []any, map[string]any (ints, uint8 and complex128 come from
// constants, len, index and Int64; the others from the data). iface reports
// that the value sits in an interface{} slot (the Structured field, a map
// entry, a slice element), as a reflect.Value of kind Interface does: its
// type is "interface {}" and x may be nil. A value with x nil and iface
// false is the invalid (zero) reflect.Value; missing marks an absent final
// argument of a pipeline's command.
type value struct {
	x     any
	iface bool
}

// missingType is the type of missing's x.
type missingType struct{}

var missing = value{x: missingType{}}

// valid reports whether v is not the zero reflect.Value.
func (v value) valid() bool { return v.x != nil || v.iface }

// isMissing reports whether v is missing.
func (v value) isMissing() bool {
	_, ok := v.x.(missingType)
	return ok
}

// isNilIface reports whether v is an interface{} that holds nil.
func (v value) isNilIface() bool { return v.iface && v.x == nil }

// elem returns what an interface{} value holds (the zero value for nil),
// and any other value as it is: text/template's indirectInterface.
func (v value) elem() value { return value{x: v.x} }

// typeName is v's type as reflect prints it.
func (v value) typeName() string {
	if v.iface {
		return "interface {}"
	}
	return typeName(v.x)
}

// typeName is the name of x's type as reflect prints it.
func typeName(x any) string {
	switch x.(type) {
	case root:
		return rootType
	case []any:
		return "[]interface {}"
	case map[string]any:
		return "map[string]interface {}"
	default:
		return fmt.Sprintf("%T", x)
	}
}

// String is reflect.Value's String: the string of a string kind, else
// "<T Value>".
func (v value) String() string {
	if !v.valid() {
		return "<invalid Value>"
	}
	if !v.iface {
		switch x := v.x.(type) {
		case string:
			return x
		case jsonNumber:
			return string(x)
		}
	}
	return "<" + v.typeName() + " Value>"
}

// kind is the reflect.Kind of a value, reduced to the kinds that occur.
type kind uint8

const (
	invalidKind kind = iota
	boolKind
	intKind
	uintKind
	floatKind
	complexKind
	stringKind
	sliceKind
	mapKind
	structKind
	ifaceKind
)

// kind returns v's kind.
func (v value) kind() kind {
	if v.iface {
		return ifaceKind
	}
	switch v.x.(type) {
	case nil:
		return invalidKind
	case bool:
		return boolKind
	case int, int64:
		return intKind
	case uint8:
		return uintKind
	case float64:
		return floatKind
	case complex128:
		return complexKind
	case string, jsonNumber:
		return stringKind
	case []any:
		return sliceKind
	case map[string]any:
		return mapKind
	case root, missingType:
		return structKind
	}
	panic(fmt.Sprintf("jsontmpl: value of unexpected type %T", v.x))
}

// str returns the string of a string kind.
func (v value) str() string {
	if n, ok := v.x.(jsonNumber); ok {
		return string(n)
	}
	return v.x.(string)
}

// int returns the integer of an int kind.
func (v value) int() int64 {
	if n, ok := v.x.(int); ok {
		return int64(n)
	}
	return v.x.(int64)
}

// isTrue is text/template's truth of a value that is not an interface:
// not the zero value of its type, and for collections not empty.
func isTrue(v value) bool {
	switch x := v.x.(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case int64:
		return x != 0
	case uint8:
		return x != 0
	case float64:
		return x != 0
	case complex128:
		return x != 0
	case string:
		return x != ""
	case jsonNumber:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true // a struct
}

// truth is the truth of a value, through its interface if any.
func truth(v value) bool { return isTrue(v.elem()) }

// printable is what fmt prints for a value in an action: "<no value>" for
// the zero value.
func printable(v value) any {
	if !v.valid() {
		return "<no value>"
	}
	return v.x
}
