package approval

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Numbers on a form. Many clients, and mcp-go's decoding of an
// elicitation/create answer, hold JSON numbers as float64, which has every
// integer only up to 2^53: past it, 9007199254740993 becomes
// 9007199254740992. So a form shows such a number as JSON text (which
// every client keeps as it is), and a number in an answer that may have
// been rounded on its way from the person is refused rather than run.

// maxExact is 2^53: every integer of smaller magnitude is a float64.
const maxExact = 1 << 53

// decimal returns the JSON number literal s as a sign, its significant
// digits and a power of ten ("-12e-3" for -0.0120; "0" for any zero), so
// that two literals are the same number exactly when their forms are
// equal. ok is false when s is not a JSON number or its exponent is
// beyond ±10^9.
func decimal(s string) (form string, ok bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var exp int64
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e := s[i+1:]
		s = s[:i]
		eneg := strings.HasPrefix(e, "-")
		e = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(e, "-"), "+"), "0")
		if len(e) > 9 || !digitsOnly(e) {
			return "", false
		}
		if e != "" {
			exp, _ = strconv.ParseInt(e, 10, 64)
		}
		if eneg {
			exp = -exp
		}
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || !digitsOnly(whole) || !digitsOnly(frac) || (dot && frac == "") {
		return "", false
	}
	digits := strings.TrimLeft(whole+frac, "0")
	exp -= int64(len(frac))
	if digits == "" {
		return "0", true
	}
	n := len(digits)
	digits = strings.TrimRight(digits, "0")
	exp += int64(n - len(digits))
	if neg {
		digits = "-" + digits
	}
	return digits + "e" + strconv.FormatInt(exp, 10), true
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// floatSafe reports whether raw, when it is a number, comes through a
// float64 unchanged and small enough that a client holding numbers as
// float64 may change it without rounding what a person types into it:
// below 2^53 in magnitude, and the same number as its nearest float64
// (0.1 is, 0.1000000000000000000001 is not). Anything else is safe.
func floatSafe(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return true // not a number
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Abs(f) >= maxExact {
		return false
	}
	a, ok := decimal(s)
	b, _ := decimal(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && a == b
}

// mayBeRounded reports whether a number in an answer, val as decoded and
// text as it encodes, may not be the number the person gave: a float64 (a
// decoding that kept no more) or a number a float64 holds (one a client
// may have rounded to), past 2^53 in magnitude either way.
func mayBeRounded(val any, text json.RawMessage) bool {
	var float bool
	switch val.(type) {
	case float64, float32:
		float = true
	case json.Number:
	default:
		return false // not a number, or a Go integer, which is exact
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || math.Abs(f) < maxExact {
		return false // beyond float64, so kept as written; or below 2^53
	}
	if float {
		return true
	}
	a, _ := decimal(string(text))
	b, _ := decimal(strconv.FormatFloat(f, 'g', -1, 64))
	return a == b
}

// sameValue reports whether a and b are the same JSON value: spacing and
// key order do not matter, and numbers are compared exactly as written (so
// 1.50 is 15e-1, but 9007199254740993 is not 9007199254740992).
func sameValue(a, b json.RawMessage) bool {
	return bytes.Equal(canonicalValue(a), canonicalValue(b))
}

// canonicalValue is raw decoded and encoded again, object keys sorted and
// each number in its decimal form. It returns raw itself when raw is not
// one JSON value.
func canonicalValue(raw json.RawMessage) []byte {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return raw
	}
	b, err := json.Marshal(exactNumbers(v))
	if err != nil {
		return raw
	}
	return b
}

// exactNumbers replaces each json.Number in v by its decimal form.
func exactNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if d, ok := decimal(string(x)); ok {
			return json.Number(d)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = exactNumbers(e)
		}
	}
	return v
}
