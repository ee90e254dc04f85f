package tools_test

import (
	"strconv"
	"unicode/utf8"
)

// truncateRunes is the server's truncate (server/middleware.go): s cut to
// at most n characters, the cut marked with the bytes left out.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut, count := 0, 0
	for cut < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		count++
	}
	if cut >= len(s) {
		return s
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)-cut) + " more bytes)"
}
