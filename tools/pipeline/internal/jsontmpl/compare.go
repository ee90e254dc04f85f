package jsontmpl

import (
	"errors"
	"fmt"
)

// The comparison functions follow text/template's funcs.go: operands of
// basic kinds (bool, integer, float, complex, string; json.Number is a
// string) compare by kind, signed and unsigned integers with each other;
// eq also compares nil and values of other kinds where Go's == would.

var (
	errBadComparisonType = errors.New("invalid type for comparison")
	errNoComparison      = errors.New("missing argument for comparison")
)

// comparison adapts a comparison to a builtin's call, charging a step per
// 4 KiB of the strings it may compare.
func comparison(f func(args []value) (bool, error)) func(*state, []value) (value, error) {
	return func(s *state, args []value) (value, error) {
		n := 0
		for _, a := range args {
			if a = a.elem(); a.kind() == stringKind {
				n += len(a.str())
			}
		}
		s.step(n / 4096)
		truth, err := f(args)
		return value{x: truth}, err
	}
}

// basicKind is v's kind if it is basic, else invalidKind.
func basicKind(v value) kind {
	switch k := v.kind(); k {
	case boolKind, intKind, uintKind, floatKind, complexKind, stringKind:
		return k
	}
	return invalidKind
}

func (v value) uint() uint64 { return uint64(v.x.(uint8)) }

// isNil reports whether v is the zero value or a nil map or slice.
func isNil(v value) bool {
	switch x := v.x.(type) {
	case nil:
		return true
	case []any:
		return x == nil
	case map[string]any:
		return x == nil
	}
	return false
}

// eq evaluates the comparison a == b || a == c || ...
func eq(args []value) (bool, error) {
	arg1 := args[0].elem()
	if len(args) == 1 {
		return false, errNoComparison
	}
	k1 := basicKind(arg1)
	for _, arg := range args[1:] {
		arg = arg.elem()
		k2 := basicKind(arg)
		truth := false
		if k1 != k2 {
			// Integers compare regardless of their sign.
			switch {
			case k1 == intKind && k2 == uintKind:
				truth = arg1.int() >= 0 && uint64(arg1.int()) == arg.uint()
			case k1 == uintKind && k2 == intKind:
				truth = arg.int() >= 0 && arg1.uint() == uint64(arg.int())
			default:
				if arg1.valid() && arg.valid() {
					return false, fmt.Errorf("incompatible types for comparison: %v and %v", arg1.typeName(), arg.typeName())
				}
			}
		} else {
			switch k1 {
			case boolKind:
				truth = arg1.x.(bool) == arg.x.(bool)
			case complexKind:
				truth = arg1.x.(complex128) == arg.x.(complex128)
			case floatKind:
				truth = arg1.x.(float64) == arg.x.(float64)
			case intKind:
				truth = arg1.int() == arg.int()
			case stringKind:
				truth = arg1.str() == arg.str()
			case uintKind:
				truth = arg1.uint() == arg.uint()
			default:
				if arg1.valid() && arg.valid() && arg1.kind() != arg.kind() {
					return false, fmt.Errorf("non-comparable types %s: %v, %s: %v", arg1.x, arg1.typeName(), arg.typeName(), arg.x)
				}
				if isNil(arg1) || isNil(arg) {
					truth = isNil(arg) == isNil(arg1)
				} else {
					if arg.kind() != structKind {
						return false, fmt.Errorf("non-comparable type %s: %v", arg.x, arg.typeName())
					}
					var err error
					if truth, err = equal(arg1.x, arg.x); err != nil {
						return false, err
					}
				}
			}
		}
		if truth {
			return true, nil
		}
	}
	return false, nil
}

// equal is a == b, whose panic (comparing maps held in the root's
// Structured field) is an error, as text/template's call of eq makes it.
func equal(a, b any) (truth bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				e = fmt.Errorf("%v", r)
			}
			err = e
		}
	}()
	return a == b, nil
}

// ne evaluates the comparison a != b.
func ne(args []value) (bool, error) {
	equal, err := eq(args)
	return !equal, err
}

// lt evaluates the comparison a < b.
func lt(args []value) (bool, error) {
	arg1, arg2 := args[0].elem(), args[1].elem()
	k1 := basicKind(arg1)
	if k1 == invalidKind {
		return false, errBadComparisonType
	}
	k2 := basicKind(arg2)
	if k2 == invalidKind {
		return false, errBadComparisonType
	}
	if k1 != k2 {
		switch {
		case k1 == intKind && k2 == uintKind:
			return arg1.int() < 0 || uint64(arg1.int()) < arg2.uint(), nil
		case k1 == uintKind && k2 == intKind:
			return arg2.int() >= 0 && arg1.uint() < uint64(arg2.int()), nil
		}
		return false, fmt.Errorf("incompatible types for comparison: %v and %v", arg1.typeName(), arg2.typeName())
	}
	switch k1 {
	case floatKind:
		return arg1.x.(float64) < arg2.x.(float64), nil
	case intKind:
		return arg1.int() < arg2.int(), nil
	case stringKind:
		return arg1.str() < arg2.str(), nil
	case uintKind:
		return arg1.uint() < arg2.uint(), nil
	}
	return false, errBadComparisonType // bool, complex
}

// le evaluates the comparison a <= b.
func le(args []value) (bool, error) {
	lessThan, err := lt(args)
	if lessThan || err != nil {
		return lessThan, err
	}
	return eq(args)
}

// gt evaluates the comparison a > b.
func gt(args []value) (bool, error) {
	lessOrEqual, err := le(args)
	if err != nil {
		return false, err
	}
	return !lessOrEqual, nil
}

// ge evaluates the comparison a >= b.
func ge(args []value) (bool, error) {
	lessThan, err := lt(args)
	if err != nil {
		return false, err
	}
	return !lessThan, nil
}
