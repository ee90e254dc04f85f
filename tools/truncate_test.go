package tools_test

import (
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/tools"
)

// truncateRunes is the server's former truncate, kept as the reference
// the display is checked against: s cut to at most n characters, the cut
// marked with the bytes left out.
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

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 10, "hello"},
		{"hello!", 5, "hello…(1 more bytes)"},
		{"héllo wörld", 7, "héllo w…(5 more bytes)"},
		{"日本語テキスト", 3, "日本語…(12 more bytes)"},
		{"a\xffb\xe6\x97c", 2, "a\xff…(4 more bytes)"}, // invalid bytes count one character each
		{"a\xe6\x97", 2, "a\xe6…(1 more bytes)"},
		{"abc", 0, "abc"}, // no bound
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := tools.Truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if tt.n > 0 {
			if ref := truncateRunes(tt.s, tt.n); ref != tt.want {
				t.Errorf("the server's former truncate(%q, %d) = %q, want %q", tt.s, tt.n, ref, tt.want)
			}
		}
	}
}
