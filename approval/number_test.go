package approval

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// smallNumber reports whether s is one JSON number with an exponent short
// enough for big.Rat to hold it cheaply.
func smallNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) || strings.TrimSpace(s) != s || !json.Valid([]byte(s)) || len(s) > 200 {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		return len(strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")) <= 3
	}
	return true
}

// FuzzDecimal: two JSON numbers have one decimal form exactly when they
// are the same number (big.Rat says which), and floatSafe says a number
// is its own nearest float64 only when it is.
func FuzzDecimal(f *testing.F) {
	for _, s := range [][2]string{
		{"9007199254740993", "9007199254740992"}, {"1.50", "15e-1"}, {"0", "-0.0e5"}, {"100", "1e2"},
		{"0.1000000000000000000001", "0.1"}, {"-12E+003", "-12000"}, {"1e-7", "0.0000001"}, {"9007199254740991", "9.007199254740991e15"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !smallNumber(a) || !smallNumber(b) {
			return
		}
		da, ok := decimal(a)
		db, ok2 := decimal(b)
		if !ok || !ok2 {
			t.Fatalf("decimal(%q) = %v, decimal(%q) = %v; want both numbers", a, ok, b, ok2)
		}
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if (da == db) != (ra.Cmp(rb) == 0) {
			t.Errorf("decimal(%q) = %s, decimal(%q) = %s, but the numbers are %s and %s", a, da, b, db, ra.RatString(), rb.RatString())
		}
		if !json.Valid([]byte(da)) {
			t.Errorf("decimal(%q) = %q, not a JSON number", a, da)
		}
		if fl, err := strconv.ParseFloat(a, 64); err == nil && floatSafe(json.RawMessage(a)) {
			if r, _ := new(big.Rat).SetString(strconv.FormatFloat(fl, 'g', -1, 64)); r.Cmp(ra) != 0 || math.Abs(fl) >= maxExact {
				t.Errorf("floatSafe(%s) = true, but its float64 is %v", a, fl)
			}
		}
	})
}

func TestFloatSafe(t *testing.T) {
	for s, want := range map[string]bool{
		`"text"`: true, `true`: true, `{"a":1}`: true, `1`: true, `1.50`: true, `0.1`: true, `-0`: true, `9007199254740991`: true, `-9007199254740991`: true,
		`9007199254740992`: false, `9007199254740993`: false, `1e16`: false, `1e400`: false, `1e-400`: false,
		`0.1000000000000000000001`: false, `1e-99999999999`: false,
	} {
		if got := floatSafe(json.RawMessage(s)); got != want {
			t.Errorf("floatSafe(%s) = %v, want %v", s, got, want)
		}
	}
}
