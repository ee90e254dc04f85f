package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// MetadataPath is where RFC 9728 protected-resource metadata is served: at
// this path for a resource with no path, and with the resource's path
// appended (MetadataPathFor) otherwise.
const MetadataPath = "/.well-known/oauth-protected-resource"

// ResourceMetadata is an RFC 9728 protected-resource metadata document. Its
// ServeHTTP serves it as JSON to GET and HEAD.
type ResourceMetadata struct {
	// Resource is this server's resource URI: the URL of its MCP endpoint.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuers whose tokens are accepted.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// ScopesSupported are the scopes a client may ask for.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported is how a token may be sent; only "header"
	// (Authorization: Bearer) is, so it is always ["header"] when served.
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// ServeHTTP answers GET and HEAD with m as JSON; other methods get 405.
// The document is public: it carries no secret, and browsers of any
// origin may read it.
func (m ResourceMetadata) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	m.BearerMethodsSupported = []string{"header"}
	body, err := json.Marshal(m)
	if err != nil {
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "max-age=3600")
	h.Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(append(body, '\n'))
	}
}

// MetadataPathFor returns the path of resource's metadata (RFC 9728 §3.1):
// MetadataPath with the resource's path appended, e.g.
// "/.well-known/oauth-protected-resource/mcp" for "https://h/mcp".
func MetadataPathFor(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.Fragment != "" {
		return "", fmt.Errorf("auth: resource %q: want an absolute http(s) URL with no fragment", resource)
	}
	return MetadataPath + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// MetadataURL returns the absolute URL of resource's metadata, as every
// challenge names it.
func MetadataURL(resource string) (string, error) {
	p, err := MetadataPathFor(resource)
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(resource)
	return u.Scheme + "://" + u.Host + p, nil
}

// Challenge returns the HTTP status and WWW-Authenticate value for err,
// as Verify returned it (or ErrNoToken when the request had no token):
//
//   - ErrNoToken (or nil): 401, Bearer resource_metadata="…"
//   - *TokenError (or any other error): 401, Bearer error="invalid_token",
//     error_description="…", resource_metadata="…"
//   - *ScopeError: 403, Bearer error="insufficient_scope", scope="…",
//     resource_metadata="…"
//
// metadataURL is the absolute URL of the resource metadata (MetadataURL).
func Challenge(err error, metadataURL string) (status int, wwwAuthenticate string) {
	rm := `resource_metadata=` + quote(metadataURL)
	var se *ScopeError
	var te *TokenError
	switch {
	case err == nil || errors.Is(err, ErrNoToken):
		return http.StatusUnauthorized, "Bearer " + rm
	case errors.As(err, &se):
		return http.StatusForbidden, `Bearer error="insufficient_scope", scope=` + quote(strings.Join(se.Missing, " ")) + ", " + rm
	case errors.As(err, &te):
		return http.StatusUnauthorized, `Bearer error="invalid_token", error_description=` + quote(te.Reason) + ", " + rm
	}
	return http.StatusUnauthorized, `Bearer error="invalid_token", ` + rm
}

// WriteChallenge answers a refused request: the status and
// WWW-Authenticate of Challenge, and a short plain-text body.
func WriteChallenge(w http.ResponseWriter, err error, metadataURL string) {
	status, h := Challenge(err, metadataURL)
	w.Header().Set("WWW-Authenticate", h)
	msg := "Unauthorized: a valid bearer token is required"
	if status == http.StatusForbidden {
		msg = "Forbidden: the token lacks a scope this request needs"
	}
	http.Error(w, msg, status)
}

// quote makes s an RFC 9110 quoted-string: backslash and double quote are
// escaped, and characters a header may not hold are dropped.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t' || (c >= 0x20 && c < 0x7f):
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// BearerToken returns the token of r's "Authorization: Bearer" header, or
// "" when there is none (the scheme is case-insensitive, RFC 9110 §11.1).
// Tokens in the query string or the body are not accepted.
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return ""
	}
	return strings.TrimSpace(h[len(prefix):])
}
