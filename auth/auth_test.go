package auth

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

var base64URL = base64.URLEncoding

const audience = "https://tools.example.com/mcp"

// newVerifier returns a Verifier of ti with a test clock.
func newVerifier(t *testing.T, ti *testIssuer, cfg Config) (*Verifier, *clock) {
	t.Helper()
	cfg.Issuer = ti.issuer
	if cfg.Audience == "" {
		cfg.Audience = audience
	}
	v, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	clk := &clock{t: time.Now()}
	v.now = clk.Now
	return v, clk
}

func TestVerify(t *testing.T) {
	ti := newIssuer(t, openID, "")
	v, clk := newVerifier(t, ti, Config{RequiredScopes: []string{"tools:call"}})
	now := clk.Now()
	valid := func(over map[string]any) map[string]any { return claims(ti.issuer, audience, now, over) }

	pubDER, err := x509.MarshalPKIXPublicKey(ti.rsa.Public().Key)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	hmacWithPublic := func(secret []byte) string {
		return sign(t, jose.JSONWebKey{Key: secret, KeyID: "rsa-1"}, jose.HS256, valid(nil))
	}
	good := sign(t, ti.rsa, jose.RS256, valid(nil))
	tampered := good[:strings.LastIndexByte(good, '.')+1] + strings.Repeat("A", len(good)-strings.LastIndexByte(good, '.')-1)
	otherRSA := jose.JSONWebKey{Key: mustRSA(t), KeyID: "rsa-1"} // right kid, wrong key

	tests := []struct {
		name       string
		token      string
		wantReason string   // TokenError reason; "" for none
		wantScope  []string // ScopeError missing; nil for none
		wantStatus int      // of Challenge; 0 when accepted
	}{
		{name: "valid RS256", token: good},
		{name: "valid PS256", token: sign(t, ti.rsa, jose.PS256, valid(nil))},
		{name: "valid ES256", token: sign(t, ti.ec, jose.ES256, valid(nil))},
		{name: "audience in a list", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"aud": []string{"other", audience}}))},
		{name: "nbf within leeway", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"nbf": now.Add(DefaultLeeway / 2).Unix()}))},
		{name: "expired within leeway", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"exp": now.Add(-DefaultLeeway / 2).Unix()}))},
		{name: "no token", token: "", wantStatus: 401},
		{name: "expired", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"exp": now.Add(-time.Minute).Unix()})),
			wantReason: "token expired", wantStatus: 401},
		{name: "nbf in the future", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"nbf": now.Add(time.Minute).Unix()})),
			wantReason: "token not yet valid", wantStatus: 401},
		{name: "wrong audience", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"aud": "https://other.example.com/mcp"})),
			wantReason: "wrong audience", wantStatus: 401},
		{name: "no audience", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"aud": nil})),
			wantReason: "wrong audience", wantStatus: 401},
		{name: "wrong issuer", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"iss": "https://evil.example.com"})),
			wantReason: "wrong issuer", wantStatus: 401},
		{name: "no exp", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"exp": nil})),
			wantReason: "no exp claim", wantStatus: 401},
		{name: "no sub", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"sub": nil})),
			wantReason: "no sub claim", wantStatus: 401},
		{name: "alg none", token: unsigned(valid(nil)), wantReason: "malformed token", wantStatus: 401},
		{name: "HS256 with the public key PEM as secret", token: hmacWithPublic(pubPEM),
			wantReason: "algorithm not allowed", wantStatus: 401},
		{name: "HS256 with the public key DER as secret", token: hmacWithPublic(pubDER),
			wantReason: "algorithm not allowed", wantStatus: 401},
		{name: "RS256 with the EC key id", token: sign(t, jose.JSONWebKey{Key: ti.rsa.Key, KeyID: "ec-1"}, jose.RS256, valid(nil)),
			wantReason: "unknown signing key", wantStatus: 401},
		{name: "signed by another key under a known kid", token: sign(t, otherRSA, jose.RS256, valid(nil)),
			wantReason: "bad signature", wantStatus: 401},
		{name: "tampered signature", token: tampered, wantReason: "bad signature", wantStatus: 401},
		{name: "garbage", token: "not.a.token", wantReason: "malformed token", wantStatus: 401},
		{name: "too large", token: strings.Repeat("a", MaxTokenBytes+1), wantReason: "token too large", wantStatus: 401},
		{name: "missing required scope", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"scope": "files:read"})),
			wantScope: []string{"tools:call"}, wantStatus: 403},
		{name: "no scope at all", token: sign(t, ti.rsa, jose.RS256, valid(map[string]any{"scope": nil})),
			wantScope: []string{"tools:call"}, wantStatus: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(t.Context(), tt.token)
			var te *TokenError
			var se *ScopeError
			switch {
			case tt.wantStatus == 0:
				if err != nil {
					t.Fatalf("Verify: got %v, want no error", err)
				}
				if p.Subject != "user-42" || p.ClientID != "client-7" || p.Issuer != ti.issuer {
					t.Errorf("principal: got %+v, want subject user-42, client client-7, issuer %s", p, ti.issuer)
				}
			case tt.token == "":
				if !errors.Is(err, ErrNoToken) {
					t.Fatalf("Verify: got %v, want ErrNoToken", err)
				}
			case tt.wantReason != "":
				if !errors.As(err, &te) {
					t.Fatalf("Verify: got %v, want a *TokenError", err)
				}
				if te.Reason != tt.wantReason {
					t.Errorf("reason: got %q (%v), want %q", te.Reason, err, tt.wantReason)
				}
			case tt.wantScope != nil:
				if !errors.As(err, &se) {
					t.Fatalf("Verify: got %v, want a *ScopeError", err)
				}
				if !slices.Equal(se.Missing, tt.wantScope) {
					t.Errorf("missing scopes: got %q, want %q", se.Missing, tt.wantScope)
				}
				if p.Subject != "user-42" {
					t.Errorf("principal with a scope error: got %+v, want subject user-42", p)
				}
			}
			status, _ := Challenge(err, "https://x/.well-known/oauth-protected-resource")
			if tt.wantStatus != 0 && status != tt.wantStatus {
				t.Errorf("status: got %d, want %d", status, tt.wantStatus)
			}
		})
	}
}

// TestKeyRotation: a token signed by a key the verifier has not seen is
// accepted once the issuer publishes it, after one refetch, and unknown
// key ids cannot make the verifier fetch more than once per interval.
func TestKeyRotation(t *testing.T) {
	ti := newIssuer(t, openID, "")
	v, clk := newVerifier(t, ti, Config{})
	if got := ti.jwksHits.Load(); got != 1 {
		t.Fatalf("JWKS fetches after New: got %d, want 1", got)
	}
	rotated := jose.JSONWebKey{Key: mustRSA(t), KeyID: "rsa-2", Use: "sig"}
	tokenOf := func(k jose.JSONWebKey) string {
		return sign(t, k, jose.RS256, claims(ti.issuer, audience, clk.Now(), nil))
	}
	verify := func(tok string) error { _, err := v.Verify(t.Context(), tok); return err }

	// The issuer rotates: the new key is published, the old one withdrawn.
	ti.publish(rotated)
	clk.Advance(DefaultJWKSMinInterval)
	if err := verify(tokenOf(rotated)); err != nil {
		t.Fatalf("token of the rotated key: got %v, want accepted after a refetch", err)
	}
	if got := ti.jwksHits.Load(); got != 2 {
		t.Errorf("JWKS fetches: got %d, want 2 (one refetch for the unknown kid)", got)
	}
	if err := verify(tokenOf(rotated)); err != nil {
		t.Errorf("second token of the rotated key: got %v, want accepted", err)
	}
	if err := verify(tokenOf(ti.rsa)); err == nil {
		t.Errorf("token of the withdrawn key: got accepted, want refused")
	}
	// Made-up key ids within the interval: refused, and no fetch.
	for i := range 5 {
		bogus := jose.JSONWebKey{Key: ti.rsa.Key, KeyID: "bogus-" + string(rune('a'+i))}
		var te *TokenError
		if err := verify(tokenOf(bogus)); !errors.As(err, &te) || te.Reason != "unknown signing key" {
			t.Errorf("unknown kid: got %v, want unknown signing key", err)
		}
	}
	if got := ti.jwksHits.Load(); got != 2 {
		t.Errorf("JWKS fetches after unknown kids within the interval: got %d, want 2", got)
	}
	// A key published within the interval waits for it.
	third := jose.JSONWebKey{Key: mustEC(t), KeyID: "ec-2", Algorithm: "ES256"}
	ti.publish(rotated, third)
	tok3 := sign(t, third, jose.ES256, claims(ti.issuer, audience, clk.Now(), nil))
	if err := verify(tok3); err == nil {
		t.Errorf("key published within the interval: got accepted, want refused until the interval passes")
	}
	clk.Advance(DefaultJWKSMinInterval)
	if err := verify(tok3); err != nil {
		t.Errorf("key published, interval passed: got %v, want accepted", err)
	}
	if got := ti.jwksHits.Load(); got != 3 {
		t.Errorf("JWKS fetches: got %d, want 3", got)
	}
}

// TestRefresh: keys are fetched again once JWKSRefresh has passed, and a
// failed refresh keeps the old keys.
func TestRefresh(t *testing.T) {
	ti := newIssuer(t, openID, "")
	v, clk := newVerifier(t, ti, Config{JWKSRefresh: time.Hour})
	tok := func() string { return sign(t, ti.rsa, jose.RS256, claims(ti.issuer, audience, clk.Now(), nil)) }
	if _, err := v.Verify(t.Context(), tok()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if _, err := v.Verify(t.Context(), tok()); err != nil {
		t.Fatalf("after refresh: got %v, want accepted", err)
	}
	// The refresh runs in the background; the request did not wait for it.
	for deadline := time.Now().Add(10 * time.Second); ti.jwksHits.Load() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("JWKS fetches: got %d, want 2 (one refresh)", ti.jwksHits.Load())
		}
	}
	// The issuer goes away: the old keys stay in use.
	ti.srv.Close()
	clk.Advance(time.Hour)
	if _, err := v.Verify(t.Context(), tok()); err != nil {
		t.Errorf("refresh failed: got %v, want the old keys still used", err)
	}
}

// TestRefreshNeverStalls: when the keys are due for a refresh and the
// issuer hangs, requests go on with the keys they have at once.
func TestRefreshNeverStalls(t *testing.T) {
	ti := newIssuer(t, openID, "")
	v, clk := newVerifier(t, ti, Config{JWKSRefresh: time.Hour})
	tok := func() string { return sign(t, ti.rsa, jose.RS256, claims(ti.issuer, audience, clk.Now(), nil)) }
	if _, err := v.Verify(t.Context(), tok()); err != nil {
		t.Fatal(err)
	}
	hang := make(chan struct{})
	defer close(hang)
	ti.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang })
	clk.Advance(time.Hour)
	done := make(chan error, 5)
	for range 5 {
		go func() { _, err := v.Verify(t.Context(), tok()); done <- err }()
	}
	for range 5 {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Verify while the refresh hangs: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a request waited for the hanging refresh")
		}
	}
}

func TestDiscovery(t *testing.T) {
	tests := []struct {
		name string
		mode issuerMode
		path string
	}{
		{"openid", openID, ""},
		{"openid with path", openID, "/realms/mcp"},
		{"rfc 8414", rfc8414, ""},
		{"rfc 8414 with path inserted", rfc8414, "/tenant-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ti := newIssuer(t, tt.mode, tt.path)
			v, clk := newVerifier(t, ti, Config{})
			tok := sign(t, ti.ec, jose.ES256, claims(ti.issuer, audience, clk.Now(), nil))
			if _, err := v.Verify(t.Context(), tok); err != nil {
				t.Errorf("Verify: got %v, want accepted", err)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	ti := newIssuer(t, openID, "")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no issuer", Config{Audience: audience}, "auth: issuer: empty URL"},
		{"plain http, not loopback", Config{Issuer: "http://idp.example.com", Audience: audience}, "want https"},
		{"no audience", Config{Issuer: ti.issuer}, "audience is required"},
		{"alg none", Config{Issuer: ti.issuer, Audience: audience, Algorithms: []string{"none"}}, `algorithm "none" is not allowed`},
		{"HMAC", Config{Issuer: ti.issuer, Audience: audience, Algorithms: []string{"RS256", "HS256"}}, `algorithm "HS256" is not allowed`},
		{"issuer mismatch", Config{Issuer: ti.issuer + "/", Audience: audience}, "names issuer"},
		{"no discovery document", Config{Issuer: ti.issuer + "/nothing", Audience: audience}, "no metadata for issuer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(t.Context(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestAlgorithmAllowList: a Verifier told to accept ES256 only refuses
// an RS256 token signed by a published key.
func TestAlgorithmAllowList(t *testing.T) {
	ti := newIssuer(t, openID, "")
	v, clk := newVerifier(t, ti, Config{Algorithms: []string{"ES256"}})
	var te *TokenError
	_, err := v.Verify(t.Context(), sign(t, ti.rsa, jose.RS256, claims(ti.issuer, audience, clk.Now(), nil)))
	if !errors.As(err, &te) || te.Reason != "algorithm not allowed" {
		t.Errorf("RS256 with ES256 allowed: got %v, want algorithm not allowed", err)
	}
	if _, err := v.Verify(t.Context(), sign(t, ti.ec, jose.ES256, claims(ti.issuer, audience, clk.Now(), nil))); err != nil {
		t.Errorf("ES256: got %v, want accepted", err)
	}
}

// TestUsable: whatever a token's header says, an RSA key never verifies
// an HMAC signature, and a key's own alg binds it.
func TestUsable(t *testing.T) {
	rsaPub := jose.JSONWebKey{Key: &mustRSA(t).PublicKey, KeyID: "k"}
	ecPub := jose.JSONWebKey{Key: &mustEC(t).PublicKey, KeyID: "k", Algorithm: "ES256"}
	oct := jose.JSONWebKey{Key: []byte("secret"), KeyID: "k"}
	tests := []struct {
		name string
		key  jose.JSONWebKey
		alg  jose.SignatureAlgorithm
		want bool
	}{
		{"rsa RS256", rsaPub, jose.RS256, true},
		{"rsa PS512", rsaPub, jose.PS512, true},
		{"rsa HS256", rsaPub, jose.HS256, false},
		{"rsa ES256", rsaPub, jose.ES256, false},
		{"ec ES256", ecPub, jose.ES256, true},
		{"ec with alg ES256, ES384 asked", ecPub, jose.ES384, false},
		{"symmetric HS256", oct, jose.HS256, false},
		{"rsa for encryption", jose.JSONWebKey{Key: rsaPub.Key, Use: "enc"}, jose.RS256, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := usable(tt.key, tt.alg); got != tt.want {
				t.Errorf("usable: got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScopes(t *testing.T) {
	ti := newIssuer(t, openID, "")
	v, clk := newVerifier(t, ti, Config{})
	tests := []struct {
		name string
		over map[string]any
		want []string
	}{
		{"scope string", map[string]any{"scope": "a b  c"}, []string{"a", "b", "c"}},
		{"scp array", map[string]any{"scope": nil, "scp": []string{"a", "b"}}, []string{"a", "b"}},
		{"scp string", map[string]any{"scope": nil, "scp": "a b"}, []string{"a", "b"}},
		{"none", map[string]any{"scope": nil}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(t.Context(), sign(t, ti.rsa, jose.RS256, claims(ti.issuer, audience, clk.Now(), tt.over)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Scopes, tt.want) {
				t.Errorf("scopes: got %q, want %q", p.Scopes, tt.want)
			}
		})
	}
}

func TestPrincipalHas(t *testing.T) {
	p := Principal{Scopes: []string{"tools:call", "files:read"}}
	tests := []struct {
		scopes      []string
		want        bool
		wantMissing []string
	}{
		{nil, true, nil},
		{[]string{"tools:call"}, true, nil},
		{[]string{"tools:call", "files:read"}, true, nil},
		{[]string{"tools:call", "files:write", "admin", "admin"}, false, []string{"files:write", "admin"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.scopes, ","), func(t *testing.T) {
			if got := p.Has(tt.scopes...); got != tt.want {
				t.Errorf("Has: got %v, want %v", got, tt.want)
			}
			err := p.Require(tt.scopes...)
			var se *ScopeError
			if tt.wantMissing == nil {
				if err != nil {
					t.Errorf("Require: got %v, want nil", err)
				}
				return
			}
			if !errors.As(err, &se) || !slices.Equal(se.Missing, tt.wantMissing) {
				t.Errorf("Require: got %v, want missing %q", err, tt.wantMissing)
			}
		})
	}
}

func TestChallenge(t *testing.T) {
	const md = "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantHeader string
	}{
		{"no token", ErrNoToken, 401, `Bearer resource_metadata="` + md + `"`},
		{"invalid", &TokenError{Reason: "token expired"}, 401,
			`Bearer error="invalid_token", error_description="token expired", resource_metadata="` + md + `"`},
		{"wrapped invalid", errors.Join(errors.New("x"), &TokenError{Reason: `say "hi"\`}), 401,
			`Bearer error="invalid_token", error_description="say \"hi\"\\", resource_metadata="` + md + `"`},
		{"scope", &ScopeError{Missing: []string{"tools:call", "files:write"}}, 403,
			`Bearer error="insufficient_scope", scope="tools:call files:write", resource_metadata="` + md + `"`},
		{"other error", errors.New("boom"), 401, `Bearer error="invalid_token", resource_metadata="` + md + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h := Challenge(tt.err, md)
			if status != tt.wantStatus || h != tt.wantHeader {
				t.Errorf("Challenge: got %d %s, want %d %s", status, h, tt.wantStatus, tt.wantHeader)
			}
		})
	}
}

func TestMetadataURL(t *testing.T) {
	tests := []struct{ resource, want string }{
		{"https://tools.example.com/mcp", "https://tools.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://tools.example.com", "https://tools.example.com/.well-known/oauth-protected-resource"},
		{"https://tools.example.com/", "https://tools.example.com/.well-known/oauth-protected-resource"},
		{"http://127.0.0.1:8080/a/mcp", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/mcp"},
	}
	for _, tt := range tests {
		got, err := MetadataURL(tt.resource)
		if err != nil || got != tt.want {
			t.Errorf("MetadataURL(%q): got %q, %v, want %q", tt.resource, got, err, tt.want)
		}
	}
	if _, err := MetadataURL("/mcp"); err == nil {
		t.Errorf("MetadataURL of a relative URL: got no error, want one")
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct{ header, want string }{
		{"Bearer abc", "abc"},
		{"bearer  abc ", "abc"},
		{"Basic abc", ""},
		{"Bearer", ""},
		{"", ""},
	}
	for _, tt := range tests {
		r, _ := http.NewRequest("GET", "/", nil)
		if tt.header != "" {
			r.Header.Set("Authorization", tt.header)
		}
		if got := BearerToken(r); got != tt.want {
			t.Errorf("BearerToken(%q): got %q, want %q", tt.header, got, tt.want)
		}
	}
}

// FuzzVerify: whatever the token, Verify does not panic, and accepts
// nothing it was not given by the issuer.
func FuzzVerify(f *testing.F) {
	f.Add("")
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYS0xIn0.e30.AAAA")
	f.Add(strings.Repeat(".", 1000))
	ti := newIssuer(f, openID, "")
	v, err := New(context.Background(), Config{Issuer: ti.issuer, Audience: audience})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := v.Verify(context.Background(), tok); err == nil {
			t.Errorf("Verify(%q): got accepted, want refused", tok)
		}
	})
}

// TestScopesSplitOnSpaceOnly: a no-break space is part of a scope, not a
// separator (RFC 6749 §3.3).
func TestScopesSplitOnSpaceOnly(t *testing.T) {
	got, err := extraClaims{Scope: json.RawMessage(`"read:x\u00a0admin  tools:call"`)}.scopes()
	if err != nil || len(got) != 2 || got[0] != "read:x\u00a0admin" || got[1] != "tools:call" {
		t.Errorf("scopes = %q, %v; want [read:x\\u00a0admin tools:call]", got, err)
	}
}
