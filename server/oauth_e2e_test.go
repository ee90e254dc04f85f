package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/auth"
	"github.com/mcp-tools/mcp-tools/auth/authtest"
	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
)

// TestOAuthEndToEnd serves the test tools as an OAuth resource server on a
// real listener, with tokens from a local issuer: no token gets a 401
// challenge naming the metadata; a token sees and calls only the tools its
// scopes allow; its subject owns its session and names its log lines.
func TestOAuthEndToEnd(t *testing.T) {
	iss, ln, base, v := oauthResource(t)
	var logs syncBuffer
	log := testLogger(&logs, "info", "text")
	reg, _ := tools.NewRegistry(testTools()...)
	serveOAuth(t, reg, v, ln, log)

	// No token: 401 with a challenge that names the metadata, which names
	// the issuer.
	resp := rawPost(t, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+base+"/.well-known/oauth-protected-resource/mcp") {
		t.Fatalf("no token: %d %q, want 401 with resource_metadata", resp.StatusCode, challenge)
	}
	md, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(md.Body)
	md.Body.Close()
	if !strings.Contains(string(body), iss.URL) || !strings.Contains(string(body), base+"/mcp") {
		t.Errorf("metadata = %s, want the issuer and the resource", body)
	}

	user := iss.Sign(t, iss.Claims(base+"/mcp", "tools:call", nil))
	c := httpClient(t, base, map[string]string{"Authorization": "Bearer " + user})
	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if strings.Contains(strings.Join(names, ","), "add") || !strings.Contains(strings.Join(names, ","), "echo") {
		t.Errorf("tools/list = %v: want echo, and not add (it needs the admin scope)", names)
	}
	if res := mustCall(t, c, "echo", map[string]any{"text": "hi"}); resultText(res) != "hi" {
		t.Errorf("echo = %q", resultText(res))
	}
	if _, err := callTool(t, c, "add", map[string]any{"a": 1, "b": 2}); err == nil {
		t.Error("add without the admin scope succeeded")
	}
	if !strings.Contains(logs.String(), "principal=sub:user-42") {
		t.Errorf("the call's log line does not name its principal: %s", logs.String())
	}

	// A tools/call without the scope: 403 insufficient_scope, naming it.
	sid := initSession(t, base, user)
	resp = rawPost(t, base+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
		map[string]string{"Authorization": "Bearer " + user, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, "admin") {
		t.Errorf("add without its scope: %d %q, want 403 insufficient_scope naming admin", resp.StatusCode, h)
	}
	// Another subject cannot use that session.
	other := iss.Sign(t, iss.Claims(base+"/mcp", "tools:call", map[string]any{"sub": "someone-else"}))
	resp = rawPost(t, base+"/mcp", `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		map[string]string{"Authorization": "Bearer " + other, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("another subject on the session: %d, want 404", resp.StatusCode)
	}
	// An expired token: 401 invalid_token.
	expired := iss.Sign(t, iss.Claims(base+"/mcp", "tools:call", map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}))
	resp = rawPost(t, base+"/mcp", `{"jsonrpc":"2.0","id":4,"method":"ping"}`, map[string]string{"Authorization": "Bearer " + expired})
	if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(h, `error="invalid_token"`) {
		t.Errorf("expired token: %d %q, want 401 invalid_token", resp.StatusCode, h)
	}
}

// initSession opens a streamable HTTP session with token and returns its id.
func initSession(t *testing.T, base, token string) string {
	t.Helper()
	resp := rawPost(t, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		map[string]string{"Authorization": "Bearer " + token})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	return sid
}

// TestOAuthCompositeNeedsStepScopes: a pipeline runs its steps, so a token
// that may not call a step may not call it through the pipeline either:
// the pipeline is left out of its tools/list and its call refused with 403.
func TestOAuthCompositeNeedsStepScopes(t *testing.T) {
	iss, ln, base, v := oauthResource(t)
	all := testTools()
	var add tools.Tool
	for _, tl := range all {
		if tl.Info().Name == "add" {
			add = tl
		}
	}
	relay, err := pipeline.New(pipeline.Config{Name: "relay", Description: "Add, through a pipeline.", Steps: []pipeline.Step{{Tool: add}}})
	if err != nil {
		t.Fatal(err)
	}
	outer, err := pipeline.New(pipeline.Config{Name: "outer", Description: "The relay, through a pipeline.", Steps: []pipeline.Step{{Tool: relay}}})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(append(all, relay, outer)...)
	if err != nil {
		t.Fatal(err)
	}
	serveOAuth(t, reg, v, ln, testLogger(io.Discard, "error", "text"))

	user := iss.Sign(t, iss.Claims(base+"/mcp", "tools:call", nil))
	c := httpClient(t, base, map[string]string{"Authorization": "Bearer " + user})
	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "relay" || tl.Name == "outer" {
			t.Errorf("tools/list shows %s to a token without the admin scope its step add needs", tl.Name)
		}
	}
	sid := initSession(t, base, user)
	for i, name := range []string{"relay", "outer"} {
		resp := rawPost(t, base+"/mcp", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"a":1,"b":2}}}`, i+2, name),
			map[string]string{"Authorization": "Bearer " + user, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
		if h := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(h, "admin") {
			t.Errorf("%s (its step add needs admin) without admin: %d %q, want 403 insufficient_scope naming admin", name, resp.StatusCode, h)
		}
	}
	admin := iss.Sign(t, iss.Claims(base+"/mcp", "tools:call admin", nil))
	ca := httpClient(t, base, map[string]string{"Authorization": "Bearer " + admin})
	if res := mustCall(t, ca, "outer", map[string]any{"a": 1, "b": 2}); res.IsError {
		t.Errorf("outer with admin: %s", resultText(res))
	}
}

// oauthResource makes a local issuer, a loopback listener, its base URL,
// and a verifier of the issuer's tokens for base's /mcp.
func oauthResource(t *testing.T) (*authtest.Issuer, net.Listener, string, *auth.Verifier) {
	t.Helper()
	iss := authtest.NewIssuer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	v, err := auth.New(t.Context(), auth.Config{Issuer: iss.URL, Audience: base + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	return iss, ln, base, v
}

// serveOAuth serves reg over streamable HTTP on ln until the test ends,
// verifying tokens with v: tools:call by default, and add needs admin.
func serveOAuth(t *testing.T, reg *tools.Registry, v *auth.Verifier, ln net.Listener, log *slog.Logger) {
	t.Helper()
	srv, err := server.New(reg, server.Options{Logger: log, OAuth: &server.OAuth{
		Verifier:      v,
		DefaultScopes: []string{"tools:call"},
		ToolScopes:    map[string][]string{"add": {"admin"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveUntil(ctx, srv, ln, server.TransportHTTP) }()
	t.Cleanup(func() { cancel(); <-done })
}
