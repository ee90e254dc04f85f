package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzInspectFrame: whatever a client sends, inspectFrame never panics; a
// frame it accepts is one JSON object that encoding/json also reads, with
// the same method.
func FuzzInspectFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"action":"accept"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"METHOD":"x"}`,
		`[{"jsonrpc":"2.0"}]`,
		strings.Repeat("[", 10000),
		`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		fr, bad := inspectFrame(msg)
		if bad != nil {
			if bad.msg == "" || len(bad.msg) > 300 {
				t.Fatalf("error message %q", bad.msg)
			}
			return
		}
		var m struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("accepted a frame encoding/json refuses: %v", err)
		}
		if m.Method != fr.method {
			t.Fatalf("method %q, encoding/json reads %q", fr.method, m.Method)
		}
	})
}

// BenchmarkInspectFrame is the strict read every message pays before
// mcp-go sees it.
func BenchmarkInspectFrame(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":42}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := inspectFrame(msg); bad != nil {
			b.Fatal(bad.msg)
		}
	}
}

func TestResponseID(t *testing.T) {
	tests := []struct {
		msg, want string
		ok        bool
	}{
		{`{"jsonrpc":"2.0","id":42,"result":{}}`, "42", true},
		{`{"jsonrpc":"2.0","id":-7,"error":{"code":1}}`, "-7", true},
		{`{"jsonrpc":"2.0","id":"a,b","result":{}}`, `"a,b"`, true},
		{`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}`, "", false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, "", false},
		{`{"id":5,"jsonrpc":"2.0","result":{}}`, "5", true},
	}
	for _, tt := range tests {
		if got, ok := responseID([]byte(tt.msg)); got != tt.want || ok != tt.ok {
			t.Errorf("responseID(%s) = %q %v, want %q %v", tt.msg, got, ok, tt.want, tt.ok)
		}
	}
}
