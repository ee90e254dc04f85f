package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// testIssuer is an authorization server on 127.0.0.1: a discovery
// document and a JWKS, with keys made in the test.
type testIssuer struct {
	srv    *httptest.Server
	issuer string
	rsa    jose.JSONWebKey // private, kid "rsa-1"
	ec     jose.JSONWebKey // private, kid "ec-1"

	mu        sync.Mutex
	published []jose.JSONWebKey // public keys in the JWKS
	jwksHits  atomic.Int32
}

// issuerMode says which discovery document the issuer serves.
type issuerMode int

const (
	openID  issuerMode = iota // /.well-known/openid-configuration
	rfc8414                   // /.well-known/oauth-authorization-server{path}
)

func newIssuer(t testing.TB, mode issuerMode, path string) *testIssuer {
	t.Helper()
	ti := &testIssuer{
		rsa: jose.JSONWebKey{Key: mustRSA(t), KeyID: "rsa-1", Use: "sig"},
		ec:  jose.JSONWebKey{Key: mustEC(t), KeyID: "ec-1", Algorithm: "ES256", Use: "sig"},
	}
	ti.published = []jose.JSONWebKey{ti.rsa.Public(), ti.ec.Public()}
	mux := http.NewServeMux()
	doc := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"issuer":   ti.issuer,
			"jwks_uri": ti.srv.URL + "/keys",
		})
	}
	switch mode {
	case openID:
		mux.HandleFunc("GET "+path+openIDConfigPath, doc)
	case rfc8414:
		mux.HandleFunc("GET "+oauthServerPath+path, doc)
	}
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		ti.jwksHits.Add(1)
		ti.mu.Lock()
		set := jose.JSONWebKeySet{Keys: ti.published}
		ti.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	ti.srv = httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(ti.srv.Close)
	ti.issuer = ti.srv.URL + path
	return ti
}

// publish replaces the JWKS with the public halves of keys.
func (ti *testIssuer) publish(keys ...jose.JSONWebKey) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.published = nil
	for _, k := range keys {
		ti.published = append(ti.published, k.Public())
	}
}

func mustRSA(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustEC(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sign returns claims signed by key (a private JSONWebKey, whose kid goes
// in the header) with alg.
func sign(t *testing.T, key jose.JSONWebKey, alg jose.SignatureAlgorithm, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// claims returns valid claims for iss and aud at now, with overrides.
func claims(iss, aud string, now time.Time, over map[string]any) map[string]any {
	c := map[string]any{
		"iss":       iss,
		"aud":       aud,
		"sub":       "user-42",
		"client_id": "client-7",
		"scope":     "tools:call files:read",
		"iat":       now.Unix(),
		"nbf":       now.Unix(),
		"exp":       now.Add(5 * time.Minute).Unix(),
	}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// clock is a settable time for the Verifier.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// unsigned returns a token with {"alg":"none"} and no signature.
func unsigned(c map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	p, _ := json.Marshal(c)
	return b64(h) + "." + b64(p) + "."
}

func b64(b []byte) string {
	return strings.TrimRight(base64URL.EncodeToString(b), "=")
}
