package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Well-known paths of the discovery documents.
const (
	openIDConfigPath = "/.well-known/openid-configuration"
	oauthServerPath  = "/.well-known/oauth-authorization-server" // RFC 8414
)

// discover returns the issuer's jwks_uri. It tries, in order, the OpenID
// Connect document appended to the issuer, the RFC 8414 document with the
// issuer's path inserted after the well-known prefix, and (for an issuer
// with a path) the OpenID document inserted likewise. A document that
// cannot be had (not 200) sends it to the next; a document whose "issuer"
// is not cfg.Issuer exactly is an error (RFC 8414 §3.3).
func discover(ctx context.Context, client *http.Client, issuer string) (string, error) {
	u, _ := url.Parse(issuer) // checked by checkURL
	path := strings.TrimSuffix(u.Path, "/")
	base := u.Scheme + "://" + u.Host
	candidates := []string{base + path + openIDConfigPath, base + oauthServerPath + path}
	if path != "" {
		candidates = append(candidates, base+openIDConfigPath+path)
	}
	var errs []error
	for _, c := range candidates {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		found, err := getJSON(ctx, client, c, &doc)
		if err != nil {
			return "", fmt.Errorf("auth: discovery: %w", err)
		}
		if !found {
			errs = append(errs, fmt.Errorf("%s: not found", c))
			continue
		}
		if doc.Issuer != issuer {
			return "", fmt.Errorf("auth: discovery: %s names issuer %q, want %q", c, doc.Issuer, issuer)
		}
		if err := checkURL(doc.JWKSURI); err != nil {
			return "", fmt.Errorf("auth: discovery: %s: jwks_uri: %w", c, err)
		}
		return doc.JWKSURI, nil
	}
	return "", fmt.Errorf("auth: discovery: no metadata for issuer %q: %w", issuer, errors.Join(errs...))
}

// getJSON GETs target into v, reading at most MaxDocumentBytes. It reports
// false, with no error, when the server answers 404 or 410 or another
// client error, so that discovery can try the next place.
func getJSON(ctx context.Context, client *http.Client, target string, v any) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false, fmt.Errorf("%s: %w", target, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false, fmt.Errorf("%s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s: status %d", target, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocumentBytes+1))
	if err != nil {
		return false, fmt.Errorf("%s: %w", target, err)
	}
	if len(body) > MaxDocumentBytes {
		return false, fmt.Errorf("%s: larger than %d bytes", target, MaxDocumentBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, fmt.Errorf("%s: %w", target, err)
	}
	return true, nil
}

// checkURL accepts an absolute https URL, or http on a loopback host (for
// tests and local issuers), with no query or fragment.
func checkURL(s string) error {
	if s == "" {
		return errors.New("empty URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: want an absolute URL with no query, fragment or user", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if loopback(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%q: want https (http only on a loopback host)", s)
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
