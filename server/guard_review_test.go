package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/mcp-tools/mcp-tools/server"
)

// TestHTTPRebindingRefusedOnEveryRoute: a non-loopback Host on a loopback
// connection gets 403 whatever the request, also the ones the guard
// answers itself without mcp-go (a plain tools/call of a known session,
// answered by the fast path; a tasks/* request).
func TestHTTPRebindingRefusedOnEveryRoute(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{})
	id := openSession(t, url)
	rawPost(t, url+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": id})
	bodies := map[string]string{
		"tools/call": `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		"ping":       pingBody,
		"tasks/list": `{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			// The same request with the loopback Host is served.
			ok := rawPost(t, url+"/mcp", body, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
			io.Copy(io.Discard, ok.Body)
			resp := rawPost(t, url+"/mcp", body, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18", "Host": "evil.example"})
			if resp.StatusCode != http.StatusForbidden {
				b, _ := io.ReadAll(resp.Body)
				t.Errorf("Host evil.example: status %d (%s), want 403 (loopback Host: %d)", resp.StatusCode, b, ok.StatusCode)
			}
		})
	}
}
