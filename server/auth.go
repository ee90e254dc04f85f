package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/auth"
)

// OAuth makes the HTTP transports an OAuth 2.1 resource server, as the MCP
// authorization specification asks (stdio is unchanged): every request
// carries an access token that Verifier accepts (401 with a challenge
// otherwise), RFC 9728 metadata says where to get one, the token's subject
// is the principal (sessions are bound to it, budgets and logs name it),
// and a tool the token has not the scopes for is left out of tools/list
// and refused with 403 insufficient_scope.
//
// Token passthrough is not possible: once verified, the Authorization
// header is removed from the request, so neither mcp-go nor any tool,
// HTTP tool or subprocess ever sees the client's token; the server keeps
// only the auth.Principal.
type OAuth struct {
	// Verifier checks every request's bearer token, and its
	// RequiredScopes are needed by every request. Required.
	Verifier *auth.Verifier
	// Resource is this server's resource URI: the URL of its MCP endpoint
	// as clients reach it. It is published in the metadata, and the
	// metadata's URL, named in every challenge, is derived from it.
	// Empty: Verifier.Audience().
	Resource string
	// ScopesSupported are published in the metadata. Empty: the
	// verifier's required scopes, DefaultScopes and every ToolScopes
	// scope.
	ScopesSupported []string
	// DefaultScopes are needed to see and call a tool that has no entry in
	// ToolScopes, e.g. ["tools:call"]. Empty: none.
	DefaultScopes []string
	// ToolScopes are the scopes needed to see and call each tool, by tool
	// name; an entry replaces DefaultScopes for that tool (an empty,
	// non-nil entry needs none). A composite (a pipeline) needs, besides
	// its own, the scopes of each of its steps.
	ToolScopes map[string][]string
}

// check reports what is wrong with o.
func (o *OAuth) check() error {
	if o.Verifier == nil {
		return errors.New("server: oauth: a verifier is required")
	}
	if _, err := auth.MetadataURL(o.resource()); err != nil {
		return fmt.Errorf("server: oauth: %w", err)
	}
	return nil
}

func (o *OAuth) resource() string {
	if o.Resource != "" {
		return o.Resource
	}
	return o.Verifier.Audience()
}

// metadataURL is the absolute URL of the resource metadata.
func (o *OAuth) metadataURL() string {
	u, _ := auth.MetadataURL(o.resource()) // checked by check
	return u
}

// metadata is the RFC 9728 document.
func (o *OAuth) metadata() auth.ResourceMetadata {
	scopes := o.ScopesSupported
	if len(scopes) == 0 {
		scopes = append(o.Verifier.RequiredScopes(), o.DefaultScopes...)
		for _, s := range o.ToolScopes {
			scopes = append(scopes, s...)
		}
		slices.Sort(scopes)
		scopes = slices.Compact(scopes)
	}
	return auth.ResourceMetadata{
		Resource:             o.resource(),
		AuthorizationServers: []string{o.Verifier.Issuer()},
		ScopesSupported:      scopes,
	}
}

// mount serves the metadata on mux, unauthenticated, at the path RFC 9728
// derives from the resource (e.g. /.well-known/oauth-protected-resource/mcp)
// and at auth.MetadataPath, where clients of older drafts look.
func (o *OAuth) mount(mux *http.ServeMux) {
	md := o.metadata()
	p, _ := auth.MetadataPathFor(o.resource()) // checked by check
	mux.Handle(p, md)
	if p != auth.MetadataPath {
		mux.Handle(auth.MetadataPath, md)
	}
}

// authenticate verifies r's bearer token. On success it returns r with
// the principal in its context and no Authorization header; otherwise it
// has answered with 401 or 403 and a challenge, and returns false. A CORS
// preflight (OPTIONS) carries no credentials and passes as it is.
func (o *OAuth) authenticate(w http.ResponseWriter, r *http.Request, log *slog.Logger) (*http.Request, bool) {
	if r.Method == http.MethodOptions {
		return r, true
	}
	p, err := o.Verifier.Verify(r.Context(), auth.BearerToken(r))
	if err != nil {
		if !errors.Is(err, auth.ErrNoToken) {
			log.Warn("HTTP request refused", "reason", err, "principal", principalName(p))
		}
		auth.WriteChallenge(w, err, o.metadataURL())
		return nil, false
	}
	r = r.WithContext(withOAuthPrincipal(r.Context(), p))
	r.Header = r.Header.Clone()
	r.Header.Del("Authorization")
	return r, true
}

// wrap is next behind authenticate.
func (o *OAuth) wrap(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r, ok := o.authenticate(w, r, log); ok {
			next.ServeHTTP(w, r)
		}
	})
}

// scopesFor returns the scopes tool needs.
func (o *OAuth) scopesFor(tool string) []string {
	if s, ok := o.ToolScopes[tool]; ok {
		return s
	}
	return o.DefaultScopes
}

// checkTool returns a *auth.ScopeError when the request's principal may
// not call tool, nil otherwise (and nil with no principal: stdio).
func (o *OAuth) checkTool(ctx context.Context, tool string) error {
	p, ok := oauthPrincipal(ctx)
	if !ok {
		return nil
	}
	return p.Require(o.scopesFor(tool)...)
}

// refuse answers a tools/call the principal lacks the scopes for: 403
// with error="insufficient_scope" and the scopes needed.
func (o *OAuth) refuse(w http.ResponseWriter, err error) {
	auth.WriteChallenge(w, err, o.metadataURL())
}

// toolFilter is an mcp-go ToolFilterFunc: it leaves out of tools/list
// the tools the request's principal may not call. Without a principal
// (stdio) the list is unchanged.
func (o *OAuth) toolFilter(ctx context.Context, list []mcp.Tool) []mcp.Tool {
	p, ok := oauthPrincipal(ctx)
	if !ok {
		return list
	}
	kept := make([]mcp.Tool, 0, len(list))
	for _, t := range list {
		if p.Has(o.scopesFor(t.Name)...) {
			kept = append(kept, t)
		}
	}
	return kept
}

type oauthPrincipalKey struct{}

func withOAuthPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, oauthPrincipalKey{}, p)
}

// oauthPrincipal returns the principal authenticate put in ctx.
func oauthPrincipal(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(oauthPrincipalKey{}).(auth.Principal)
	return p, ok
}

// principalName is how sessions, budgets, approvals and logs name p:
// "sub:" and its subject ("" for none).
func principalName(p auth.Principal) string {
	if p.Subject == "" {
		return ""
	}
	return "sub:" + p.Subject
}
