package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// Transport names accepted by ServeHTTP and Handler.
const (
	TransportStdio = "stdio"
	TransportSSE   = "sse"
	TransportHTTP  = "http"
)

// DefaultAddr is where the HTTP transports listen unless told otherwise:
// loopback only.
const DefaultAddr = "127.0.0.1:8080"

// Endpoint paths.
const (
	PathMCP     = "/mcp"     // streamable HTTP
	PathSSE     = "/sse"     // legacy SSE stream
	PathMessage = "/message" // legacy SSE messages
)

// httpTransport is one of the two HTTP transports, with what Shutdown needs.
type httpTransport struct {
	handler http.Handler
	close   func(ctx context.Context)
}

// Handler returns the http.Handler of transport (TransportHTTP or
// TransportSSE), guarded as the package documents: Origin allow-list,
// optional bearer token, message size cap, and mcp-go's own Host check
// against DNS rebinding. Streamable HTTP is served at /mcp; SSE at /sse, with
// messages posted to /message.
func (s *Server) Handler(transport string) (http.Handler, error) {
	t, err := s.httpTransport(transport)
	if err != nil {
		return nil, err
	}
	return t.handler, nil
}

func (s *Server) httpTransport(transport string) (*httpTransport, error) {
	g := &guard{
		origins:  s.opts.AllowedOrigins,
		tokens:   s.opts.BearerTokens,
		maxBytes: s.opts.MaxMessageBytes,
		owners:   &s.owners,
	}
	ctxFunc := func(ctx context.Context, r *http.Request) context.Context {
		return withPrincipal(ctx, principalOf(r, len(s.opts.BearerTokens) > 0))
	}
	mux := http.NewServeMux()
	switch transport {
	case TransportHTTP:
		sm := &sessionManager{owners: &s.owners}
		h := mcpserver.NewStreamableHTTPServer(s.mcp,
			mcpserver.WithSessionIdManagerResolver(sessionResolver{m: sm, auth: len(s.opts.BearerTokens) > 0}),
			mcpserver.WithHTTPContextFunc(ctxFunc),
			mcpserver.WithStreamableHTTPLogger(s.log),
			mcpserver.WithSessionIdleTTL(s.opts.SessionIdleTimeout),
		)
		g.sessionOf = func(r *http.Request) string { return r.Header.Get(mcp.HeaderSessionID) }
		mux.Handle(PathMCP, g.wrap(h))
		return &httpTransport{handler: mux, close: func(ctx context.Context) { h.CloseSessions(ctx) }}, nil
	case TransportSSE:
		s.linkHardStop.Store(true)
		h := mcpserver.NewSSEServer(s.mcp,
			mcpserver.WithSSEEndpoint(PathSSE),
			mcpserver.WithMessageEndpoint(PathMessage),
			mcpserver.WithUseFullURLForMessageEndpoint(false),
			mcpserver.WithSSEContextFunc(ctxFunc),
			// CORS on, with only the allowed origins: without this mcp-go
			// answers every SSE stream with Access-Control-Allow-Origin: *.
			mcpserver.WithSSECORS(mcpserver.WithCORSAllowedOrigins(corsOrigins(s.opts.AllowedOrigins)...)),
			mcpserver.WithKeepAlive(true),
			// Random ids, each bound to the principal that opened the
			// stream, so that no other token can post to the session.
			mcpserver.WithSessionIDGenerator(func(_ context.Context, r *http.Request) (string, error) {
				id := rand.Text()
				s.owners.Store(id, principalOf(r, len(s.opts.BearerTokens) > 0))
				return id, nil
			}),
		)
		g.sessionOf = func(r *http.Request) string { return r.URL.Query().Get("sessionId") }
		mux.Handle(PathSSE, g.wrap(h.SSEHandler()))
		mux.Handle(PathMessage, g.wrap(h.MessageHandler()))
		return &httpTransport{handler: mux, close: func(context.Context) { h.CloseSessions() }}, nil
	}
	return nil, fmt.Errorf("server: unknown HTTP transport %q: use %q or %q", transport, TransportHTTP, TransportSSE)
}

// corsOrigins is the CORS allow-list handed to mcp-go: the configured
// origins, or, when there are none, a value no browser sends, so that CORS
// stays on and no wildcard is ever sent.
func corsOrigins(allowed []string) []string {
	if len(allowed) == 0 {
		return []string{"mcp-tools:no-cross-origin"}
	}
	return allowed
}

// ServeHTTP serves transport (TransportHTTP or TransportSSE) on ln until ctx
// is done, then shuts down: new calls are refused, in-flight calls may
// finish within the grace period, the rest are cancelled, and the listener
// closes. It returns nil after a clean shutdown.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, transport string) error {
	t, err := s.httpTransport(transport)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           t.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          nil,
		// Every request's context derives from hardStop, which Shutdown
		// cancels when the grace period is over.
		BaseContext: func(net.Listener) context.Context { return s.hardStop },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info("serving", "transport", transport, "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "reason", context.Cause(ctx))
	s.Shutdown(context.Background())
	t.close(context.Background())
	shutCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// guard refuses what must not reach mcp-go: foreign origins, missing or
// wrong bearer tokens, and over-size bodies.
type guard struct {
	origins  []string
	tokens   []string
	maxBytes int64
	// sessionOf reads the session a request names; owners maps session
	// ids to the principal that opened them.
	sessionOf func(*http.Request) string
	owners    *sync.Map
}

func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, g.origins) {
			http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed", origin), http.StatusForbidden)
			return
		}
		if len(g.tokens) > 0 && !bearerOK(r, g.tokens) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-tools"`)
			http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		// A session is only ever used by the principal that opened it: on
		// every method (mcp-go's GET stream and DELETE do not ask the
		// session manager first), and on both HTTP transports.
		if len(g.tokens) > 0 && g.sessionOf != nil {
			if id := g.sessionOf(r); id != "" {
				if owner, known := g.owners.Load(id); known && owner != principalOf(r, true) {
					http.Error(w, "Not Found: no such session", http.StatusNotFound)
					return
				}
			}
		}
		if r.Body != nil && r.Method == http.MethodPost {
			if r.ContentLength > g.maxBytes {
				writeTooLarge(w, g.maxBytes)
				return
			}
			body, err := readBody(r, g.maxBytes)
			if err != nil {
				http.Error(w, "Bad Request: cannot read body", http.StatusBadRequest)
				return
			}
			if int64(len(body)) > g.maxBytes {
				writeTooLarge(w, g.maxBytes)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads at most max+1 bytes of r's body, in one allocation when
// the request says its length (net/http ends the body there).
func readBody(r *http.Request, max int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= max {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(io.LimitReader(r.Body, max+1))
}

func writeTooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	fmt.Fprintf(w, `{"jsonrpc":%q,"id":null,"error":{"code":%d,"message":"message too large: the limit is %d bytes"}}`+"\n",
		mcp.JSONRPC_VERSION, mcp.INVALID_REQUEST, limit)
}

// originAllowed reports whether a browser origin may call the server:
// loopback origins always, others only when listed.
func originAllowed(origin string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bearerOK reports whether r carries one of tokens. Every token is
// compared, in constant time, so the timing says nothing about which.
func bearerOK(r *http.Request, tokens []string) bool {
	got, ok := bearer(r)
	if !ok {
		return false
	}
	match := 0
	for _, t := range tokens {
		match |= subtle.ConstantTimeCompare([]byte(got), []byte(t))
	}
	return match == 1
}

// bearer returns the token of r's "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	return strings.TrimSpace(h[len(prefix):]), true
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p string) context.Context {
	if p == "" {
		return ctx
	}
	return context.WithValue(ctx, principalKey{}, p)
}

func principalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// principalOf names who authenticated r: a digest of its bearer token when
// tokens are required, "" otherwise. The token itself is never kept.
func principalOf(r *http.Request, auth bool) string {
	if !auth {
		return ""
	}
	t, ok := bearer(r)
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(t))
	return "token:" + hex.EncodeToString(sum[:8])
}

// sessionManager tracks streamable HTTP sessions (mcp-go's stateful
// manager: random UUIDv4 ids, unknown ids refused with 404) and remembers
// which principal opened each, so that a session can be used only by it.
type sessionManager struct {
	inner  mcpserver.InsecureStatefulSessionIdManager
	owners *sync.Map // session id -> principal; the server's, shared with the guard
}

// sessionResolver hands each request a view of the manager bound to the
// request's principal.
type sessionResolver struct {
	m    *sessionManager
	auth bool
}

func (r sessionResolver) ResolveSessionIdManager(req *http.Request) mcpserver.SessionIdManager {
	if req == nil {
		// mcp-go asks with no request when it closes every session on
		// shutdown: that is the server itself, which may end any session.
		return serverSessions{m: r.m}
	}
	return boundSessions{m: r.m, principal: principalOf(req, r.auth)}
}

// serverSessions is the server's own, unbound view of the sessions.
type serverSessions struct{ m *sessionManager }

func (s serverSessions) Generate() string { return s.m.inner.Generate() }

func (s serverSessions) Validate(id string) (bool, error) { return s.m.inner.Validate(id) }

func (s serverSessions) Terminate(id string) (bool, error) {
	s.m.owners.Delete(id)
	return s.m.inner.Terminate(id)
}

type boundSessions struct {
	m         *sessionManager
	principal string
}

func (b boundSessions) Generate() string {
	id := b.m.inner.Generate()
	b.m.owners.Store(id, b.principal)
	return id
}

func (b boundSessions) owned(id string) bool {
	owner, ok := b.m.owners.Load(id)
	return ok && owner == b.principal
}

func (b boundSessions) Validate(id string) (bool, error) {
	terminated, err := b.m.inner.Validate(id)
	if err != nil || terminated {
		return terminated, err
	}
	if !b.owned(id) {
		return false, fmt.Errorf("session not found: %s", id)
	}
	return false, nil
}

func (b boundSessions) Terminate(id string) (bool, error) {
	if _, known := b.m.owners.Load(id); known && !b.owned(id) {
		return false, fmt.Errorf("session not found: %s", id) // another principal's: not for them to see
	}
	b.m.owners.Delete(id)
	return b.m.inner.Terminate(id)
}
