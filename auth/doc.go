// Package auth makes an HTTP MCP server an OAuth 2.1 resource server, as
// the MCP authorization specification (2025-06-18 and later) asks: it
// validates the JWT access tokens an authorization server issued, publishes
// where to get one (RFC 9728 protected-resource metadata), and answers
// refusals with the challenges a client can act on.
//
// New finds the issuer's JWKS through discovery (OpenID Connect
// /.well-known/openid-configuration, else RFC 8414
// /.well-known/oauth-authorization-server) and returns a Verifier.
// Verifier.Verify checks a token's signature against the issuer's keys
// (cached, refreshed every Config.JWKSRefresh, refetched once for an
// unknown key id, at most every Config.JWKSMinInterval), its algorithm
// against an allow-list of asymmetric algorithms (never "none", never
// HMAC), its "iss", its "aud" (this server's resource URI, RFC 8707), its
// "exp" and "nbf" with a small leeway, and the scopes every call needs.
//
// Errors say what the HTTP answer is: ErrNoToken and *TokenError are 401
// (the latter with error="invalid_token"), *ScopeError is 403 with
// error="insufficient_scope" and the scope needed. Challenge and
// WriteChallenge turn them into the WWW-Authenticate header, which always
// names the resource metadata.
//
// Token passthrough: a verified token is never forwarded anywhere. Verify
// returns a Principal (subject, scopes, client) and keeps nothing of the
// raw token; a server that uses this package keeps only the Principal, so
// no tool, HTTP tool or subprocess can receive the client's token.
//
// JOSE (parsing, signatures, JWK) is github.com/go-jose/go-jose/v4, the
// library github.com/coreos/go-oidc/v3 is built on; nothing here is
// hand-written cryptography.
package auth
