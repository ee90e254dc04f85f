// Package httpheader checks header names and values as net/http does
// before it sends them, so that configuration (an exporter's headers, an
// HTTP tool's) is refused when it is read rather than failing every
// request. It decides as golang.org/x/net/http/httpguts does (a test
// compares the two); importing httpguts would link x/net/idna and a copy
// of x/text's tables for two loops.
package httpheader

// ValidName reports whether name is a header field name: one or
// more token characters (RFC 9110, section 5.6.2).
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isToken(name[i]) {
			return false
		}
	}
	return true
}

// isToken reports whether c is a tchar of RFC 9110: a letter, a digit or
// one of !#$%&'*+-.^_`|~.
func isToken(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// ValidValue reports whether value can be sent as a header field
// value: no control byte but space and tab (bytes from 0x80 up pass).
func ValidValue(value string) bool {
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
