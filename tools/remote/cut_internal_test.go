package remote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutsKeepRunesWhole: a message quoting the end of stderr, or the
// start of an output, never starts or ends with half a character.
func TestCutsKeepRunesWhole(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		// 3000 two-byte runes and an "x": the last 4096 bytes start
		// inside a rune.
		{"stderr end", trimStderr(strings.Repeat("é", 3000) + "x"), strings.Repeat("é", 2047) + "x"},
		{"stderr end, three-byte runes", trimStderr(strings.Repeat("€", 2000)), strings.Repeat("€", 1365)},
		{"snippet", snippet([]byte("x"+strings.Repeat("é", 200)), 200), "x" + strings.Repeat("é", 99) + "…"},
		{"short stays whole", snippet([]byte("héllo"), 200), "héllo"},
		{"ascii", trimStderr(strings.Repeat("a", 5000)), strings.Repeat("a", 4096)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !utf8.ValidString(tt.got) {
				t.Errorf("got invalid UTF-8 (%q...%q)", tt.got[:min(4, len(tt.got))], tt.got[max(0, len(tt.got)-4):])
			}
			if tt.got != tt.want {
				t.Errorf("got %d bytes, want %d: %q...", len(tt.got), len(tt.want), tt.got[:min(8, len(tt.got))])
			}
		})
	}
}
