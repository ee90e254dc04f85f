package server

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// TestHTTPFastPathProgressTokenSpellings: the HTTP fast path leaves a call
// whose _meta has a progress token to mcp-go (which streams the progress on
// the call's own answer), however the name is spelled in JSON. An escaped
// name ("progress\u0054oken") used to pass its byte search: the call's
// progress then went to the session's queue and came out in a later
// request's answer.
func TestHTTPFastPathProgressTokenSpellings(t *testing.T) {
	s := &Server{handlers: map[string]mcpserver.ToolHandlerFunc{"progress": nil}, talksBack: map[string]bool{}}
	f := &httpFast{s: s}
	f.sessions.Store("s1", &fastSession{})
	r := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(""))
	r.Header.Set("Content-Type", "application/json")
	for _, tt := range []struct {
		meta string
		fast bool
	}{
		{`{}`, true},
		{`{"k":"progressToken"}`, true},
		{`{"progressToken":"p"}`, false},
		{`{"progress\u0054oken":"p"}`, false},
		{`{"\u0070rogressToken":1}`, false},
	} {
		fr, bad := inspectFrame(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":%s}}`, tt.meta))
		if bad != nil {
			t.Fatal(bad.msg)
		}
		if got := f.take(fr, "s1", true, r) != nil; got != tt.fast {
			t.Errorf("_meta %s: fast path %v, want %v", tt.meta, got, tt.fast)
		}
	}
}
