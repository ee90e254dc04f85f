package prom

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// The metric types, as the # TYPE line spells them.
const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
	typeSummary   = "summary"
)

// encoder renders families into one buffer, in any order, and hands them
// out sorted by name. A family with no sample is dropped.
type encoder struct {
	buf    []byte
	chunks []chunk
	cur    chunk
	open   bool // a family was begun and not yet ended
	n      int  // samples of the current family
}

// chunk is one family's text: buf[start:end].
type chunk struct {
	name       string
	start, end int
}

// family begins a family: its # HELP and # TYPE lines, as expfmt writes
// them (help escaped, and written even when empty).
func (e *encoder) family(name, help, typ string) {
	e.end()
	e.cur, e.open, e.n = chunk{name: name, start: len(e.buf)}, true, 0
	e.buf = append(e.buf, "# HELP "...)
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, ' ')
	e.buf = appendEscaped(e.buf, help, false)
	e.buf = append(e.buf, "\n# TYPE "...)
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, ' ')
	e.buf = append(e.buf, typ...)
	e.buf = append(e.buf, '\n')
}

// end closes the current family, dropping it when it has no sample.
func (e *encoder) end() {
	if !e.open {
		return
	}
	e.open = false
	if e.n == 0 {
		e.buf = e.buf[:e.cur.start]
		return
	}
	e.cur.end = len(e.buf)
	e.chunks = append(e.chunks, e.cur)
}

// sample writes one line: name and suffix, the label pairs (already
// rendered, sorted by name; may be empty), one more pair whose value is a
// float (le or quantile; none when extra is ""), and the value.
func (e *encoder) sample(name, suffix, labels, extra string, extraValue, v float64) {
	e.n++
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, suffix...)
	if labels != "" || extra != "" {
		e.buf = append(e.buf, '{')
		e.buf = append(e.buf, labels...)
		if extra != "" {
			if labels != "" {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, extra...)
			e.buf = append(e.buf, `="`...)
			e.buf = appendFloat(e.buf, extraValue)
			e.buf = append(e.buf, '"')
		}
		e.buf = append(e.buf, '}')
	}
	e.buf = append(e.buf, ' ')
	e.buf = appendFloat(e.buf, v)
	e.buf = append(e.buf, '\n')
}

// sorted ends the last family and returns the text of every family,
// sorted by name, appended to dst.
func (e *encoder) sorted(dst []byte) []byte {
	e.end()
	slices.SortFunc(e.chunks, func(a, b chunk) int { return strings.Compare(a.name, b.name) })
	for _, c := range e.chunks {
		dst = append(dst, e.buf[c.start:c.end]...)
	}
	return dst
}

// appendFloat formats f as expfmt does: 1, 0 and -1 short, NaN, +Inf and
// -Inf spelled out, anything else in the shortest 'g' form.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case f == 1:
		return append(b, '1')
	case f == 0:
		return append(b, '0')
	case f == -1:
		return append(b, "-1"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, +1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendEscaped escapes s as expfmt does: a backslash and a newline always,
// a double quote only in a label value (quote true).
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// renderLabels renders label pairs, already in label-name order, as they
// appear between the braces: name="value",...
func renderLabels(names, values []string) string {
	var b []byte
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
		b = append(b, `="`...)
		b = appendEscaped(b, values[i], true)
		b = append(b, '"')
	}
	return string(b)
}

// validMetricName reports whether s is a metric name of the classic
// character set ([a-zA-Z_:][a-zA-Z0-9_:]*), which needs no quoting.
func validMetricName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// validLabelName reports whether s is a label name of the classic
// character set ([a-zA-Z_][a-zA-Z0-9_]*), not reserved (__ prefix).
func validLabelName(s string) bool {
	if s == "" || strings.HasPrefix(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
