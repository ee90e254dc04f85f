package jsontmpl

import (
	"strings"
	"unicode/utf8"
)

// The functions that make strings (print, printf, println, html, js,
// urlquery) bound what they will make before they make it: fmt builds the
// whole string before MaxMadeBytes could be checked against its length,
// and printf's widths, or a document printed a hundred times, would make
// gigabytes first.

// printMode is how many bytes fmt may print for each part of a value, by
// the verbs and flags it formats the value with.
type printMode struct {
	strMul int // bytes printed per byte of a string
	num    int // bytes printed for a number
	pad    int // width plus precision, applied by fmt to every number, string and map key inside a value
	leaf   int // bytes around each leaf: separators, "<nil>", %!v(type=...) wrappers, quotes
	node   int // bytes around each slice, map or struct: brackets, Go type names
}

// plainMode is fmt's %v, as print, println and the escapers format
// values. Numbers take at most 24 bytes (-1.7976931348623157e+308) but
// complex ones, which take both parts' and three more.
var plainMode = printMode{strMul: 1, num: 24, leaf: 8, node: 8}

// printfShape is what a printf format tells of the bytes it prints.
type printfShape struct {
	mode      printMode // covers every verb
	extra     int       // bytes printed apart from the operands: text, padding of missing operands, notes like %!(EXTRA ...)
	verbs     int       // verbs that may print an operand
	reordered bool      // the format has argument indexes: a verb may print any operand, each may be printed many times
}

// printfMode returns the shape of a printf format with operands args. A *
// width or precision is the largest integer operand fmt would take as one.
func printfMode(format string, args []value) printfShape {
	star := 0
	for _, a := range args {
		var n int64
		switch x := a.x.(type) {
		case int, int64:
			n = a.int()
		case uint8:
			n = int64(x)
		default:
			continue
		}
		const fmtMax = 1e6 // fmt refuses larger widths and precisions
		if n < 0 {
			n = -n
		}
		if n <= fmtMax {
			star = max(star, int(n))
		}
	}
	m := printMode{strMul: 1, num: 24, leaf: 8, node: 8}
	extra := len(format) + 32*(len(args)+1)
	verbs, reordered := 0, false
	index := func(i int) (int, bool) {
		reordered = reordered || i < len(format) && format[i] == '['
		return argIndex(format, i)
	}
	for i := 0; i < len(format); {
		j := strings.IndexByte(format[i:], '%')
		if j < 0 {
			break
		}
		i += j + 1
		var sharp, space bool
	flags:
		for ; i < len(format); i++ {
			switch format[i] {
			case '#':
				sharp = true
			case ' ':
				space = true
			case '0', '+', '-':
			default:
				break flags
			}
		}
		// As fmt's doPrintf: [n], width, .precision, [n] and the verb,
		// where an index just before the verb is taken as one only if
		// no index came just before it.
		var width, prec int
		var afterIndex bool
		i, afterIndex = index(i)
		if i < len(format) && format[i] == '*' {
			width, i, afterIndex = star, i+1, false
		} else {
			width, i = fmtNumber(format, i)
		}
		if i+1 < len(format) && format[i] == '.' { // a final . is the verb
			i, afterIndex = index(i + 1)
			if i < len(format) && format[i] == '*' {
				prec, i, afterIndex = star, i+1, false
			} else {
				prec, i = fmtNumber(format, i)
			}
		}
		if !afterIndex {
			i, _ = index(i)
		}
		extra += width + prec + 32
		m.pad = max(m.pad, width+prec)
		if i >= len(format) {
			break
		}
		verb, size := utf8.DecodeRuneInString(format[i:])
		i += size
		if verb == '%' {
			continue // %% prints %, takes no operand and no padding
		}
		verbs++
		switch {
		case verb == 'x' || verb == 'X':
			// Two hex digits a byte; with ' ', separated, and with '#'
			// as well, each 0x-prefixed.
			m.strMul = max(m.strMul, 2)
			if space {
				m.strMul = max(m.strMul, 5)
			}
		case verb == 'q' || (verb == 'v' || verb == 'w') && sharp:
			// Quoted (%#w is fmt's %#v too): \x00 for a byte at worst.
			m.strMul = max(m.strMul, 4)
		}
		if verb == 'f' || verb == 'F' {
			// 1e308 in full.
			m.num = max(m.num, 330)
		} else {
			// %b of a negative int64, with a 0b prefix.
			m.num = max(m.num, 72)
		}
		if sharp || verb != 'v' && verb != 's' {
			// Go syntax (interface {}(nil), []interface {}{...}) or a
			// wrong verb's %!d(json.Number=...).
			m.leaf, m.node = 32, 32
		}
	}
	return printfShape{mode: m, extra: extra, verbs: verbs, reordered: reordered}
}

// argIndex returns the index just past an argument index such as [2] at
// format[i:], or i if there is none, and whether it is a well-formed one,
// as fmt's argNumber: it skips just the [ of one that does not end.
func argIndex(format string, i int) (int, bool) {
	if i >= len(format) || format[i] != '[' {
		return i, false
	}
	if len(format)-i < 3 {
		return i + 1, false
	}
	j := strings.IndexByte(format[i+1:], ']')
	if j < 0 {
		return i + 1, false
	}
	// fmt's parsenum: digits only, and at least one, giving up past 1e6.
	ok := j > 0
	for n, k := 0, i+1; k < i+1+j && ok; k++ {
		ok = '0' <= format[k] && format[k] <= '9' && n <= 1e6
		n = n*10 + int(format[k]-'0')
	}
	return i + j + 2, ok
}

// fmtNumber returns the number at format[i:], 0 for none, and the index
// past it. Numbers fmt would refuse count as large, not as the nothing fmt
// makes of them.
func fmtNumber(format string, i int) (int, int) {
	const ceiling = 1 << 30
	n := 0
	for ; i < len(format) && '0' <= format[i] && format[i] <= '9'; i++ {
		n = min(n*10+int(format[i]-'0'), ceiling)
	}
	return n, i
}

// printedSize returns an upper bound of the bytes fmt prints for x in
// mode m, charging a step for each value it looks at. It stops counting
// once the bound is past limit, and then returns a number past it.
func (s *state) printedSize(x any, m printMode, limit int) int {
	s.step(1)
	size := 0
	stack := []any{x}
	for len(stack) > 0 && size <= limit {
		x, stack = stack[len(stack)-1], stack[:len(stack)-1]
		switch x := x.(type) {
		case string:
			size += m.leaf + m.pad + m.strMul*len(x)
		case jsonNumber:
			size += m.leaf + m.pad + m.strMul*len(x)
		case nil, bool, int, int64, uint8, float64:
			size += m.leaf + m.pad + m.num
		case complex128:
			size += m.leaf + 2*(m.pad+m.num) + 3
		case []any:
			s.step(len(x))
			size += m.node
			stack = append(stack, x...)
		case map[string]any:
			s.step(len(x))
			size += m.node
			for k, v := range x {
				size += m.leaf + m.pad + m.strMul*len(k)
				stack = append(stack, v)
			}
		case root:
			size += 4 * m.node
			stack = append(stack, x.Text, x.Structured)
		default:
			// Not a type of the data; count it as a leaf fmt prints
			// with its type.
			size += m.leaf + m.pad + m.num + 64
		}
	}
	return size
}

// printfSize returns an upper bound of the bytes printf prints for format
// and args, past limit only if that bound is.
func (s *state) printfSize(format string, args []value, limit int) int {
	sh := printfMode(format, args)
	if !sh.reordered {
		// Each operand is printed once, by its verb or as an extra one.
		return sh.extra + s.argsSize(args, sh.mode, limit-sh.extra)
	}
	// Each verb prints one operand, any of them.
	if sh.verbs == 0 {
		return sh.extra
	}
	largest, each := 0, (limit-sh.extra)/sh.verbs
	for _, a := range args {
		if largest > each {
			break
		}
		largest = max(largest, s.printedSize(a.x, sh.mode, each))
	}
	return sh.extra + sh.verbs*largest
}

// argsSize returns an upper bound of the bytes fmt prints for args in mode
// m, past limit only if that bound is.
func (s *state) argsSize(args []value, m printMode, limit int) int {
	size := 0
	for _, a := range args {
		if size > limit {
			break
		}
		size += 2 + s.printedSize(a.x, m, limit-size)
	}
	return size
}
