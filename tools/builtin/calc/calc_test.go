package calc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/Knetic/govaluate"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/calc"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/tools/toolstest"
)

func run(t *testing.T, expr string) tools.Outcome {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"input": expr})
	return tools.Settle(calc.New(calc.Config{}).Call(context.Background(), args))
}

func TestCalculator(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{"the stock example", "(178.15 - 150) * 100", "2815"},
		{"precedence", "2 + 3 * 4", "14"},
		{"power", "2 ** 10", "1024"},
		{"remainder", "17 % 5", "2"},
		{"negation", "-3 + 4", "1"},
		{"float noise hidden", "0.1 + 0.2", "0.3"},
		{"functions", "sqrt(16) + abs(-2) + max(1, 9, 3) + min(4, 2) + round(2.4) + floor(2.9) + ceil(2.1) + pow(2, 3)", "32"},
		{"logs", "log10(1000) + log2(8) + log(exp(1))", "7"},
		{"constants", "round(pi * 100) / 100", "3.14"},
		{"comparison true", "2 ** 10 > 1000", "true"},
		{"comparison false", "1 == 2", "false"},
		{"large", "10 ** 15", "1000000000000000"},
		{"tiny", "1 / 10 ** 12", "1e-12"},
		{"negation after an operator, no space", "2*-3", "-6"},
		{"negative exponent, no space", "10**-3", "0.001"},
		{"minus a negation, no space", "1--2", "3"},
		{"comparison with negations, no space", "-1<-0.5", "true"},
		{"leading-dot number after an operator", "2*.5", "1"},
		{"leading-dot negation", "2*-.5", "-1"},
		{"exponent notation", "6.022e23 * 2", "1.2044e+24"},
		{"negative exponent notation", "1.5e-3 * 2", "0.003"},
		{"capital E and a sign", "2E+3 + 1", "2001"},
		{"reads its own small output", "1e-12 * 3", "3e-12"},
		{"reads its own large output", "1e+21 / 1e21", "1"},
		{"exponent inside a call", "log10(1e3)", "3"},
		{"names with digits untouched", "log10(100) + log2(8)", "5"},
		{"the constant e untouched", "round(2 * e * 1000)", "5437"},
		{"13-digit integer exact", "1234567890123 + 1", "1234567890124"},
		{"16-digit integer exact", "10 ** 15 + 1", "1000000000000001"},
		{"largest exact integer", "2 ** 53 - 1", "9007199254740991"},
		{"large fraction keeps its integer digits", "1234567890123.4 + 0", "1234567890123"},
		{"past 2^53 in exponent form", "2 ** 53 + 1", "9.00719925474e+15"},
		{"big product in exponent form", "123456789 * 123456789", "1.52415787502e+16"},
		{"2 ** 60 in exponent form", "2 ** 60", "1.15292150461e+18"},
		{"minus binds looser than power", "-3 ** 2", "-9"},
		{"minus before a parenthesised power", "-(2) ** 2", "-4"},
		{"parenthesised negative base", "(-3) ** 2", "9"},
		{"power groups to the right", "2 ** 3 ** 2", "512"},
		{"negative exponent", "2 ** -1", "0.5"},
		{"negative base and exponent", "-2 ** -2", "-0.25"},
		{"power above product", "2 * 3 ** 2", "18"},
		{"subtraction of a negation", "10 - -3", "13"},
		{"left to right", "100 / 10 / 5 - 1 - 1", "0"},
		{"booleans compared", "(1 < 2) == (2 < 3)", "true"},
		{"function of a negation", "-sqrt(4) ** 2", "-4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.expr)
			if r.Err != nil {
				t.Fatalf("%s: %v", tt.expr, r.Err)
			}
			if r.Text != tt.want {
				t.Errorf("%s = %q, want %q", tt.expr, r.Text, tt.want)
			}
			if _, ok := r.Structured.(map[string]any)["result"]; !ok {
				t.Errorf("%s: structured = %v, want {result: ...}", tt.expr, r.Structured)
			}
		})
	}
}

func TestCalculatorStructured(t *testing.T) {
	for expr, want := range map[string]float64{
		"(178.15 - 150) * 100": 2815,
		"1234567890123 + 1":    1234567890124,
		"2 ** 53 - 1":          1<<53 - 1,
	} {
		r := run(t, expr)
		if got := r.Structured.(map[string]any)["result"]; got != want {
			t.Errorf("%s: structured result = %v, want %v", expr, got, want)
		}
	}
}

func TestCalculatorRefusals(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{"empty", "  ", "empty"},
		{"division by zero", "1 / 0", "division by zero"},
		{"remainder by zero", "5 % 0", "remainder by zero"},
		{"overflow", "10 ** 400", "overflow"},
		{"nan", "0 / 0", "not a number"},
		{"domain", "sqrt(-1)", "sqrt needs a number ≥ 0"},
		{"function without parentheses", "sqrt + 1", "followed by its arguments in parentheses"},
		{"literal overflow", "1e309", `the number "1e309" is too large`},
		{"literal times ten overflows", "1e308 * 10", "overflow"},
		{"exponent without digits", "2e + 1", "cannot parse"},
		{"three minuses", "1---2", "cannot parse"},
		{"division by zero inside", "1 / (1 / 0)", "division by zero"},
		{"division by zero compared", "1 / 0 > 5", "division by zero"},
		{"division by zero as an argument", "min(1 / 0, 3)", "division by zero"},
		{"nan compared", "0 / 0 == 0 / 0", "not a number"},
		{"remainder by zero inside", "1 / (5 % 0) + 1", "remainder by zero"},
		{"overflow cancelled", "2 ** 1024 - 2 ** 1024", "overflow"},
		{"overflow inverted", "1 / 10 ** 400", "overflow"},
		{"product overflow", "10 ** 300 * 10 ** 300", "overflow"},
		{"zero to a negative power", "1 + 0 ** -1", "division by zero"},
		{"fractional power of a negative", "(-8) ** (1 / 3)", "no real value"},
		{"function overflow", "1 / exp(1000)", "exp is not finite"},
		{"function nan", "pow(-8, 1 / 3) > 0", "pow has no real value"},
		{"variable", "x + 1", `unknown name "x"`},
		{"unknown function", "foo(1)", "the functions are abs"},
		{"string", "'a' + 1", `character '\'' at position 1 is not allowed`},
		{"bitwise", "2 & 3", `character '&' at position 3`},
		{"shift", "2 >> 3", `operator ">>" is not supported`},
		{"ternary", "1 ? 2 : 3", `character '?'`},
		{"backslash", `\`, "not allowed"},
		{"not", "!(1 == 1)", `prefix operator "!"`},
		{"boolean literal", "true", "true and false"},
		{"parse error", "1 +", "cannot parse"},
		{"malformed number", "1.2.3", "Unable to parse numeric value"},
		{"unbalanced close", "1)", "position 2"},
		{"unbalanced open", "(1", "not closed"},
		{"too long", strings.Repeat("1+", 600) + "1", "the limit is 1024"},
		{"too deep", strings.Repeat("(", 65) + "1" + strings.Repeat(")", 65), "nested 65 deep"},
		{"juxtaposed parentheses", "(2)(3)", `write (2) * (3)`},
		{"juxtaposed after a sum", "(2)(3) + 1", `write (2) * (3)`},
		{"number after parenthesis", "(2) 3", `needs an operator`},
		{"juxtaposed call", "sqrt(4)(9)", `needs an operator`},
		{"constant after parenthesis", "(1)pi", `needs an operator`},
		{"top-level comma", "1, 2", "a comma outside"},
		{"list argument", "max((1, 2))", "a comma outside"},
		{"empty parentheses", "()", `unexpected ")"`},
		{"chained comparison", "1 < 2 < 3", "chained comparisons"},
		{"arithmetic on a comparison", "(1 < 2) * 3", "needs numbers, not true/false"},
		{"negated comparison", "-(1 < 2)", "needs numbers, not true/false"},
		{"absurdly deep", strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000), "characters long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.expr)
			if r.Err == nil {
				t.Fatalf("%.40s = %q, want an error", tt.expr, r.Text)
			}
			if r.Err.Kind != tools.KindInvalidArguments || !strings.Contains(r.Err.Message, tt.want) {
				t.Errorf("%.40s: %s %q, want invalid_arguments containing %q", tt.expr, r.Err.Kind, r.Err.Message, tt.want)
			}
			if strings.Contains(r.Err.Message, "0x") || strings.HasSuffix(r.Err.Message, "\n") {
				t.Errorf("%.40s: error %q shows an address or ends in a newline", tt.expr, r.Err.Message)
			}
		})
	}
}

func TestDepthCheckedBeforeParsing(t *testing.T) {
	// Within the length cap but past the depth cap: refused by the scan,
	// never handed to the recursive parser.
	_, err := calc.Eval(strings.Repeat("(", 500)+"1"+strings.Repeat(")", 500), calc.Config{MaxLength: 2000})
	var te *tools.Error
	if !errors.As(err, &te) || !strings.Contains(te.Message, "nested 500 deep; the limit is 64") {
		t.Errorf("err = %v", err)
	}
}

func TestConfigLimits(t *testing.T) {
	tests := []struct {
		name string
		cfg  calc.Config
		expr string
		want string // empty: success
	}{
		{"default length passes", calc.Config{}, strings.Repeat("1+", 511) + "1", ""},
		{"custom length refuses", calc.Config{MaxLength: 8}, "1+2+3+4+5", "9 characters long; the limit is 8"},
		{"default depth passes", calc.Config{}, strings.Repeat("(", 64) + "1" + strings.Repeat(")", 64), ""},
		{"custom depth passes", calc.Config{MaxDepth: 2}, "((1))", ""},
		{"custom depth refuses", calc.Config{MaxDepth: 2}, "(((1)))", "nested 3 deep; the limit is 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"input": tt.expr})
			r := tools.Settle(calc.New(tt.cfg).Call(context.Background(), args))
			switch {
			case tt.want == "" && r.Err != nil:
				t.Errorf("got error %v, want success", r.Err)
			case tt.want != "" && (r.Err == nil || !strings.Contains(r.Err.Message, tt.want)):
				t.Errorf("got %q %v, want an error containing %q", r.Text, r.Err, tt.want)
			}
		})
	}
}

func TestConformance(t *testing.T) {
	toolstest.Check(t, calc.New(calc.Config{}))
}

func ExampleEval() {
	v, _ := calc.Eval("(178.15 - 150) * 100", calc.Config{})
	fmt.Println(calc.Format(v.(float64)))
	_, err := calc.Eval("1 / 0", calc.Config{})
	fmt.Println(err)
	// Output:
	// 2815
	// division by zero: 1 / 0
}

func FuzzCalculator(f *testing.F) {
	for _, s := range []string{"1+1", "(178.15 - 150) * 100", "sqrt(2)", "1/0", "max(1,2,3)", "((((1))))", "2 ** 10 > 5", "-(-(-1))", "'x'", "pi*e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := calc.Eval(expr, calc.Config{})
		if err != nil {
			var te *tools.Error
			if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments {
				t.Fatalf("Eval(%q) error %v is not an invalid-arguments error", expr, err)
			}
			return
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			t.Fatalf("Eval(%q) = %v, a non-finite result", expr, f)
		}
		if s := fmt.Sprint(v); strings.Contains(s, "Inf") || strings.Contains(s, "NaN") {
			t.Fatalf("Eval(%q) = %s", expr, s)
		}
	})
}

// TestLongInputNotEchoed: the plain schema has no maxLength, so the tool
// itself refuses a 1 MiB expression, and no error carries more than
// schema.MaxQuoted bytes of the input back to the model.
func TestLongInputNotEchoed(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name, expr, want string
	}{
		{"1 MiB", strings.Repeat("1", 1<<20), "1048576 characters long; the limit is 1024"},
		{"1 MiB of spaces", strings.Repeat(" ", 1<<20), "1048576 characters long; the limit is 1024"},
		{"long unknown name", long, "unknown name \"xxx"},
		{"long unknown function", long + "(1)", "cannot parse the expression"},
		{"long parse error", "1 + " + long + " +", "cannot parse the expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.expr)
			if r.Err == nil || r.Err.Kind != tools.KindInvalidArguments || !strings.Contains(r.Err.Message, tt.want) {
				t.Fatalf("got %q %v, want an invalid-arguments error containing %q", r.Text, r.Err, tt.want)
			}
			if n := len([]rune(r.Err.Message)); n >= 500 {
				t.Errorf("error is %d characters, want fewer than 500: %.300s", n, r.Err.Message)
			}
			if strings.Contains(r.Err.Message, strings.Repeat("x", schema.MaxQuoted+1)) {
				t.Errorf("error quotes more than %d bytes of the input: %.300s", schema.MaxQuoted, r.Err.Message)
			}
		})
	}
}

// TestAgreesWithGovaluate: on expressions of + - * / %, numbers,
// parentheses and one comparison, where govaluate's planner follows the
// usual rules, the calculator gives govaluate's result.
func TestAgreesWithGovaluate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || rng.IntN(3) == 0 {
			return fmt.Sprint(rng.IntN(20) + 1)
		}
		op := []string{" + ", " - ", " * ", " / ", " % "}[rng.IntN(5)]
		s := gen(depth-1) + op + gen(depth-1)
		if rng.IntN(2) == 0 {
			s = "(" + s + ")"
		}
		return s
	}
	for range 2000 {
		expr := gen(4)
		if rng.IntN(4) == 0 {
			expr += []string{" < ", " >= ", " == ", " != "}[rng.IntN(4)] + gen(2)
		}
		want, err := govaluate.NewEvaluableExpression(expr)
		if err != nil {
			t.Fatalf("govaluate cannot parse %q: %v", expr, err)
		}
		w, err := want.Evaluate(nil)
		if err != nil {
			t.Fatalf("govaluate cannot evaluate %q: %v", expr, err)
		}
		got, err := calc.Eval(expr, calc.Config{})
		if f, ok := w.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			continue
		}
		// govaluate lets a division by zero inside vanish (3 / (1 / 0)
		// gives 0); the calculator refuses it.
		if err != nil && strings.Contains(err.Error(), "by zero") {
			continue
		}
		if err != nil || got != w {
			t.Errorf("%s = %v %v, govaluate says %v", expr, got, err, w)
		}
	}
}
