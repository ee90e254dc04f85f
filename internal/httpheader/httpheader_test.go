package httpheader

import (
	"testing"

	"golang.org/x/net/http/httpguts"
)

// TestMatchesHTTPGuts: ValidName and ValidValue take what httpguts
// takes, byte for byte and for a few whole strings.
func TestMatchesHTTPGuts(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		if got, want := ValidName("a"+s+"b"), httpguts.ValidHeaderFieldName("a"+s+"b"); got != want {
			t.Errorf("ValidName(%q): got %v, want %v", "a"+s+"b", got, want)
		}
		if got, want := ValidValue("a"+s+"b"), httpguts.ValidHeaderFieldValue("a"+s+"b"); got != want {
			t.Errorf("ValidValue(%q): got %v, want %v", "a"+s+"b", got, want)
		}
		if got, want := ValidName(s), httpguts.ValidHeaderFieldName(s); got != want {
			t.Errorf("ValidName(%q): got %v, want %v", s, got, want)
		}
		if got, want := ValidValue(s), httpguts.ValidHeaderFieldValue(s); got != want {
			t.Errorf("ValidValue(%q): got %v, want %v", s, got, want)
		}
	}
	tests := []string{
		"", "x-api-key", "Authorization", "a b", "a:b", "a\tb", "Bearer s3cret", "é", "tenant/1",
		"line\nbreak", "nul\x00", "del\x7f", " lead", "trail\t", "!#$%&'*+-.^_`|~09AZaz", "(comment)", "\"quoted\"",
	}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) {
			if got, want := ValidName(s), httpguts.ValidHeaderFieldName(s); got != want {
				t.Errorf("ValidName(%q): got %v, want %v", s, got, want)
			}
			if got, want := ValidValue(s), httpguts.ValidHeaderFieldValue(s); got != want {
				t.Errorf("ValidValue(%q): got %v, want %v", s, got, want)
			}
		})
	}
}
