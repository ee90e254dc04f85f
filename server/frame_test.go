package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// FuzzInspectFrame: whatever a client sends, inspectFrame never panics; a
// frame it accepts is one JSON object that encoding/json also reads, with
// the same method.
func FuzzInspectFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"action":"accept"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"body":"` + strings.Repeat("x", 5000) + `"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"METHOD":"x"}`,
		`[{"jsonrpc":"2.0"}]`,
		strings.Repeat("[", 10000),
		`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `}`,
		`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud800"}},"jsonrpc":"2.0","id":"\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		fr, bad := inspectFrame(msg)
		if bad != nil {
			if bad.msg == "" || len(bad.msg) > 300 {
				t.Fatalf("error message %q", bad.msg)
			}
			if bad.id != nil && (!bad.id.IsValid() || bad.id.Kind() != '"' && bad.id.Kind() != '0') {
				t.Fatalf("refusal names the id %s, not a valid string or number", bad.id)
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("accepted a frame encoding/json refuses: %v", err)
		}
		var method string
		json.Unmarshal(m["method"], &method)
		if method != fr.method {
			t.Fatalf("method %q, encoding/json reads %q", fr.method, method)
		}
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if fr.response != (method == "" && (hasResult || hasError)) {
			t.Fatalf("response %v, but encoding/json sees method %q, result %v, error %v", fr.response, method, hasResult, hasError)
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

// TestInspectFrameLongValues: member names are read from the decoder's
// buffer; values long enough to refill it must not change what was read.
func TestInspectFrameLongValues(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	tests := []struct {
		msg      string
		method   string
		response bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"body":"` + long + `"}}}`, "", true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"` + long + `"}}`, "", true},
		{`{"jsonrpc":"2.0","id":2,"params":{"name":"echo","arguments":{"text":"` + long + `"},"_meta":{"progressToken":1}},"method":"tools/call"}`, "tools/call", false},
	}
	for _, tt := range tests {
		f, bad := inspectFrame([]byte(tt.msg))
		if bad != nil || f.method != tt.method || f.response != tt.response {
			t.Errorf("inspectFrame(%.60s…) = %+v %v, want method %q response %v", tt.msg, f, bad, tt.method, tt.response)
		}
	}
}

func TestInspectFrameKeepsArgumentsAndMeta(t *testing.T) {
	f, bad := inspectFrame([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo", "arguments" : {"text":"a b"},"_meta":{"progressToken":"p1"}}}`))
	if bad != nil || string(f.args) != `{"text":"a b"}` || string(f.meta) != `{"progressToken":"p1"}` || f.other != 0 || f.modern {
		t.Errorf("frame = args %s meta %s other %d modern %v (%v)", f.args, f.meta, f.other, f.modern, bad)
	}
	f, _ = inspectFrame([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","requestState":"s","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	if f.other != 1 || !f.modern || f.args != nil {
		t.Errorf("frame = other %d modern %v args %s", f.other, f.modern, f.args)
	}
}

// TestInspectFrameUnicodeFolding: a member name that encoding/json would
// match by Unicode folding ("paramſ" with a long s) is a case variant too.
func TestInspectFrameUnicodeFolding(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"paramſ":{"name":"add"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","argumentſ":{}}}`,
	} {
		if _, bad := inspectFrame([]byte(msg)); bad == nil || bad.code != -32600 {
			t.Errorf("inspectFrame(%s) = %v, want a -32600 refusal", msg, bad)
		}
	}
	f, _ := inspectFrame([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"io.modelcontextprotocol/protocolVersion"}}}`))
	if f.modern {
		t.Error("a name in clientInfo made the frame look modern")
	}
}

// TestFastPathEligibility: a plain tools/call goes to the fast path; one
// with any other member in params, of a 2026-07-28 client, or for a tool
// the server does not have goes to mcp-go.
func TestFastPathEligibility(t *testing.T) {
	s := &Server{handlers: map[string]mcpserver.ToolHandlerFunc{"echo": nil}}
	p := newFastPath(s, context.Background(), nil)
	base := context.Background()
	p.base.Store(&base) // as if mcp-go had registered the session
	tests := []struct {
		params string
		want   bool
	}{
		{`"name":"echo","arguments":{"text":"x"}`, true},
		{`"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1}`, true},
		{`"name":"echo"`, true},
		{`"name":"echo","arguments":{"text":"x"},"x-slow":true`, false},
		{`"name":"echo","requestState":"s"`, false},
		{`"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, false},
		{`"name":"nope","arguments":{}`, false},
	}
	for _, tt := range tests {
		f, bad := inspectFrame([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + tt.params + `}}`))
		if bad != nil {
			t.Fatal(bad.msg)
		}
		if got := p.eligible(f); got != tt.want {
			t.Errorf("eligible({%s}) = %v, want %v", tt.params, got, tt.want)
		}
	}
}
