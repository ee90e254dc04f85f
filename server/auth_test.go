package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/auth"
	"github.com/mcp-tools/mcp-tools/auth/authtest"
)

// oauthServer is a real listener serving the OAuth adapter around a
// handler that records what reached it.
type oauthServer struct {
	url      string // of the MCP endpoint: the resource and audience
	issuer   *authtest.Issuer
	oauth    *OAuth
	log      *lockedBuffer
	mu       sync.Mutex
	seenAuth []string // Authorization headers that reached next
	seenWho  []string // principals that reached next
}

func newOAuthServer(t *testing.T, required []string) *oauthServer {
	t.Helper()
	iss := authtest.NewIssuer(t)
	os := &oauthServer{issuer: iss, log: &lockedBuffer{}}
	var h http.Handler = http.NotFoundHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	os.url = srv.URL + PathMCP
	v, err := auth.New(t.Context(), auth.Config{Issuer: iss.URL, Audience: os.url, RequiredScopes: required})
	if err != nil {
		t.Fatal(err)
	}
	os.oauth = &OAuth{Verifier: v, DefaultScopes: []string{"tools:call"}, ToolScopes: map[string][]string{"file_write": {"files:write"}}}
	if err := os.oauth.check(); err != nil {
		t.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := oauthPrincipal(r.Context())
		os.mu.Lock()
		os.seenAuth = append(os.seenAuth, r.Header.Get("Authorization"))
		os.seenWho = append(os.seenWho, principalName(p))
		os.mu.Unlock()
		io.WriteString(w, "ok")
	})
	mux := http.NewServeMux()
	os.oauth.mount(mux)
	mux.Handle(PathMCP, os.oauth.wrap(next, slog.New(slog.NewTextHandler(os.log, nil))))
	h = mux
	return os
}

func TestOAuthChallenges(t *testing.T) {
	s := newOAuthServer(t, []string{"mcp"})
	md := strings.TrimSuffix(s.url, PathMCP) + "/.well-known/oauth-protected-resource/mcp"
	iss := s.issuer
	tests := []struct {
		name       string
		method     string
		token      string // "" for no Authorization header
		wantStatus int
		wantHeader string // WWW-Authenticate
		wantWho    string // principal seen by next, when it is reached
	}{
		{name: "valid", token: iss.Sign(t, iss.Claims(s.url, "mcp tools:call", nil)), wantStatus: 200, wantWho: "sub:user-42"},
		{name: "no token", wantStatus: 401, wantHeader: `Bearer resource_metadata="` + md + `"`},
		{name: "expired", token: iss.Sign(t, iss.Claims(s.url, "mcp", map[string]any{"iat": 1, "nbf": 1, "exp": 2})), wantStatus: 401,
			wantHeader: `Bearer error="invalid_token", error_description="token expired", resource_metadata="` + md + `"`},
		{name: "wrong audience", token: iss.Sign(t, iss.Claims("https://other.example.com/mcp", "mcp", nil)), wantStatus: 401,
			wantHeader: `Bearer error="invalid_token", error_description="wrong audience", resource_metadata="` + md + `"`},
		{name: "not a JWT", token: "static-token", wantStatus: 401,
			wantHeader: `Bearer error="invalid_token", error_description="malformed token", resource_metadata="` + md + `"`},
		{name: "missing required scope", token: iss.Sign(t, iss.Claims(s.url, "tools:call", nil)), wantStatus: 403,
			wantHeader: `Bearer error="insufficient_scope", scope="mcp", resource_metadata="` + md + `"`},
		{name: "CORS preflight passes", method: http.MethodOptions, wantStatus: 200, wantWho: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), cmpOr(tt.method, http.MethodPost), s.url, strings.NewReader("{}"))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status: got %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.wantHeader {
				t.Errorf("WWW-Authenticate:\ngot  %s\nwant %s", got, tt.wantHeader)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			reached := len(s.seenWho) > 0
			if reached != (tt.wantStatus == 200) {
				t.Fatalf("next reached: got %v, want %v", reached, tt.wantStatus == 200)
			}
			if reached {
				if got := s.seenWho[len(s.seenWho)-1]; got != tt.wantWho {
					t.Errorf("principal: got %q, want %q", got, tt.wantWho)
				}
				// No token passthrough: what is behind the adapter never
				// sees the client's token.
				if got := s.seenAuth[len(s.seenAuth)-1]; got != "" {
					t.Errorf("Authorization behind the adapter: got %q, want none", got)
				}
			}
			s.seenWho, s.seenAuth = nil, nil
			if tt.token != "" && strings.Contains(s.log.String(), tt.token) {
				t.Errorf("the log holds the token: %s", s.log.String())
			}
		})
	}
}

// lockedBuffer is a strings.Builder safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestOAuthMetadata follows the challenge as a client does: from the 401
// to the resource metadata, and from there to the issuer's discovery.
func TestOAuthMetadata(t *testing.T) {
	s := newOAuthServer(t, nil)
	resp, err := http.Post(s.url, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header.Get("WWW-Authenticate")
	_, mdURL, ok := strings.Cut(h, `resource_metadata="`)
	mdURL = strings.TrimSuffix(mdURL, `"`)
	if !ok || !strings.HasPrefix(mdURL, "http://127.0.0.1") {
		t.Fatalf("WWW-Authenticate: got %q, want an absolute resource_metadata URL", h)
	}
	want := auth.ResourceMetadata{
		Resource:               s.url,
		AuthorizationServers:   []string{s.issuer.URL},
		ScopesSupported:        []string{"files:write", "tools:call"},
		BearerMethodsSupported: []string{"header"},
	}
	root := strings.TrimSuffix(s.url, PathMCP) + auth.MetadataPath
	for _, u := range []string{mdURL, root} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var got auth.ResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: got %d, %v, want 200 and JSON", u, resp.StatusCode, err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s: Content-Type: got %q, want application/json", u, ct)
		}
		if got.Resource != want.Resource || !slices.Equal(got.AuthorizationServers, want.AuthorizationServers) ||
			!slices.Equal(got.ScopesSupported, want.ScopesSupported) || !slices.Equal(got.BearerMethodsSupported, want.BearerMethodsSupported) {
			t.Errorf("GET %s:\ngot  %+v\nwant %+v", u, got, want)
		}
	}
	resp, err = http.Get(s.issuer.URL + "/.well-known/openid-configuration")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the metadata's authorization server has no discovery document: %v", err)
	}
	resp.Body.Close()
}

// TestOAuthToolScopes: a tool the token may not call is left out of
// tools/list and refused; without a principal (stdio) nothing changes.
func TestOAuthToolScopes(t *testing.T) {
	s := newOAuthServer(t, nil)
	list := []mcp.Tool{{Name: "calculator"}, {Name: "file_write"}}
	names := func(ts []mcp.Tool) []string {
		var n []string
		for _, t := range ts {
			n = append(n, t.Name)
		}
		return n
	}
	tests := []struct {
		name      string
		ctx       context.Context
		wantList  []string
		wantCalls map[string]string // tool → missing scope, "" when allowed
	}{
		{"no scopes", withOAuthPrincipal(t.Context(), auth.Principal{Subject: "u"}),
			nil, map[string]string{"calculator": "tools:call", "file_write": "files:write"}},
		{"tools:call", withOAuthPrincipal(t.Context(), auth.Principal{Subject: "u", Scopes: []string{"tools:call"}}),
			[]string{"calculator"}, map[string]string{"calculator": "", "file_write": "files:write"}},
		{"both", withOAuthPrincipal(t.Context(), auth.Principal{Subject: "u", Scopes: []string{"tools:call", "files:write"}}),
			[]string{"calculator", "file_write"}, map[string]string{"calculator": "", "file_write": ""}},
		{"stdio", t.Context(), []string{"calculator", "file_write"}, map[string]string{"calculator": "", "file_write": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(s.oauth.toolFilter(tt.ctx, list)); !slices.Equal(got, tt.wantList) {
				t.Errorf("tools/list: got %q, want %q", got, tt.wantList)
			}
			for tool, missing := range tt.wantCalls {
				err := s.oauth.checkTool(tt.ctx, tool)
				if missing == "" {
					if err != nil {
						t.Errorf("call %s: got %v, want allowed", tool, err)
					}
					continue
				}
				rec := httptest.NewRecorder()
				s.oauth.refuse(rec, err)
				wantH := `Bearer error="insufficient_scope", scope="` + missing + `", resource_metadata="` + s.oauth.metadataURL() + `"`
				if rec.Code != 403 || rec.Header().Get("WWW-Authenticate") != wantH {
					t.Errorf("call %s: got %d %s, want 403 %s", tool, rec.Code, rec.Header().Get("WWW-Authenticate"), wantH)
				}
			}
		})
	}
}
