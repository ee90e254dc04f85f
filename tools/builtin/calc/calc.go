// Package calc is the calculator built-in: arithmetic read by
// github.com/Knetic/govaluate's parser, restricted to numbers, operators,
// parentheses, comparisons and an allow-list of math functions, and
// evaluated here by the usual precedence rules.
//
// The expression's length and nesting depth are checked BEFORE it is parsed
// (the input schema publishes Config.MaxLength as maxLength, but Eval may be
// called directly, so it enforces Config.MaxLength itself, first of all):
// govaluate parses by recursion, and a deep enough input would overflow the
// goroutine stack, which no recover() catches and which kills the process.
package calc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/Knetic/govaluate"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// Defaults for Config's zero values.
const (
	DefaultMaxLength = 1024
	DefaultMaxDepth  = 64
)

// Config configures the calculator. The zero value uses the defaults.
type Config struct {
	// MaxLength is the longest expression accepted, in bytes. Zero:
	// DefaultMaxLength.
	MaxLength int
	// MaxDepth is the deepest parenthesis nesting accepted. Zero:
	// DefaultMaxDepth.
	MaxDepth int
}

// Name is the tool's name.
const Name = "calculator"

const description = `Evaluate an arithmetic expression and return the number (or true/false for a comparison).
Accepts numbers (3, 2.5, -4, 6.02e23), + - * / % (remainder) ** (power), parentheses, comparisons (== != < <= > >=),
the constants pi and e, and these functions: FUNCTIONS.
Examples: "(178.15 - 150) * 100" → 2815; "sqrt(2) * 2" → 2.82842712475; "max(3, 7, 5)" → 7; "2 ** 10 > 1000" → true.
No variables, strings or other operators. Division by zero and results that are not finite numbers are errors.`

var outputSchema = []byte(`{"type":"object","properties":{"result":{"type":["number","boolean"],"description":"The value of the expression"}},"required":["result"]}`)

// New returns the calculator tool.
func New(cfg Config) tools.Tool {
	if cfg.MaxLength <= 0 {
		cfg.MaxLength = DefaultMaxLength
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	c := &calculator{cfg: cfg}
	info := tools.Info{
		Name:         Name,
		Description:  strings.Replace(description, "FUNCTIONS", strings.Join(functionNames(), ", "), 1),
		OutputSchema: outputSchema,
		Annotations:  tools.Annotations{Title: "Calculator", ReadOnly: true, Idempotent: true},
		MaxInput:     cfg.MaxLength, // published as the input's maxLength
	}
	return tools.NewPlain(info, c.call)
}

type calculator struct{ cfg Config }

func (c *calculator) call(_ context.Context, input string) (tools.Result, error) {
	v, err := Eval(input, c.cfg)
	if err != nil {
		return tools.Result{}, err
	}
	if b, ok := v.(bool); ok {
		return tools.Result{Text: strconv.FormatBool(b), Structured: map[string]any{"result": b}}, nil
	}
	text := Format(v.(float64))
	f, _ := strconv.ParseFloat(text, 64)
	return tools.Result{Text: text, Structured: map[string]any{"result": f}}, nil
}

var constants = map[string]any{"pi": math.Pi, "e": math.E}

// Eval evaluates expr under cfg's limits and returns a float64 or a bool.
// Every error is a *tools.Error of kind invalid_arguments with a message
// that says what is wrong and, where it can, where.
func Eval(expr string, cfg Config) (any, error) {
	if cfg.MaxLength <= 0 {
		cfg.MaxLength = DefaultMaxLength
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if strings.TrimSpace(expr) == "" {
		return nil, tools.InvalidArgs("the expression is empty; send something like \"2 * (3 + 4)\"")
	}
	if len(expr) > cfg.MaxLength {
		return nil, tools.InvalidArgs("the expression is %d characters long; the limit is %d", len(expr), cfg.MaxLength)
	}
	depth, maxDepth := 0, 0
	for i, r := range expr {
		if !allowedChar(r) {
			return nil, tools.InvalidArgs("character %q at position %d is not allowed: use digits, + - * / %% ** ( ) , comparisons (== != < <= > >=), pi, e and function names", r, i+1)
		}
		switch r {
		case '(':
			depth++
			maxDepth = max(maxDepth, depth)
		case ')':
			depth--
			if depth < 0 {
				return nil, tools.InvalidArgs("unbalanced parentheses: a ')' at position %d closes nothing", i+1)
			}
		}
	}
	if maxDepth > cfg.MaxDepth {
		return nil, tools.InvalidArgs("parentheses are nested %d deep; the limit is %d", maxDepth, cfg.MaxDepth)
	}
	if depth != 0 {
		return nil, tools.InvalidArgs("unbalanced parentheses: %d '(' not closed", depth)
	}
	expr, err := normalize(expr)
	if err != nil {
		return nil, err
	}
	return evaluate(expr)
}

// operatorChars are what govaluate's lexer reads as one operator token
// when they follow each other.
const operatorChars = "+-*/%<>=!"

// normalize rewrites what govaluate's lexer misreads into what it reads. It
// takes a run of operator characters, and a '.' after them, as one token,
// so "2*-3" was the unknown operator "*-" and "2*.5" the unknown "*.": a
// space now ends an operator before a negation or a leading-dot number. It
// has no exponent notation, so "1e-12" (which Format prints) was 1 followed
// by a name: such a number now becomes the plain decimal of the same
// float64.
func normalize(expr string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case (isDigit(c) || c == '.') && i > 0 && isWordByte(expr[i-1]):
			b.WriteByte(c) // inside a name such as log10
			i++
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			j := i
			for j < len(expr) && (isDigit(expr[j]) || expr[j] == '.') {
				j++
			}
			k := j
			if k < len(expr) && (expr[k] == 'e' || expr[k] == 'E') {
				k++
				if k < len(expr) && (expr[k] == '+' || expr[k] == '-') {
					k++
				}
				digits := k
				for k < len(expr) && isDigit(expr[k]) {
					k++
				}
				if k > digits && (k == len(expr) || !isWordByte(expr[k]) && expr[k] != '.') {
					f, err := strconv.ParseFloat(expr[i:k], 64)
					if math.IsInf(f, 0) {
						return "", tools.InvalidArgs("the number %s is too large for a 64-bit float (overflow)", schema.Quote(expr[i:k]))
					}
					if err == nil {
						b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
						i = k
						continue
					}
				}
			}
			b.WriteString(expr[i:j])
			i = j
		case strings.IndexByte(operatorChars, c) >= 0:
			j := i
			for j < len(expr) && strings.IndexByte(operatorChars, expr[j]) >= 0 {
				j++
			}
			run := expr[i:j]
			if n := len(run); n > 1 && run[n-1] == '-' && oneOf(run[:n-1], "+", "-", "*", "/", "%", "**", "==", "!=", "<", "<=", ">", ">=") {
				run = run[:n-1] + " -"
			}
			b.WriteString(run)
			if j < len(expr) && expr[j] == '.' {
				b.WriteByte(' ')
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// evaluate parses and runs an expression that passed the checks above. A
// panic inside govaluate (its lexer has some) becomes an error.
func evaluate(expr string) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, tools.InvalidArgs("cannot parse the expression")
		}
	}()
	e, err := govaluate.NewEvaluableExpressionWithFunctions(expr, functions)
	if err != nil {
		msg := schema.Clip(strings.TrimSpace(err.Error()), 3*schema.MaxQuoted/2) // it may quote the input
		if strings.Contains(msg, "from FUNCTION [") {
			// govaluate prints the function's address: "FUNCTION [0x633b60]".
			msg = "a function name must be followed by its arguments in parentheses, like sqrt(2)"
		}
		if strings.Contains(msg, "Undefined function") {
			msg += "; the functions are " + strings.Join(functionNames(), ", ")
		}
		return nil, tools.InvalidArgs("cannot parse the expression: %s", msg)
	}
	if err := checkTokens(e.Tokens()); err != nil {
		return nil, err
	}
	// The tokens are evaluated here, not by govaluate's Evaluate: its
	// planner silently drops what follows a closing parenthesis ("(2)(3)"
	// gave 2), binds a leading minus tighter than ** ("-3 ** 2" gave 9) and
	// groups ** to the left ("2 ** 3 ** 2" gave 64).
	p := &parser{tokens: e.Tokens()}
	v, err := p.comparison()
	if err == nil && p.i < len(p.tokens) {
		err = p.unexpected()
	}
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case bool:
		return v, nil
	case float64:
		switch {
		case math.IsNaN(v):
			return nil, tools.InvalidArgs("the result is not a number (NaN): check for a remainder by zero (x %% 0) or 0/0")
		case math.IsInf(v, 0):
			return nil, tools.InvalidArgs("the result is not finite: a division by zero, or a result too large for a 64-bit float (overflow)")
		}
		return v, nil
	}
	return nil, tools.InvalidArgs("the expression gives no number")
}

// parser evaluates govaluate's tokens (already checked by checkTokens) by
// the usual rules: comparisons bind loosest, then + -, then * / %, then a
// leading minus, then ** (grouped to the right, so -3 ** 2 is -9 and
// 2 ** 3 ** 2 is 512). Its recursion is bounded by the parenthesis depth
// and the expression's length, both checked before parsing.
type parser struct {
	tokens []govaluate.ExpressionToken
	i      int
}

// next returns the next token's kind and its value as text, or UNKNOWN at
// the end.
func (p *parser) next() (govaluate.TokenKind, string) {
	if p.i >= len(p.tokens) {
		return govaluate.UNKNOWN, ""
	}
	t := p.tokens[p.i]
	switch t.Kind {
	case govaluate.CLAUSE:
		return t.Kind, "("
	case govaluate.CLAUSE_CLOSE:
		return t.Kind, ")"
	case govaluate.FUNCTION:
		return t.Kind, "a function"
	}
	return t.Kind, fmt.Sprint(t.Value)
}

func (p *parser) unexpected() error {
	k, v := p.next()
	switch {
	case k == govaluate.UNKNOWN:
		return tools.InvalidArgs("cannot parse the expression: it ends too early")
	case k == govaluate.COMPARATOR:
		return tools.InvalidArgs("cannot parse the expression: chained comparisons like 1 < x < 3 are not supported; compare two values")
	case k == govaluate.SEPARATOR:
		return tools.InvalidArgs("cannot parse the expression: a comma outside a function's arguments")
	case p.i > 0 && p.tokens[p.i-1].Kind == govaluate.CLAUSE_CLOSE:
		return tools.InvalidArgs("cannot parse the expression: %s after a ')' needs an operator between them (write (2) * (3), not (2)(3))", schema.Quote(v))
	}
	return tools.InvalidArgs("cannot parse the expression: unexpected %s", schema.Quote(v))
}

func (p *parser) comparison() (any, error) {
	l, err := p.sum()
	if err != nil {
		return nil, err
	}
	if k, op := p.next(); k == govaluate.COMPARATOR {
		p.i++
		r, err := p.sum()
		if err != nil {
			return nil, err
		}
		lb, lok := l.(bool)
		rb, rok := r.(bool)
		switch {
		case lok && rok && op == "==":
			return lb == rb, nil
		case lok && rok && op == "!=":
			return lb != rb, nil
		case lok || rok:
			return nil, tools.InvalidArgs("cannot compare true/false with %s: compare numbers (chained comparisons like 1 < x < 3 are not supported)", op)
		}
		a, b := l.(float64), r.(float64)
		switch op {
		case "==":
			return a == b, nil
		case "!=":
			return a != b, nil
		case "<":
			return a < b, nil
		case "<=":
			return a <= b, nil
		case ">":
			return a > b, nil
		case ">=":
			return a >= b, nil
		}
		return nil, tools.InvalidArgs("operator %s is not supported", schema.Quote(op))
	}
	return l, nil
}

// number is v as a number, or an error that names op.
func number(v any, op string) (float64, error) {
	if f, ok := v.(float64); ok {
		return f, nil
	}
	return 0, tools.InvalidArgs("%s needs numbers, not true/false", op)
}

func (p *parser) sum() (any, error) {
	l, err := p.product()
	for err == nil {
		k, op := p.next()
		if k != govaluate.MODIFIER || (op != "+" && op != "-") {
			return l, nil
		}
		p.i++
		var r any
		if r, err = p.product(); err == nil {
			l, err = arithmetic(op, l, r)
		}
	}
	return nil, err
}

func (p *parser) product() (any, error) {
	l, err := p.unary()
	for err == nil {
		k, op := p.next()
		if k != govaluate.MODIFIER || (op != "*" && op != "/" && op != "%") {
			return l, nil
		}
		p.i++
		var r any
		if r, err = p.unary(); err == nil {
			l, err = arithmetic(op, l, r)
		}
	}
	return nil, err
}

func (p *parser) unary() (any, error) {
	if k, op := p.next(); k == govaluate.PREFIX && op == "-" {
		p.i++
		v, err := p.unary()
		if err != nil {
			return nil, err
		}
		x, err := number(v, "-")
		return -x, err
	}
	return p.power()
}

func (p *parser) power() (any, error) {
	base, err := p.primary()
	if err != nil {
		return nil, err
	}
	if k, op := p.next(); k == govaluate.MODIFIER && op == "**" {
		p.i++
		exp, err := p.unary() // right-grouping, and 2 ** -1 is allowed
		if err != nil {
			return nil, err
		}
		return arithmetic("**", base, exp)
	}
	return base, nil
}

func (p *parser) primary() (any, error) {
	if p.i >= len(p.tokens) {
		return nil, p.unexpected()
	}
	t := p.tokens[p.i]
	switch t.Kind {
	case govaluate.NUMERIC:
		p.i++
		return t.Value, nil
	case govaluate.VARIABLE:
		p.i++
		return constants[fmt.Sprint(t.Value)], nil
	case govaluate.CLAUSE:
		p.i++
		v, err := p.comparison()
		if err != nil {
			return nil, err
		}
		if k, _ := p.next(); k != govaluate.CLAUSE_CLOSE {
			return nil, p.unexpected()
		}
		p.i++
		return v, nil
	case govaluate.FUNCTION:
		p.i++
		f, _ := t.Value.(govaluate.ExpressionFunction)
		if k, _ := p.next(); k != govaluate.CLAUSE || f == nil {
			return nil, p.unexpected()
		}
		p.i++
		var args []any
		if k, _ := p.next(); k == govaluate.CLAUSE_CLOSE {
			p.i++
		} else {
			for {
				v, err := p.comparison()
				if err != nil {
					return nil, err
				}
				args = append(args, v)
				k, _ := p.next()
				p.i++
				if k == govaluate.CLAUSE_CLOSE {
					break
				}
				if k != govaluate.SEPARATOR {
					p.i--
					return nil, p.unexpected()
				}
			}
		}
		v, err := f(args...)
		if err != nil {
			return nil, tools.InvalidArgs("cannot evaluate the expression: %s", schema.Clip(err.Error(), 3*schema.MaxQuoted/2))
		}
		return v, nil
	}
	return nil, p.unexpected()
}

// arithmetic applies a binary operator to two numbers.
func arithmetic(op string, l, r any) (any, error) {
	a, err := number(l, op)
	if err != nil {
		return nil, err
	}
	b, err := number(r, op)
	if err != nil {
		return nil, err
	}
	var v float64
	switch op {
	case "+":
		v = a + b
	case "-":
		v = a - b
	case "*":
		v = a * b
	case "/":
		if b == 0 {
			if a == 0 {
				return nil, tools.InvalidArgs("0 / 0 is not a number (a division by zero)")
			}
			return nil, tools.InvalidArgs("division by zero: %s / 0", Format(a))
		}
		v = a / b
	case "%":
		if b == 0 {
			return nil, tools.InvalidArgs("a remainder by zero (%s %% 0) is not a number", Format(a))
		}
		v = math.Mod(a, b)
	case "**":
		v = math.Pow(a, b)
		switch {
		case math.IsNaN(v):
			return nil, tools.InvalidArgs("%s ** %s has no real value (a negative number to a fractional power)", Format(a), Format(b))
		case math.IsInf(v, 0) && a == 0:
			return nil, tools.InvalidArgs("0 ** %s is a division by zero", Format(b))
		}
	default:
		return nil, tools.InvalidArgs("operator %s is not supported", schema.Quote(op))
	}
	// Checked at every step, not only at the end: 1 / (1 / 0) must not
	// come out as 0, nor 1 / 0 > 5 as true.
	if math.IsInf(v, 0) {
		return nil, tools.InvalidArgs("overflow: %s %s %s is too large for a 64-bit float", Format(a), op, Format(b))
	}
	return v, nil
}

// finite returns v, or an error when a function's result is not a finite
// number (exp(1000), pow(0, -1), pow(-8, 1/3)).
func finite(name string, v float64) (any, error) {
	switch {
	case math.IsNaN(v):
		return nil, fmt.Errorf("%s has no real value for these arguments", name)
	case math.IsInf(v, 0):
		return nil, fmt.Errorf("%s is not finite for these arguments (overflow or a division by zero)", name)
	}
	return v, nil
}

// allowedChar reports whether r may appear in an expression at all: what
// numbers, the allowed operators and function names are made of.
func allowedChar(r rune) bool {
	switch {
	case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		return true
	case strings.ContainsRune(" \t\n\r.+-*/%(),<>=!_", r):
		return true
	}
	return false
}

// checkTokens refuses everything that is not a number, an allowed operator,
// a parenthesis, a comma, an allowed function or a constant.
func checkTokens(tokens []govaluate.ExpressionToken) error {
	for _, t := range tokens {
		switch t.Kind {
		case govaluate.NUMERIC, govaluate.CLAUSE, govaluate.CLAUSE_CLOSE, govaluate.SEPARATOR, govaluate.FUNCTION:
			// FUNCTION tokens exist only for names in the functions map.
		case govaluate.VARIABLE:
			if _, ok := constants[fmt.Sprint(t.Value)]; !ok {
				return tools.InvalidArgs("unknown name %s: variables are not supported; the constants are pi and e, the functions %s", schema.Quote(fmt.Sprint(t.Value)), strings.Join(functionNames(), ", "))
			}
		case govaluate.MODIFIER:
			if !oneOf(t.Value, "+", "-", "*", "/", "%", "**") {
				return tools.InvalidArgs("operator %s is not supported; use + - * / %% **", schema.Quote(fmt.Sprint(t.Value)))
			}
		case govaluate.COMPARATOR:
			if !oneOf(t.Value, "==", "!=", ">", ">=", "<", "<=") {
				return tools.InvalidArgs("operator %s is not supported; the comparisons are == != < <= > >=", schema.Quote(fmt.Sprint(t.Value)))
			}
		case govaluate.PREFIX:
			if !oneOf(t.Value, "-") {
				return tools.InvalidArgs("prefix operator %s is not supported; only - (negation) is", schema.Quote(fmt.Sprint(t.Value)))
			}
		case govaluate.STRING, govaluate.TIME, govaluate.PATTERN:
			return tools.InvalidArgs("strings are not supported: the calculator takes numbers only (found %s)", schema.Quote(fmt.Sprint(t.Value)))
		case govaluate.BOOLEAN:
			return tools.InvalidArgs("true and false are not accepted as input; compare numbers instead")
		default:
			return tools.InvalidArgs("%s %s is not supported: use numbers, + - * / %% **, parentheses, comparisons and the listed functions", strings.ToLower(t.Kind.String()), schema.Quote(fmt.Sprint(t.Value)))
		}
	}
	return nil
}

func oneOf(v any, options ...string) bool {
	s := fmt.Sprint(v)
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

// Format renders a result: 12 significant digits, which hides the noise of
// binary floating point (178.15 - 150 gives 28.150000000000006), but never
// fewer than the integer part has below 2^53, where a float64 holds every
// integer exactly (1234567890123 + 1 is 1234567890124, not 1234567890120).
// No exponent for everyday magnitudes; an exponent below 1e-9 and from 2^53
// on, where integers are no longer exact and a long run of digits would
// look exact when it is not (2 ** 60 is 1.15292150461e+18).
func Format(v float64) string {
	digits, a := 12, math.Abs(v)
	if a >= 1e12 && a < 1<<53 {
		digits = len(strconv.FormatFloat(math.Trunc(a), 'f', 0, 64))
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	if r == 0 {
		return "0"
	}
	if a >= 1<<53 || math.Abs(r) < 1e-9 {
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

var errArgs = errors.New("wrong arguments")

func unary(name string, f func(float64) (float64, error)) govaluate.ExpressionFunction {
	return func(args ...any) (any, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%s takes 1 argument, got %d: %w", name, len(args), errArgs)
		}
		x, ok := args[0].(float64)
		if !ok {
			return nil, fmt.Errorf("%s takes a number: %w", name, errArgs)
		}
		v, err := f(x)
		if err != nil {
			return nil, err
		}
		return finite(name, v)
	}
}

func plain(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) { return f(x), nil }
}

func domain(name string, ok func(float64) bool, what string, f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		if !ok(x) {
			return 0, fmt.Errorf("%s needs %s, got %s", name, what, Format(x))
		}
		return f(x), nil
	}
}

func variadic(name string, f func([]float64) float64) govaluate.ExpressionFunction {
	return func(args ...any) (any, error) {
		if len(args) == 0 {
			return nil, fmt.Errorf("%s takes at least 1 argument: %w", name, errArgs)
		}
		xs := make([]float64, len(args))
		for i, a := range args {
			x, ok := a.(float64)
			if !ok {
				return nil, fmt.Errorf("%s takes numbers: %w", name, errArgs)
			}
			xs[i] = x
		}
		return finite(name, f(xs))
	}
}

func binary(name string, f func(a, b float64) float64) govaluate.ExpressionFunction {
	return func(args ...any) (any, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("%s takes 2 arguments, got %d: %w", name, len(args), errArgs)
		}
		a, ok1 := args[0].(float64)
		b, ok2 := args[1].(float64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s takes numbers: %w", name, errArgs)
		}
		return finite(name, f(a, b))
	}
}

func positive(x float64) bool    { return x > 0 }
func nonNegative(x float64) bool { return x >= 0 }
func unit(x float64) bool        { return x >= -1 && x <= 1 }

// functions is the allow-list.
var functions = map[string]govaluate.ExpressionFunction{
	"sqrt":  unary("sqrt", domain("sqrt", nonNegative, "a number ≥ 0", math.Sqrt)),
	"abs":   unary("abs", plain(math.Abs)),
	"round": unary("round", plain(math.Round)),
	"floor": unary("floor", plain(math.Floor)),
	"ceil":  unary("ceil", plain(math.Ceil)),
	"trunc": unary("trunc", plain(math.Trunc)),
	"log":   unary("log", domain("log", positive, "a number > 0", math.Log)),
	"ln":    unary("ln", domain("ln", positive, "a number > 0", math.Log)),
	"log10": unary("log10", domain("log10", positive, "a number > 0", math.Log10)),
	"log2":  unary("log2", domain("log2", positive, "a number > 0", math.Log2)),
	"exp":   unary("exp", plain(math.Exp)),
	"sin":   unary("sin", plain(math.Sin)),
	"cos":   unary("cos", plain(math.Cos)),
	"tan":   unary("tan", plain(math.Tan)),
	"asin":  unary("asin", domain("asin", unit, "a number between -1 and 1", math.Asin)),
	"acos":  unary("acos", domain("acos", unit, "a number between -1 and 1", math.Acos)),
	"atan":  unary("atan", plain(math.Atan)),
	"pow":   binary("pow", math.Pow),
	"hypot": binary("hypot", math.Hypot),
	"min": variadic("min", func(xs []float64) float64 {
		m := xs[0]
		for _, x := range xs[1:] {
			m = math.Min(m, x)
		}
		return m
	}),
	"max": variadic("max", func(xs []float64) float64 {
		m := xs[0]
		for _, x := range xs[1:] {
			m = math.Max(m, x)
		}
		return m
	}),
}

func functionNames() []string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
