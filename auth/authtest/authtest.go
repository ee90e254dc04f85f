// Package authtest runs an OAuth authorization server for tests: an
// OpenID discovery document and a JWKS on 127.0.0.1, with an RSA and an EC
// key made at start, and Sign to issue tokens with them.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is a running test authorization server. Its URL is its issuer
// identifier.
type Issuer struct {
	// URL is the issuer identifier, e.g. "http://127.0.0.1:41234".
	URL string
	// RSA (kid "rsa-1", RS256) and EC (kid "ec-1", ES256) are the private
	// keys whose public halves the JWKS holds.
	RSA, EC jose.JSONWebKey
}

// NewIssuer starts an Issuer, closed when the test ends.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss := &Issuer{
		RSA: jose.JSONWebKey{Key: rk, KeyID: "rsa-1", Algorithm: "RS256", Use: "sig"},
		EC:  jose.JSONWebKey{Key: ek, KeyID: "ec-1", Algorithm: "ES256", Use: "sig"},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": iss.URL, "jwks_uri": iss.URL + "/keys"})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{iss.RSA.Public(), iss.EC.Public()}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.URL = srv.URL
	return iss
}

// Claims returns valid claims for audience, issued now for five minutes,
// to subject "user-42" with scope, then sets (or, for a nil value,
// removes) the claims of over.
func (iss *Issuer) Claims(audience, scope string, over map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss":       iss.URL,
		"aud":       audience,
		"sub":       "user-42",
		"client_id": "client-7",
		"scope":     scope,
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

// Sign returns claims signed with the RSA key (RS256).
func (iss *Issuer) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: iss.RSA}, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
