package jsontmpl

// The escapers of the builtins html and js, as text/template's
// HTMLEscapeString and JSEscapeString (Go's BSD-licensed source): the
// package would bring text/template's executor along.

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// htmlEscapeString returns the escaped HTML equivalent of s.
func htmlEscapeString(s string) string {
	if !strings.ContainsAny(s, "'\"&<>\000") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		var html string
		switch s[i] {
		case '\000':
			html = "\uFFFD"
		case '"':
			html = "&#34;" // shorter than "&quot;"
		case '\'':
			html = "&#39;" // shorter than "&apos;"
		case '&':
			html = "&amp;"
		case '<':
			html = "&lt;"
		case '>':
			html = "&gt;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(html)
		last = i + 1
	}
	b.WriteString(s[last:])
	return b.String()
}

// jsEscapeString returns the escaped JavaScript equivalent of s.
func jsEscapeString(s string) string {
	if strings.IndexFunc(s, jsIsSpecial) < 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !jsIsSpecial(rune(c)) {
			continue
		}
		b.WriteString(s[last:i])
		if c < utf8.RuneSelf {
			// Quotes, slashes and angle brackets get quoted; control
			// characters are written as \u00XX.
			switch c {
			case '\\':
				b.WriteString(`\\`)
			case '\'':
				b.WriteString(`\'`)
			case '"':
				b.WriteString(`\"`)
			case '<':
				b.WriteString(`\u003C`)
			case '>':
				b.WriteString(`\u003E`)
			case '&':
				b.WriteString(`\u0026`)
			case '=':
				b.WriteString(`\u003D`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0x0f])
			}
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsPrint(r) {
				b.WriteString(s[i : i+size])
			} else {
				fmt.Fprintf(&b, "\\u%04X", r)
			}
			i += size - 1
		}
		last = i + 1
	}
	b.WriteString(s[last:])
	return b.String()
}

func jsIsSpecial(r rune) bool {
	switch r {
	case '\\', '\'', '"', '<', '>', '&', '=':
		return true
	}
	return r < ' ' || utf8.RuneSelf <= r
}
