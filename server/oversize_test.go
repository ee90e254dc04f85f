package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestOversizeErrorID: the error for an over-long line names the line's
// own id (the top-level "id", read whole), or null when the first bytes do
// not hold it; never an "id" nested in params, nor a part of a number.
func TestOversizeErrorID(t *testing.T) {
	pad := strings.Repeat("x", 300)
	tests := []struct{ prefix, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + pad, `7`},
		{`{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"arguments":{"text":"` + pad, `"a\"b"`},
		{`{ "id" : -3 , "jsonrpc":"2.0","method":"x","params":{"t":"` + pad, `-3`},
		{`{"jsonrpc":"2.0","method":"x","params":{"t":"` + strings.Repeat("y", 200) + `"},"id":123456,"x":"` + pad, `null`}, // the prefix ends in 123
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"arguments":{"text":"` + pad, `1.5`},
		{`{"jsonrpc":"2.0","id":2e3,"method":"tools/call","params":{"arguments":{"text":"` + pad, `2e3`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"w","arguments":{"id":7,"text":"` + pad, `null`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"w","arguments":{"text":"\"id\":9 ` + pad, `null`},
		{`{"jsonrpc":"2.0","params":{"id":"inner"},"id":4,"method":"x","params2":"` + pad, `4`},
		{`[{"jsonrpc":"2.0","id":5,"method":"x","params":{"t":"` + pad, `null`},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		p := []byte(tt.prefix)
		if len(p) > 256 {
			p = p[:256]
		}
		writeOversizeError(&buf, p, 100)
		var resp struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(buf.Bytes(), &resp); err != nil {
			t.Fatalf("%s: %v", buf.Bytes(), err)
		}
		if string(resp.ID) != tt.want {
			t.Errorf("prefix %.70s…: id %s, want %s", tt.prefix, resp.ID, tt.want)
		}
	}
}
