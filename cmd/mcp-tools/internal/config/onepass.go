package config

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// pathStep is one step of a key path: a member name, or an index.
type pathStep struct {
	key   string
	index int // -1 for a key
}

// splitPath splits tools[0].process.timeout into its steps.
func splitPath(p string) []pathStep {
	var out []pathStep
	for _, part := range strings.Split(p, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			out = append(out, pathStep{key: key, index: -1})
		}
		for rest != "" {
			n, after, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(n)
			if err != nil {
				return nil
			}
			out = append(out, pathStep{index: i})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}

// drop removes the value at path p from doc (a decoded YAML document), so
// that the rest can still be decoded and checked: a member is deleted, an
// element of a list becomes null. It reports the value it dropped.
func drop(doc any, p string) (any, bool) {
	steps := splitPath(p)
	if len(steps) == 0 {
		return nil, false
	}
	cur := doc
	for i, st := range steps {
		last := i == len(steps)-1
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[st.key]
			if !ok || st.index >= 0 {
				return nil, false
			}
			if last {
				delete(v, st.key)
				return next, true
			}
			cur = next
		case []any:
			if st.index < 0 || st.index >= len(v) {
				return nil, false
			}
			if last {
				old := v[st.index]
				v[st.index] = nil
				return old, true
			}
			cur = v[st.index]
		default:
			return nil, false
		}
	}
	return nil, false
}

// outOfReach reports, and drops from doc (the value at path p), the
// numbers JSON has no form for (±.inf and .nan) and the whole numbers
// past the range of the field they are given for. A value under a key
// the file does not know becomes null, so that the key is still reported
// as unknown.
func outOfReach(doc any, p string) []Problem {
	var problems []Problem
	bad := func(path string, v any) (string, bool) {
		t := goType(path)
		switch v := v.(type) {
		case float64:
			if !math.IsInf(v, 0) && !math.IsNaN(v) {
				return "", false
			}
			if want := expected(t); want != "" {
				return fmt.Sprintf("want %s, got %s", want, describe(v)), true
			}
			return "", true
		case uint64:
			if t != nil && (t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64 &&
				(v > math.MaxInt64 || reflect.Zero(t).OverflowInt(int64(v))) ||
				t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr && reflect.Zero(t).OverflowUint(v)) {
				return fmt.Sprintf("want %s, got %d (too large)", expected(t), v), true
			}
		case int64:
			if t != nil && (t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64 && reflect.Zero(t).OverflowInt(v) ||
				t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr) {
				return fmt.Sprintf("want %s, got %d (too small)", expected(t), v), true
			}
		}
		return "", false
	}
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			path := k
			if p != "" {
				path = p + "." + k
			}
			if msg, ok := bad(path, v); !ok {
				problems = append(problems, outOfReach(v, path)...)
			} else if msg == "" {
				d[k] = nil
			} else {
				problems = append(problems, Problem{Path: path, Message: msg})
				delete(d, k)
			}
		}
	case []any:
		for i, v := range d {
			path := fmt.Sprintf("%s[%d]", p, i)
			if msg, ok := bad(path, v); !ok {
				problems = append(problems, outOfReach(v, path)...)
			} else {
				if msg != "" {
					problems = append(problems, Problem{Path: path, Message: msg})
				}
				d[i] = nil
			}
		}
	}
	return problems
}

var durationType = reflect.TypeFor[Duration]()

// goType returns the Go type of File at path p, or nil.
func goType(p string) reflect.Type {
	t := reflect.TypeFor[File]()
	for _, st := range splitPath(p) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case st.index >= 0 && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			t = t.Elem()
		case st.index < 0 && t.Kind() == reflect.Map:
			t = t.Elem()
		case st.index < 0 && t.Kind() == reflect.Struct:
			f, ok := fieldByJSONName(t, st.key)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// expected says what a value of type t looks like, with an example.
func expected(t reflect.Type) string {
	switch {
	case t == nil:
		return ""
	case t == durationType:
		return "a duration like 30s (or 5m, 1h30m)"
	case t == reflect.TypeFor[time.Time]():
		return "a time like 2024-07-04T10:00:00Z"
	}
	switch t.Kind() {
	case reflect.String:
		return `text like "abc"`
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number like 10"
	case reflect.Float32, reflect.Float64:
		return "a number like 2.5"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list like [a, b]"
	case reflect.Map:
		return "a mapping like {key: value}"
	case reflect.Struct:
		return "a mapping of settings like {key: value}"
	}
	return ""
}

// describe shows a decoded YAML value in a message.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing (null)"
	case string:
		return fmt.Sprintf("the text %q", clipText(v))
	case bool:
		return fmt.Sprintf("%v", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case float64:
		switch {
		case math.IsInf(v, 1):
			return ".inf"
		case math.IsInf(v, -1):
			return "-.inf"
		case math.IsNaN(v):
			return ".nan"
		}
	}
	b, _ := json.Marshal(v)
	return clipText(string(b))
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
