package otlp

import (
	"testing"

	"golang.org/x/net/http/httpguts"
)

// TestHeaderChecksMatchHTTPGuts: the local checks take what httpguts
// takes, byte for byte and for a few whole strings.
func TestHeaderChecksMatchHTTPGuts(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		if got, want := validHeaderName(s), httpguts.ValidHeaderFieldName(s); got != want {
			t.Errorf("validHeaderName(%q): got %v, want %v", s, got, want)
		}
		if got, want := validHeaderValue(s), httpguts.ValidHeaderFieldValue(s); got != want {
			t.Errorf("validHeaderValue(%q): got %v, want %v", s, got, want)
		}
	}
	tests := []string{
		"", "x-api-key", "Authorization", "a b", "a:b", "a\tb", "Bearer s3cret", "é", "tenant/1",
		"line\nbreak", "nul\x00", "del\x7f", " lead", "trail\t", "!#$%&'*+-.^_`|~09AZaz", "(comment)", "\"quoted\"",
	}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) {
			if got, want := validHeaderName(s), httpguts.ValidHeaderFieldName(s); got != want {
				t.Errorf("validHeaderName(%q): got %v, want %v", s, got, want)
			}
			if got, want := validHeaderValue(s), httpguts.ValidHeaderFieldValue(s); got != want {
				t.Errorf("validHeaderValue(%q): got %v, want %v", s, got, want)
			}
		})
	}
}
