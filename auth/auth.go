package auth

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Defaults for Config's zero values, and fixed limits.
const (
	// DefaultJWKSRefresh is how long fetched keys are used before they
	// are fetched again.
	DefaultJWKSRefresh = time.Hour
	// DefaultJWKSMinInterval is the least time between two JWKS fetches:
	// a token naming an unknown key id triggers one fetch at most this
	// often, so that made-up key ids cannot make the server hammer the
	// issuer.
	DefaultJWKSMinInterval = 10 * time.Second
	// DefaultLeeway is the clock skew allowed on "exp", "nbf" and "iat".
	DefaultLeeway = 30 * time.Second
	// DefaultHTTPTimeout bounds one discovery or JWKS request when
	// Config.HTTPClient is nil.
	DefaultHTTPTimeout = 10 * time.Second
	// MaxTokenBytes is the largest token Verify parses; a longer one is
	// an invalid token.
	MaxTokenBytes = 16 << 10
	// MaxDocumentBytes bounds a discovery document or a JWKS.
	MaxDocumentBytes = 1 << 20
	// MaxKeys bounds how many keys of a JWKS are kept; the rest are
	// ignored.
	MaxKeys = 100
)

// DefaultAlgorithms are the signature algorithms accepted when
// Config.Algorithms is empty: every asymmetric JWS algorithm.
var DefaultAlgorithms = []string{
	"RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512", "EdDSA",
}

// Config configures a Verifier. Issuer and Audience are required; every
// other field's zero value works.
type Config struct {
	// Issuer is the authorization server's issuer identifier, exactly as
	// it appears in its tokens' "iss" and its discovery document. It must
	// be https, except on a loopback host (localhost, 127.0.0.0/8, ::1).
	Issuer string
	// Audience is the value a token's "aud" must contain: this server's
	// resource URI (RFC 8707), by default the URL of its MCP endpoint,
	// e.g. "https://tools.example.com/mcp". Compared exactly.
	Audience string
	// RequiredScopes are needed by every request; a valid token lacking
	// one gets *ScopeError (403). Empty: no scope is required by Verify.
	RequiredScopes []string
	// JWKSRefresh is how long fetched keys are used before they are
	// fetched again; when that fetch fails the old keys stay in use and
	// the fetch is retried at most every JWKSMinInterval.
	// Zero: DefaultJWKSRefresh.
	JWKSRefresh time.Duration
	// JWKSMinInterval is the least time between two JWKS fetches, those
	// triggered by unknown key ids included. Zero: DefaultJWKSMinInterval.
	JWKSMinInterval time.Duration
	// Leeway is the clock skew allowed on "exp", "nbf" and "iat".
	// Zero: DefaultLeeway; negative: none.
	Leeway time.Duration
	// HTTPClient fetches the discovery document and the JWKS. Nil: a
	// client with a DefaultHTTPTimeout timeout.
	HTTPClient *http.Client
	// Algorithms is the allow-list of JWS algorithms. Only asymmetric
	// algorithms may be listed: "none" and the HMAC algorithms (HS256...)
	// are refused by New, since a public key must never serve as an HMAC
	// secret. Empty: DefaultAlgorithms.
	Algorithms []string
}

// Verifier checks access tokens of one issuer for one audience. It is safe
// for concurrent use. It starts no goroutine: keys are refreshed during
// Verify, when due.
type Verifier struct {
	issuer   string
	audience string
	required []string
	leeway   time.Duration
	algs     []jose.SignatureAlgorithm
	keys     *keySet
	now      func() time.Time
}

// asymmetric are the JWS algorithms a Verifier can be told to accept.
var asymmetric = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// parseable is what a token may name to get past parsing, so that an
// algorithm outside the allow-list is refused with a clear reason; the
// allow-list is checked before any key is looked at.
var parseable = append(slices.Clone(asymmetric), jose.HS256, jose.HS384, jose.HS512)

// New returns a Verifier for cfg. It finds the issuer's JWKS through
// discovery and fetches it once, so that a misconfigured issuer fails at
// start rather than at the first request. ctx bounds these requests only.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if err := checkURL(cfg.Issuer); err != nil {
		return nil, fmt.Errorf("auth: issuer: %w", err)
	}
	if cfg.Audience == "" {
		return nil, errors.New("auth: audience is required: the URL of this server's MCP endpoint, e.g. https://tools.example.com/mcp")
	}
	algs, err := allowList(cfg.Algorithms)
	if err != nil {
		return nil, err
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: DefaultHTTPTimeout, CheckRedirect: noDowngrade}
	}
	v := &Verifier{
		issuer:   cfg.Issuer,
		audience: cfg.Audience,
		required: slices.Clone(cfg.RequiredScopes),
		leeway:   orDefault(cfg.Leeway, DefaultLeeway),
		algs:     algs,
		now:      time.Now,
	}
	jwksURL, err := discover(ctx, client, cfg.Issuer)
	if err != nil {
		return nil, err
	}
	v.keys = &keySet{
		url:         jwksURL,
		client:      client,
		refresh:     orDefault(cfg.JWKSRefresh, DefaultJWKSRefresh),
		minInterval: orDefault(cfg.JWKSMinInterval, DefaultJWKSMinInterval),
		now:         func() time.Time { return v.now() },
	}
	if err := v.keys.fetch(ctx, 0); err != nil {
		return nil, err
	}
	return v, nil
}

func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// allowList checks names against the asymmetric algorithms.
func allowList(names []string) ([]jose.SignatureAlgorithm, error) {
	if len(names) == 0 {
		names = DefaultAlgorithms
	}
	algs := make([]jose.SignatureAlgorithm, 0, len(names))
	for _, n := range names {
		a := jose.SignatureAlgorithm(n)
		if !slices.Contains(asymmetric, a) {
			return nil, fmt.Errorf("auth: algorithm %q is not allowed: use asymmetric ones (%s); never none or HMAC",
				n, strings.Join(DefaultAlgorithms, ", "))
		}
		algs = append(algs, a)
	}
	return algs, nil
}

// Issuer returns the issuer tokens must come from.
func (v *Verifier) Issuer() string { return v.issuer }

// Audience returns the audience tokens must be for.
func (v *Verifier) Audience() string { return v.audience }

// RequiredScopes returns the scopes every request needs.
func (v *Verifier) RequiredScopes() []string { return slices.Clone(v.required) }

// Verify checks raw, a bearer token without its "Bearer " prefix, and
// returns who it names. The error is ErrNoToken when raw is empty, a
// *TokenError when the token cannot be accepted, and a *ScopeError (with
// the Principal) when it is valid but lacks a Config.RequiredScopes scope.
// Verify may fetch the JWKS (see Config.JWKSRefresh and JWKSMinInterval);
// ctx bounds nothing else. raw is not kept.
func (v *Verifier) Verify(ctx context.Context, raw string) (Principal, error) {
	if raw == "" {
		return Principal{}, ErrNoToken
	}
	if len(raw) > MaxTokenBytes {
		return Principal{}, invalid("token too large", fmt.Errorf("%d bytes, the limit is %d", len(raw), MaxTokenBytes))
	}
	tok, err := jwt.ParseSigned(raw, parseable)
	if err != nil {
		return Principal{}, invalid("malformed token", err)
	}
	if len(tok.Headers) != 1 {
		return Principal{}, invalid("malformed token", errors.New("want exactly one signature"))
	}
	h := tok.Headers[0]
	alg := jose.SignatureAlgorithm(h.Algorithm)
	if !slices.Contains(v.algs, alg) {
		return Principal{}, invalid("algorithm not allowed", fmt.Errorf("%q", h.Algorithm))
	}
	keys, err := v.keys.lookup(ctx, h.KeyID, alg)
	if err != nil {
		return Principal{}, invalid("unknown signing key", err)
	}
	var (
		claims jwt.Claims
		extra  extraClaims
	)
	err = errors.New("no key")
	for _, k := range keys {
		if err = tok.Claims(k.Key, &claims, &extra); err == nil {
			break
		}
	}
	if err != nil {
		return Principal{}, invalid("bad signature", err)
	}
	if claims.Expiry == nil {
		return Principal{}, invalid("no exp claim", nil)
	}
	if claims.Subject == "" {
		return Principal{}, invalid("no sub claim", nil)
	}
	err = claims.ValidateWithLeeway(jwt.Expected{
		Issuer:      v.issuer,
		AnyAudience: jwt.Audience{v.audience},
		Time:        v.now(),
	}, v.leeway)
	if err != nil {
		return Principal{}, invalid(claimReason(err), err)
	}
	scopes, err := extra.scopes()
	if err != nil {
		return Principal{}, invalid("malformed scope claim", err)
	}
	p := Principal{
		Issuer:   claims.Issuer,
		Subject:  claims.Subject,
		ClientID: cmp.Or(extra.ClientID, extra.AZP),
		Scopes:   scopes,
		Expiry:   claims.Expiry.Time(),
	}
	if err := p.Require(v.required...); err != nil {
		return p, err
	}
	return p, nil
}

func claimReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return "token expired"
	case errors.Is(err, jwt.ErrNotValidYet):
		return "token not yet valid"
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "token issued in the future"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "wrong issuer"
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "wrong audience"
	}
	return "invalid claims"
}

// usable reports whether k may verify a signature made with alg: a public
// signing key of the type alg needs, whose own "alg", if any, is alg.
func usable(k jose.JSONWebKey, alg jose.SignatureAlgorithm) bool {
	if !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != string(alg)) {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(string(alg), "RS") || strings.HasPrefix(string(alg), "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(string(alg), "ES")
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// extraClaims are the access-token claims beyond the registered ones.
type extraClaims struct {
	Scope    json.RawMessage `json:"scope"` // RFC 9068: space-separated
	SCP      json.RawMessage `json:"scp"`   // Okta, Entra: array or string
	ClientID string          `json:"client_id"`
	AZP      string          `json:"azp"`
}

// scopes reads "scope", else "scp", each a space-separated string or an
// array of strings.
func (c extraClaims) scopes() ([]string, error) {
	raw := c.Scope
	if len(raw) == 0 || string(raw) == "null" {
		raw = c.SCP
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		// RFC 6749 §3.3: scopes are separated by a space (0x20), and
		// nothing else: a no-break space is part of a scope, not a gap.
		var out []string
		for _, sc := range strings.Split(s, " ") {
			if sc != "" {
				out = append(out, sc)
			}
		}
		return out, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("want a string or an array of strings")
	}
	return list, nil
}

// Principal is who a verified token names. It holds nothing of the token
// itself.
type Principal struct {
	// Issuer is the token's "iss".
	Issuer string
	// Subject is the token's "sub": the user, or the client for a
	// client-credentials token.
	Subject string
	// ClientID is the OAuth client the token was issued to ("client_id",
	// else "azp"), if the token says.
	ClientID string
	// Scopes are the token's scopes ("scope", else "scp").
	Scopes []string
	// Expiry is when the token expires.
	Expiry time.Time
}

// Has reports whether p carries every one of scopes (true for none).
func (p Principal) Has(scopes ...string) bool {
	for _, s := range scopes {
		if !slices.Contains(p.Scopes, s) {
			return false
		}
	}
	return true
}

// Require returns a *ScopeError naming those of scopes p lacks, or nil.
func (p Principal) Require(scopes ...string) error {
	var missing []string
	for _, s := range scopes {
		if !slices.Contains(p.Scopes, s) && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return &ScopeError{Missing: missing}
	}
	return nil
}

// noDowngrade follows at most 5 redirects and never from https to http:
// keys fetched over a downgraded connection could be anyone's.
func noDowngrade(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("auth: too many redirects")
	}
	if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("auth: refused a redirect from https to %s", req.URL.Scheme)
	}
	return nil
}
