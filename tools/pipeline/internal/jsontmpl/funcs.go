package jsontmpl

import (
	"errors"
	"fmt"
	"net/url"
)

// builtinNames are text/template's builtin functions.
var builtinNames = [...]string{
	"and", "call", "html", "index", "slice", "js", "len", "not", "or",
	"print", "printf", "println", "urlquery",
	"eq", "ge", "gt", "le", "lt", "ne",
}

// builtin returns the builtin function called name, with text/template's
// signature for it.
func builtin(name string) (fn, bool) {
	v1 := []param{pValue}
	v2 := []param{pValue, pValue}
	switch name {
	case "and", "or":
		return fn{in: v1, variadic: pValue}, true // evalCall short-circuits them
	case "call":
		return fn{in: v1, variadic: pValue}, true // evalCall calls callFunc
	case "html":
		return fn{variadic: pAny, call: escaper(htmlEscapeString)}, true
	case "js":
		return fn{variadic: pAny, call: escaper(jsEscapeString)}, true
	case "urlquery":
		return fn{variadic: pAny, call: escaper(url.QueryEscape)}, true
	case "index":
		return fn{in: v1, variadic: pValue, call: index}, true
	case "slice":
		return fn{in: v1, variadic: pValue, call: slice}, true
	case "len":
		return fn{in: v1, call: length}, true
	case "not":
		return fn{in: v1, call: func(_ *state, a []value) (value, error) { return value{x: !truth(a[0])}, nil }}, true
	case "print":
		return fn{variadic: pAny, call: printer(fmt.Sprint)}, true
	case "println":
		return fn{variadic: pAny, call: printer(fmt.Sprintln)}, true
	case "printf":
		return fn{in: []param{pString}, variadic: pAny, call: printf}, true
	case "eq":
		return fn{in: v1, variadic: pValue, call: comparison(eq)}, true
	case "ne":
		return fn{in: v2, call: comparison(ne)}, true
	case "lt":
		return fn{in: v2, call: comparison(lt)}, true
	case "le":
		return fn{in: v2, call: comparison(le)}, true
	case "gt":
		return fn{in: v2, call: comparison(gt)}, true
	case "ge":
		return fn{in: v2, call: comparison(ge)}, true
	}
	return fn{}, false
}

// numberMethod returns json.Number's method called name.
func numberMethod(n jsonNumber, name string) (fn, bool) {
	switch name {
	case "String":
		return fn{call: func(*state, []value) (value, error) { return value{x: n.String()}, nil }}, true
	case "Float64":
		return fn{call: func(*state, []value) (value, error) {
			f, err := n.Float64()
			return value{x: f}, err
		}}, true
	case "Int64":
		return fn{call: func(*state, []value) (value, error) {
			i, err := n.Int64()
			return value{x: i}, err
		}}, true
	}
	return fn{}, false
}

// interfaces returns what functions with interface{} parameters receive.
func interfaces(args []value) []any {
	a := make([]any, len(args))
	for i, v := range args {
		a[i] = v.x
	}
	return a
}

// printer is print or println.
func printer(f func(...any) string) func(*state, []value) (value, error) {
	return func(s *state, args []value) (value, error) {
		s.reserve(1 + s.argsSize(args, plainMode, MaxMadeBytes-s.b.made))
		str := f(interfaces(args)...)
		s.made(str)
		return value{x: str}, nil
	}
}

func printf(s *state, args []value) (value, error) {
	format := args[0].x.(string)
	s.reserve(s.printfSize(format, args[1:], MaxMadeBytes-s.b.made))
	str := fmt.Sprintf(format, interfaces(args[1:])...)
	s.made(str)
	return value{x: str}, nil
}

// escapeGrowth is the most bytes html, js and urlquery make of one byte
// (js's \u003C).
const escapeGrowth = 6

// escaper is html, js or urlquery: the escaped text of the arguments, the
// zero value printed as in an action.
func escaper(escape func(string) string) func(*state, []value) (value, error) {
	return func(s *state, args []value) (value, error) {
		s.reserve(escapeGrowth * s.argsSize(args, plainMode, (MaxMadeBytes-s.b.made)/escapeGrowth))
		str, ok := "", false
		if len(args) == 1 {
			str, ok = args[0].x.(string)
		}
		if !ok {
			a := interfaces(args)
			for i := range a {
				if a[i] == nil {
					a[i] = "<no value>"
				}
			}
			str = fmt.Sprint(a...)
		}
		str = escape(str)
		s.made(str)
		return value{x: str}, nil
	}
}

// callFunc is the builtin call: the data holds no functions, so it fails
// as text/template's does on a value that is not one.
func callFunc(name string, f value) (value, error) {
	f = f.elem()
	if !f.valid() {
		return value{}, errors.New("call of nil")
	}
	return value{}, fmt.Errorf("non-function %s of type %s", name, f.typeName())
}

// length is the builtin len.
func length(_ *state, args []value) (value, error) {
	item := args[0]
	if item.isNilIface() {
		return value{}, errors.New("len of nil pointer")
	}
	switch x := item.elem().x.(type) {
	case nil:
		// text/template asks the type of the zero reflect.Value, which
		// panics; the panic becomes the error.
		return value{}, errors.New("reflect: call of reflect.Value.Type on zero Value")
	case string:
		return value{x: len(x)}, nil
	case jsonNumber:
		return value{x: len(x)}, nil
	case []any:
		return value{x: len(x)}, nil
	case map[string]any:
		return value{x: len(x)}, nil
	}
	return value{}, fmt.Errorf("len of type %s", item.elem().typeName())
}

// indexArg checks that v may index a slice or a string of length cap and
// returns it as an int.
func indexArg(v value, cap int) (int, error) {
	var x int64
	switch n := v.x.(type) {
	case int, int64:
		x = v.int()
	case uint8:
		x = int64(n)
	case nil:
		if !v.iface {
			return 0, errors.New("cannot index slice/array with nil")
		}
	}
	if v.iface || v.kind() != intKind && v.kind() != uintKind {
		return 0, fmt.Errorf("cannot index slice/array with type %s", v.typeName())
	}
	if x < 0 || int(x) < 0 || int(x) > cap {
		return 0, fmt.Errorf("index out of range: %d", x)
	}
	return int(x), nil
}

// index is the builtin index: index x 1 2 3 is x[1][2][3].
func index(_ *state, args []value) (value, error) {
	item := args[0].elem()
	if !item.valid() {
		return value{}, errors.New("index of untyped nil")
	}
	for _, i := range args[1:] {
		i = i.elem()
		if item.isNilIface() {
			return value{}, errors.New("index of nil pointer")
		}
		item = item.elem()
		switch x := item.x.(type) {
		case []any:
			n, err := indexArg(i, len(x))
			if err != nil {
				return value{}, err
			}
			if n == len(x) {
				return value{}, errors.New("reflect: slice index out of range")
			}
			item = value{x: x[n], iface: true}
		case string, jsonNumber:
			str := item.str()
			n, err := indexArg(i, len(str))
			if err != nil {
				return value{}, err
			}
			if n == len(str) {
				return value{}, errors.New("reflect: string index out of range")
			}
			item = value{x: str[n]}
		case map[string]any:
			key, ok := i.x.(string)
			switch {
			case !i.valid():
				return value{}, errors.New("value is nil; should be of type string")
			case !ok:
				return value{}, fmt.Errorf("value has type %s; should be string", i.typeName())
			}
			item = value{x: x[key], iface: true} // nil for a missing key, the zero value
		default:
			return value{}, fmt.Errorf("can't index item of type %s", item.typeName())
		}
	}
	return item, nil
}

// slice is the builtin slice: slice x 1 2 is x[1:2], slice x is x[:],
// slice x 1 is x[1:] and slice x 1 2 3 is x[1:2:3].
func slice(_ *state, args []value) (value, error) {
	item := args[0].elem()
	if !item.valid() {
		return value{}, errors.New("slice of untyped nil")
	}
	indexes := args[1:]
	if len(indexes) > 3 {
		return value{}, fmt.Errorf("too many slice indexes: %d", len(indexes))
	}
	var length, cp int
	switch x := item.x.(type) {
	case string, jsonNumber:
		if len(indexes) == 3 {
			return value{}, errors.New("cannot 3-index slice a string")
		}
		length = len(item.str())
		cp = length
	case []any:
		length, cp = len(x), cap(x)
	default:
		return value{}, fmt.Errorf("can't slice item of type %s", item.typeName())
	}
	// Defaults for x[:] and x[i:].
	idx := [3]int{0, length}
	for i, index := range indexes {
		x, err := indexArg(index, cp)
		if err != nil {
			return value{}, err
		}
		idx[i] = x
	}
	if idx[0] > idx[1] {
		return value{}, fmt.Errorf("invalid slice index: %d > %d", idx[0], idx[1])
	}
	switch x := item.x.(type) {
	case string:
		return value{x: x[idx[0]:idx[1]]}, nil
	case jsonNumber:
		return value{x: x[idx[0]:idx[1]]}, nil
	}
	x := item.x.([]any)
	if len(indexes) < 3 {
		return value{x: x[idx[0]:idx[1]]}, nil
	}
	if idx[1] > idx[2] {
		return value{}, fmt.Errorf("invalid slice index: %d > %d", idx[1], idx[2])
	}
	return value{x: x[idx[0]:idx[1]:idx[2]]}, nil
}
