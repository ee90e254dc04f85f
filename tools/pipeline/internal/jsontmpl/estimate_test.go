package jsontmpl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// boundValues are operands of every type a template may hand to fmt.
var boundValues = []any{
	nil, true, "", "plain", strings.Repeat("\x00\xff\u0080<", 50), "\x00\xff\u2028\U000e0001<&'\">", json.Number("-12.5e3"),
	0, -1 << 62, int64(-1 << 63), uint8(255), 1.7976931348623157e308, -5e-324, complex(-1e308, 1e308),
	[]any{}, []any{nil, "a", json.Number("1"), []any{nil}, map[string]any{}},
	map[string]any{"": nil, "k\x00": []any{"v", true}, "n": map[string]any{"x": 1.5}},
	root{Text: "t\xfe", Structured: []any{nil, "s"}},
}

// boundFormats are printf formats with every verb and flag, widths,
// precisions, * and argument indexes.
var boundFormats = []string{
	"%v", "%+v", "%#v", "%T", "%s", "%q", "%#q", "%+q", "%x", "%X", "% x", "% #x", "%#X",
	"%d", "%b", "%#b", "%o", "%O", "%c", "%U", "%#U", "%e", "%E", "%f", "%F", "%g", "%G",
	"%t", "%p", "%w", "%!", "%", "%%", "%z", "%10v", "%-10.3s", "%010d", "%.20f", "%20.20f",
	"%*d", "%-*v", "%.*f", "%[2]v %[1]v", "%[3]*.[2]*[1]f", "%[9]v", "%v %v %v", "%9999999999d",
	"%.f", "%#.3x", "%+ #0-v", "%*.", "%5.", "%[x", "%[", "%[1", "%[2]*[1]d", "%.[2]*[1]d", "%[2]*.[1][", "%[0]5[d", "%[99999999]5[d", "%[1]5[x", "%A%[1]A%[1]v%[1]q",
}

// TestPrintedSizeBound checks that printfMode and printedSize bound what
// fmt prints, for every format above with one or two of every value (and
// a width as the first operand), and that plainMode bounds fmt.Sprint.
func TestPrintedSizeBound(t *testing.T) {
	s := &state{b: &budget{ctx: context.Background(), nextCheck: ctxCheckSteps}}
	for _, format := range boundFormats {
		for _, a := range boundValues {
			for _, b := range boundValues {
				for _, args := range [][]value{{{x: a}}, {{x: a}, {x: b}}, {{x: 7}, {x: a}, {x: b}}} {
					checkBound(t, s, format, args)
				}
			}
		}
	}
	for _, a := range boundValues {
		for _, b := range boundValues {
			args := []value{{x: a}, {x: b}}
			if got, bound := len(fmt.Sprintln(interfaces(args)...)), s.argsSize(args, plainMode, 1<<40)+1; got > bound {
				t.Errorf("Sprintln(%#v, %#v): got %d bytes; want at most the bound, %d", a, b, got, bound)
			}
		}
	}
}

// checkBound fails t if fmt.Sprintf(format, args...) is longer than its
// bound.
func checkBound(t *testing.T, s *state, format string, args []value) {
	t.Helper()
	s.b.steps = 0
	bound := s.printfSize(format, args, 1<<40)
	if got := len(fmt.Sprintf(format, interfaces(args)...)); got > bound {
		t.Errorf("Sprintf(%q, %#v): got %d bytes; want at most the bound, %d", format, interfaces(args), got, bound)
	}
}

// FuzzPrintedSizeBound checks the bound of TestPrintedSizeBound on any
// format with any two of its values.
func FuzzPrintedSizeBound(f *testing.F) {
	for _, format := range boundFormats {
		f.Add(format, uint8(0), uint8(3))
	}
	f.Fuzz(func(t *testing.T, format string, i, j uint8) {
		if len(format) > 64 {
			t.Skip("a long format only takes long")
		}
		s := &state{b: &budget{ctx: context.Background(), nextCheck: ctxCheckSteps}}
		a, b := boundValues[int(i)%len(boundValues)], boundValues[int(j)%len(boundValues)]
		checkBound(t, s, format, []value{{x: a}, {x: b}})
		checkBound(t, s, format, []value{{x: int(i)}, {x: a}, {x: b}})
	})
}
