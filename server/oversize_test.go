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

// TestSkeletonID: the id of an over-long line is read from its skeleton
// wherever it is, however the line arrives in pieces: never an id nested
// deeper, nor one in a string, nor one of two.
func TestSkeletonID(t *testing.T) {
	long := strings.Repeat("y", 1000)
	tests := []struct{ msg, want string }{
		{`{"method":"x","params":{"a":"` + long + `","id":1,"s":"}{\"id\":2"},"jsonrpc":"2.0","id":3}`, `3`},
		{`{"method":"x","params":[{"id":1},"]"],"jsonrpc":"2.0","id":"a\\\"]}b"}` + "\r\n", `"a\\\"]}b"`},
		{`{"x":"` + long + `","id":-4.5e1}`, `-4.5e1`},
		{`{"id":"` + long + `"}`, `null`}, // too long to name
		{`{"` + long + `":1,"id":5}`, `null`},
		{`{"id":6,"id":7}`, `null`},
		{`{"params":{"id":8}}`, `null`},
		{`{"p":"\"id\":9"}`, `null`},
		{`[{"id":10}]`, `null`},
		{`{"id":"\ud800"}`, `null`},
		{`{"a":"\ud800","id":11}`, `11`},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 7, len(tt.msg)} {
			var s skeleton
			for i := 0; i < len(tt.msg); i += n {
				s.write([]byte(tt.msg[i:min(i+n, len(tt.msg))]))
			}
			var buf bytes.Buffer
			writeOversizeError(&buf, s.b, 100)
			var resp struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(buf.Bytes(), &resp); err != nil {
				t.Fatalf("%s: %v", buf.Bytes(), err)
			}
			if string(resp.ID) != tt.want {
				t.Errorf("%.60s… in pieces of %d (skeleton %q): id %s, want %s", tt.msg, n, s.b, resp.ID, tt.want)
			}
		}
	}
	var s skeleton
	s.write([]byte(`{"a":[` + strings.Repeat(`1,`, 1<<20) + `1],"b":` + strings.Repeat(`1`, 1<<20)))
	if len(s.b) > maxSkeleton+1 {
		t.Errorf("skeleton holds %d bytes", len(s.b))
	}
}
