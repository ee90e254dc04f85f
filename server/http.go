package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/state"
)

// Transport names, as logs and cmd/mcp-tools's --transport spell them.
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
	guard   *guard
	// close ends the transport's sessions and streams.
	close func(ctx context.Context)
}

// StreamableHTTPHandler returns the streamable HTTP transport, at /mcp,
// with /healthz, /readyz and (with Options.Telemetry) /metrics beside it.
// It is guarded as the package documents: Origin allow-list (with CORS for
// the allowed origins), optional bearer token or OAuth, message size cap
// and per-request read deadline, strict JSON-RPC frames, a bound on open
// sessions, and a Host check against DNS rebinding. Serve it
// with Serve, or mount it on a mux of your own; either way Shutdown ends
// what it starts (its sessions and their idle sweeper). Each call returns a
// new handler with its own sessions; call it once per listener.
func (s *Server) StreamableHTTPHandler() http.Handler {
	return s.httpTransport(TransportHTTP).handler
}

// SSEHandler returns the legacy HTTP+SSE transport: the event stream at
// /sse, messages posted to /message, with /healthz, /readyz and (with
// Options.Telemetry) /metrics beside them. It is guarded as
// StreamableHTTPHandler is, and Shutdown ends its streams. Each call
// returns a new handler with its own sessions.
func (s *Server) SSEHandler() http.Handler {
	return s.httpTransport(TransportSSE).handler
}

// httpTransport builds transport (TransportHTTP or TransportSSE) and
// registers its end with Shutdown.
func (s *Server) httpTransport(transport string) *httpTransport {
	auth := len(s.opts.BearerTokens) > 0 || s.opts.OAuth != nil
	table := &sessionTable{max: s.opts.MaxSessions}
	var rl *relay
	if transport == TransportHTTP && s.shared {
		// Sessions live in the store, so that every replica serves them.
		table.store, table.ttl = s.store, s.opts.SessionIdleTimeout
		table.onEnd = func(ctx context.Context, id string) error {
			if err := s.store.Delete(ctx, sessionKey(id)); err != nil {
				// The client learns the session did not end (HTTP 500 from
				// mcp-go), and may retry.
				s.log.Warn("session not ended: the state store cannot be reached", "err", err)
				return unavailable("the session cannot be ended", err)
			}
			s.forgetSession(ctx, id)
			rl.ended(ctx, id)
			return nil
		}
	}
	s.closersMu.Lock()
	s.tables = append(s.tables, table)
	s.closersMu.Unlock()
	g := &guard{
		tasks:       s.tasksOrNil(),
		origins:     s.opts.AllowedOrigins,
		tokens:      s.opts.BearerTokens,
		maxBytes:    s.opts.MaxMessageBytes,
		readTimeout: s.opts.HTTPReadTimeout,
		sessions:    table,
		log:         s.log,
		oauth:       s.opts.OAuth,
	}
	ctxFunc := func(ctx context.Context, r *http.Request) context.Context {
		return withPrincipal(ctx, principalOf(r, auth))
	}
	sseCtxFunc := func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctxFunc(ctx, r), sseKey{}, true)
	}
	mux := http.NewServeMux()
	if s.opts.OAuth != nil {
		s.opts.OAuth.mount(mux) // the RFC 9728 metadata, unauthenticated
	}
	// Health, readiness and metrics, for a balancer and a scraper: no
	// token, no session, cheap.
	var metrics http.Handler
	if s.opts.Telemetry != nil {
		metrics = s.opts.Telemetry.Handler()
	}
	ops := s.OpsHandler(metrics)
	if metrics != nil {
		mux.Handle(PathMetrics, ops)
	}
	mux.Handle(PathHealthz, ops)
	mux.Handle(PathReadyz, ops)
	var t *httpTransport
	switch transport {
	case TransportHTTP:
		h := mcpserver.NewStreamableHTTPServer(s.mcp,
			mcpserver.WithSessionIdManagerResolver(sessionResolver{t: table, auth: auth}),
			mcpserver.WithHTTPContextFunc(ctxFunc),
			// mcp-go's own notes ("Delivered sampling response",
			// "Sweeping expired session") are DEBUG lines in our log:
			// INFO is one line per call.
			mcpserver.WithStreamableHTTPLogger(slog.New(demoted{s.log.Handler()})),
			mcpserver.WithSessionIdleTTL(s.opts.SessionIdleTimeout),
		)
		g.streamable = true
		g.fast = s.fastHTTP
		g.sessionOf = func(r *http.Request) string { return r.Header.Get(mcp.HeaderSessionID) }
		if table.store != nil {
			rl = newRelay(s, h, table)
			g.relay = rl
			g.hydrate = func(ctx context.Context, id string, rec sessionRecord, version string) error {
				return s.hydrate(ctx, h, id, rec, version)
			}
		}
		mux.Handle(PathMCP, g.wrap(h))
		// Shutdown stops the idle-session sweeper and closes every session
		// (this replica's copies only, in a fleet).
		t = &httpTransport{handler: mux, guard: g, close: func(ctx context.Context) {
			_ = h.Shutdown(ctx)
			if rl != nil {
				rl.close()
			}
		}}
	case TransportSSE:
		h := mcpserver.NewSSEServer(s.mcp,
			mcpserver.WithSSEEndpoint(PathSSE),
			mcpserver.WithMessageEndpoint(PathMessage),
			mcpserver.WithUseFullURLForMessageEndpoint(false),
			mcpserver.WithSSEContextFunc(sseCtxFunc),
			// CORS on, with only the allowed origins: without this mcp-go
			// answers every SSE stream with Access-Control-Allow-Origin: *.
			mcpserver.WithSSECORS(mcpserver.WithCORSAllowedOrigins(corsOrigins(s.opts.AllowedOrigins)...)),
			mcpserver.WithKeepAlive(true),
			// Random ids, each bound to the principal that opened the
			// stream, so that no other token can post to the session.
			mcpserver.WithSessionIDGenerator(func(_ context.Context, r *http.Request) (string, error) {
				id := rand.Text()
				// The session now holds its own place.
				res, _ := r.Context().Value(reservationKey{}).(*reservation)
				table.addReserved(id, principalOf(r, auth), res)
				return id, nil
			}),
		)
		g.sessionOf = func(r *http.Request) string { return r.URL.Query().Get("sessionId") }
		mux.Handle(PathSSE, g.wrap(h.SSEHandler()))
		mux.Handle(PathMessage, g.wrap(h.MessageHandler()))
		t = &httpTransport{handler: mux, guard: g, close: func(context.Context) { h.CloseSessions() }}
	default:
		panic("server: unknown HTTP transport " + transport)
	}
	s.onShutdown(func(ctx context.Context) {
		// Responses of the calls cancelled at the end of the grace period
		// are still on their way: let them out before the streams close.
		g.settle(ctx, settleWait)
		t.close(ctx)
	})
	return t
}

// settleWait bounds how long a shutdown waits for the last responses to
// be written before it closes the HTTP sessions.
const settleWait = 2 * time.Second

// corsOrigins is the CORS allow-list handed to mcp-go: the configured
// origins, or, when there are none, a value no browser sends, so that CORS
// stays on and no wildcard is ever sent.
func corsOrigins(allowed []string) []string {
	if len(allowed) == 0 {
		return []string{"mcp-tools:no-cross-origin"}
	}
	return allowed
}

// ReadHeaderTimeout bounds the reading of an HTTP request's headers on the
// connections Serve accepts. (The body's deadline is set per request, from
// Options.HTTPReadTimeout, by the handlers themselves, so that SSE streams
// and long calls are never cut by a read timeout.)
const ReadHeaderTimeout = 10 * time.Second

// Serve accepts HTTP connections on ln and serves h on them (usually
// StreamableHTTPHandler, SSEHandler or OpsHandler), until Shutdown. When a
// shutdown begins (after Options.DrainDelay), ln is closed, so that a
// balancer sends new connections elsewhere, and idle keep-alive
// connections are closed; requests already on a connection are served:
// new calls among them are refused, in-flight calls may finish within the
// grace period, the rest are cancelled and still get their response.
// Serve returns nil after that clean shutdown, or the error that ended
// accepting (ln is closed then too). A Serve that starts once a shutdown
// has begun serves nothing: it closes ln and returns http.ErrServerClosed.
//
// Connections idle longer than Options.HTTPIdleTimeout are closed, and a
// request's headers must arrive within ReadHeaderTimeout. Serve does not
// watch a context: a program links its signals to Shutdown, which ends
// every Serve and ServeStdio of the server.
func (s *Server) Serve(ln net.Listener, h http.Handler) error {
	if !s.ready() {
		ln.Close()
		return http.ErrServerClosed
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       s.opts.HTTPIdleTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-s.draining:
	}
	// No new connections from now on, and idle ones close: a balancer
	// sends new requests elsewhere (a refused connection is retried on
	// another replica; a request already sent is not). The requests in
	// flight, and the open streams, go on until the shutdown is over.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()
	err := <-errc // the listener is closed
	<-s.shutdownDone
	t := time.AfterFunc(time.Second, cancel)
	defer t.Stop()
	if <-shut != nil {
		_ = srv.Close() // streams still open a second after the shutdown
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type sseKey struct{}

// overSSE reports whether ctx is a call that came over legacy SSE, which
// cannot carry a server's question to the client.
func overSSE(ctx context.Context) bool {
	v, _ := ctx.Value(sseKey{}).(bool)
	return v
}

// demoted passes on a library's records below WARN at DEBUG.
type demoted struct{ h slog.Handler }

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, d.level(l))
}

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = d.level(r.Level)
	return d.h.Handle(ctx, r)
}

func (d demoted) WithAttrs(as []slog.Attr) slog.Handler { return demoted{d.h.WithAttrs(as)} }
func (d demoted) WithGroup(name string) slog.Handler    { return demoted{d.h.WithGroup(name)} }

func (demoted) level(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return min(l, slog.LevelDebug)
	}
	return l
}

// guard refuses what must not reach mcp-go: foreign origins, missing or
// wrong bearer tokens, over-size or slow bodies, malformed or ambiguous
// JSON-RPC frames, sessions past the bound, and sessions of another
// principal. It answers CORS preflights for the allowed origins.
type guard struct {
	origins     []string
	tokens      []string
	maxBytes    int64
	readTimeout time.Duration
	streamable  bool // the streamable HTTP transport (else legacy SSE)
	// sessionOf reads the session a request names.
	sessionOf func(*http.Request) string
	sessions  *sessionTable
	log       *slog.Logger
	oauth     *OAuth // nil: static bearer tokens, or none

	inFlight  atomic.Int64 // POST requests being served
	lastWrite atomic.Int64 // unix nanos of the last write on any stream

	// With a shared store (streamable HTTP): relay forwards answers to
	// other replicas, and hydrate brings a session another replica opened
	// into this one's engine.
	relay   *relay
	hydrate func(ctx context.Context, id string, rec sessionRecord, version string) error
	// tasks, when a tool has a task mode, answers the tasks/* methods.
	tasks *Server
	// fast answers plain calls itself (streamable HTTP; nil: none).
	fast *httpFast
}

// corsAllowHeaders are the request headers a browser client may send.
const corsAllowHeaders = "Content-Type, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"

func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// mcp-go checks the Host too, but only the requests that reach it:
		// the guard answers some itself (the fast path, tasks/*, answers
		// relayed to another replica).
		if rebinding(r) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		origin := r.Header.Get("Origin")
		if origin != "" && !originAllowed(origin, g.origins) {
			http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed", origin), http.StatusForbidden)
			return
		}
		if origin != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id")
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if g.oauth != nil {
			var ok bool
			if r, ok = g.oauth.authenticate(w, r, g.log); !ok {
				return
			}
		} else if len(g.tokens) > 0 && !bearerOK(r, g.tokens) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-tools"`)
			http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		id := g.sessionOf(r)
		auth := len(g.tokens) > 0 || g.oauth != nil
		sessionKnown := false
		// A session is only ever used by the principal that opened it: on
		// every method (mcp-go's GET stream and DELETE do not ask the
		// session manager first), and on both HTTP transports.
		if id != "" {
			owner, known, rec, err := g.sessions.lookup(r.Context(), id)
			if err != nil {
				g.storeDown(w, r, err)
				return
			}
			sessionKnown = known
			if (known && auth && owner != principalOf(r, true)) ||
				(!known && g.streamable && (r.Method == http.MethodDelete || r.Method == http.MethodGet)) {
				// (An unknown id too: mcp-go would open a GET stream for any
				// id it is given.)
				writeJSONRPCError(w, http.StatusNotFound, nil, mcp.INVALID_REQUEST, "no such session: it ended, or it never existed; initialize a new one")
				return
			}
			if g.sessions.store != nil {
				r = r.WithContext(context.WithValue(r.Context(), lookedUpKey{}, lookedUp{id: id, owner: owner, known: known}))
				if known && r.Method != http.MethodDelete && !g.sessions.isLocal(id) {
					if err := g.hydrate(r.Context(), id, rec, r.Header.Get(mcp.HeaderProtocolVersion)); err != nil {
						g.log.Warn("session opened on another replica not taken over; this request is served without its client's capabilities", "err", err)
					}
				}
			}
		}
		if r.Method == http.MethodGet && !g.streamable {
			// A legacy SSE stream is a session.
			res := g.reserve(w)
			if res == nil {
				return
			}
			defer res.consume()
			r = r.WithContext(context.WithValue(r.Context(), reservationKey{}, res))
			next.ServeHTTP(&streamWriter{ResponseWriter: w, last: &g.lastWrite}, r)
			return
		}
		if r.Method == http.MethodGet && g.streamable {
			if id == "" {
				// mcp-go makes a session of its own for a stream that names
				// none (boundSessions.Generate): it takes a place.
				res := g.reserve(w)
				if res == nil {
					return
				}
				defer res.consume()
				r = r.WithContext(context.WithValue(r.Context(), reservationKey{}, res))
			}
			next.ServeHTTP(g.writer(w), r)
			return
		}
		if r.Body == nil || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > g.maxBytes {
			writeTooLarge(w, g.maxBytes)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(g.readTimeout))
		body, err := readBody(r, g.maxBytes)
		if err != nil || int64(len(body)) > g.maxBytes {
			// The rest of the body is never read, and the connection
			// goes. Its deadline is now: net/http reads what is left of a
			// body (up to 256 KiB) once the handler returns, even on a
			// connection it closes, and a client that stopped sending
			// would hold the connection open for ever.
			_ = rc.SetReadDeadline(time.Now())
		} else {
			_ = rc.SetReadDeadline(time.Time{})
		}
		if err != nil {
			var ne net.Error
			// The rest of the body is never read: the connection goes.
			w.Header().Set("Connection", "close")
			if errors.As(err, &ne) && ne.Timeout() {
				writeJSONRPCError(w, http.StatusRequestTimeout, nil, mcp.INVALID_REQUEST,
					fmt.Sprintf("request timeout: the body was not read within %s", g.readTimeout))
				return
			}
			http.Error(w, "Bad Request: cannot read body", http.StatusBadRequest)
			return
		}
		if int64(len(body)) > g.maxBytes {
			writeTooLarge(w, g.maxBytes)
			return
		}
		f, bad := inspectFrame(body)
		if bad != nil {
			g.log.Warn("HTTP message refused", "reason", bad.msg)
			writeJSONRPCError(w, http.StatusBadRequest, bad.id, bad.code, bad.msg)
			return
		}
		if id != "" && !sessionKnown && (!g.streamable ||
			(f.method != string(mcp.MethodInitialize) && !f.modern && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)))) {
			// Answered as another principal's session is (mcp-go: "Invalid
			// session ID", 400 on legacy SSE, 404 in plain text on
			// streamable HTTP), so that no token learns which ids exist.
			writeJSONRPCError(w, http.StatusNotFound, nil, mcp.INVALID_REQUEST, "no such session: it ended, or it never existed; initialize a new one")
			return
		}
		if g.oauth != nil && f.method == string(mcp.MethodToolsCall) {
			if err := g.oauth.checkTool(r.Context(), f.tool); err != nil {
				g.oauth.refuse(w, err) // 403 insufficient_scope, naming the scopes
				return
			}
		}
		if g.streamable && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) && !f.modern {
			switch {
			case f.method == string(mcp.MethodInitialize):
				// The new session takes over the place when it is added
				// (boundSessions.Generate); else it is released here.
				res := g.reserve(w)
				if res == nil {
					return
				}
				defer res.consume()
				if g.sessions.store != nil {
					// The record is written before mcp-go answers, so that
					// the client's next request finds it on any replica.
					var init struct {
						Params json.RawMessage `json:"params"`
					}
					_ = json.Unmarshal(body, &init)
					res.id = "mcp-session-" + rand.Text()
					if err := g.sessions.createRecord(r.Context(), res.id, sessionRecord{Owner: principalOf(r, auth), Init: init.Params}); err != nil {
						g.storeDown(w, r, err)
						return
					}
				}
				r = r.WithContext(context.WithValue(r.Context(), reservationKey{}, res))
			case id == "":
				writeJSONRPCError(w, http.StatusBadRequest, f.id, mcp.INVALID_REQUEST,
					"bad request: the Mcp-Session-Id header is required after initialize")
				return
			}
		}
		modern := f.modern || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
		if g.tasks != nil && isTaskMethod(f.method) && g.streamable {
			g.answerTask(w, r, f, id, sessionKnown, modern, auth)
			return
		}
		g.inFlight.Add(1)
		defer g.inFlight.Add(-1)
		if g.fast != nil {
			// Before anything only mcp-go needs (the body to read again,
			// the writer in the context for progress): the fast path
			// reads neither, and takes no call that reports progress.
			if fs := g.fast.take(f, id, sessionKnown, r); fs != nil {
				g.fast.serve(g.writer(w), r, f, fs)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if g.relay != nil && f.response && id != "" && !f.modern && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			g.answer(w, r, next, id, body)
			return
		}
		sw := g.writer(w)
		if g.streamable {
			r = r.WithContext(context.WithValue(r.Context(), streamWriterKey{}, sw))
		}
		if g.fast != nil && f.method == string(mcp.MethodNotificationCancelled) && id != "" && sessionKnown {
			g.fast.cancel(id, body) // and mcp-go cancels the calls it runs
		}
		if g.tasks != nil && f.method == string(mcp.MethodToolsCall) && (f.task || g.tasks.taskModes[f.tool] != "") {
			// The reply of a call that becomes a task is swapped in here.
			next.ServeHTTP(&taskWriter{streamWriter: sw, s: g.tasks, modern: modern}, r)
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// reserve takes a --max-sessions place for a request that makes a session
// (an initialize, a legacy SSE stream, a stream that names no session), or
// answers 503 and returns nil. The session takes the place over when it is
// added; else the caller's consume hands it back.
func (g *guard) reserve(w http.ResponseWriter) *reservation {
	if !g.sessions.reserve() {
		g.tooManySessions(w)
		return nil
	}
	return &reservation{t: g.sessions}
}

// answerTask answers a tasks/* request (see taskproto.go): on a session
// the guard admitted, for the principal or session that asks.
func (g *guard) answerTask(w http.ResponseWriter, r *http.Request, f frame, session string, known, modern, auth bool) {
	if !modern && (session == "" || !known) {
		writeJSONRPCError(w, http.StatusNotFound, f.id, mcp.INVALID_REQUEST, "no such session: it ended, or it never existed; initialize a new one")
		return
	}
	if name := r.Header.Get(mcp.HeaderName); modern && name != "" && name != f.taskID {
		writeJSONRPCError(w, http.StatusBadRequest, f.id, mcp.HEADER_MISMATCH,
			fmt.Sprintf("header mismatch: %s is %q but params.taskId is %q", mcp.HeaderName, name, f.taskID))
		return
	}
	owner := principalOf(r, auth)
	if owner == "" && !modern {
		owner = "session:" + session
	}
	b, status := g.tasks.answerTask(r.Context(), taskCallOf(f, owner))
	switch {
	case b == nil && status == http.StatusAccepted:
		w.WriteHeader(status)
	case b != nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(append(b, '\n'))
	}
}

// writer wraps a streamable HTTP response (or the legacy SSE stream).
func (g *guard) writer(w http.ResponseWriter) *streamWriter {
	sw := &streamWriter{ResponseWriter: w, last: &g.lastWrite}
	if g.relay != nil {
		sw.tag = g.relay.tagAsk
	}
	return sw
}

// answer delivers a client's answer to a server request (an approval's
// elicitation/create): here when the question is this replica's, else
// through the relay to the replica that asked it.
func (g *guard) answer(w http.ResponseWriter, r *http.Request, next http.Handler, id string, body []byte) {
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	if asker, untagged, ok := untagAnswer(body); ok {
		// The id names the replica that asked (see fleet.go).
		if asker != g.relay.replica {
			if g.relay.forward(r.Context(), asker, id, version, untagged) {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			writeJSONRPCError(w, http.StatusNotFound, nil, mcp.INVALID_REQUEST, "no pending request has that id: the replica that asked is gone, or the question timed out")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(untagged))
		r.ContentLength = int64(len(untagged))
		next.ServeHTTP(w, r)
		return
	}
	if !g.relay.s.asking(id) {
		// No question of this session is pending here: straight to the
		// others (mcp-go would log an error for an answer it cannot place).
		if g.relay.forward(r.Context(), "", id, version, body) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeJSONRPCError(w, http.StatusNotFound, nil, mcp.INVALID_REQUEST, "no pending request of this session has that id, on any replica")
		return
	}
	rec := &recorded{header: http.Header{}}
	next.ServeHTTP(rec, r)
	if rec.status != http.StatusAccepted && g.relay.forward(r.Context(), "", id, version, body) {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}

// storeDown answers a request that needs the shared store when it cannot
// be reached: 503, to be retried.
func (g *guard) storeDown(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client is gone
	}
	g.log.Warn("HTTP request refused: the state store cannot be reached", "err", err)
	w.Header().Set("Retry-After", "1")
	writeJSONRPCError(w, http.StatusServiceUnavailable, nil, codeServerBusy,
		"service unavailable: the shared state store cannot be reached; retry in a moment")
}

func (g *guard) tooManySessions(w http.ResponseWriter) {
	g.log.Warn("HTTP session refused: too many sessions", "limit", g.sessions.max)
	w.Header().Set("Retry-After", "5")
	writeJSONRPCError(w, http.StatusServiceUnavailable, nil, codeServerBusy,
		fmt.Sprintf("server busy: %d sessions are open, the most this server allows (--max-sessions); retry later", g.sessions.max))
}

// settle waits, at most max, until no POST is being served and no stream
// has been written to for a moment: the responses of the last calls are
// out.
func (g *guard) settle(ctx context.Context, max time.Duration) {
	deadline := time.Now().Add(max)
	const quiet = 100 * time.Millisecond
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if g.inFlight.Load() == 0 && time.Since(time.Unix(0, g.lastWrite.Load())) >= quiet {
			return
		}
		time.Sleep(quiet / 4)
	}
}

// streamWriter notes the time of every write, so a shutdown can tell when
// the last responses are out. It keeps the Flusher a stream needs, and
// Unwrap gives http.ResponseController the connection.
type streamWriter struct {
	http.ResponseWriter
	last   *atomic.Int64
	writes atomic.Int64 // writes on this response
	// tag, in a fleet, makes the ids of server requests fleet-wide.
	tag func([]byte) []byte
}

type streamWriterKey struct{}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.last.Store(time.Now().UnixNano())
	w.writes.Add(1)
	if w.tag != nil {
		if out := w.tag(p); len(out) != len(p) {
			if _, err := w.ResponseWriter.Write(out); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return w.ResponseWriter.Write(p)
}

// awaitWrite waits, at most max, for a write on the response of the
// streamable HTTP request ctx belongs to, after the first `after` writes.
// mcp-go forwards a call's notifications from a goroutine that drops what
// it holds once the response is done: the last progress report of a call
// is waited for here, before the result ends the response.
func awaitWrite(ctx context.Context, after int64, max time.Duration) {
	w, ok := ctx.Value(streamWriterKey{}).(*streamWriter)
	if !ok {
		return
	}
	deadline := time.Now().Add(max)
	for w.writes.Load() <= after && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// writesSoFar returns how many writes the streamable HTTP response of ctx
// has had, or -1 when ctx has none.
func writesSoFar(ctx context.Context) int64 {
	if w, ok := ctx.Value(streamWriterKey{}).(*streamWriter); ok {
		return w.writes.Load()
	}
	return -1
}

func (w *streamWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeJSONRPCError answers with a JSON-RPC error and HTTP status.
func writeJSONRPCError(w http.ResponseWriter, status int, id jsontext.Value, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorResponse(&frameError{id: id, code: code, msg: msg}))
}

// readBody reads at most max+1 bytes of r's body, in one allocation when
// the request says its length (net/http ends the body there) and that
// length is at most bodyChunk. A longer body is held only as it arrives:
// a client that names a large length and sends nothing holds no more.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= min(max, bodyChunk) {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(max+1, bodyChunk)))
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, max+1)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// bodyChunk is the most readBody allocates before a body's bytes arrive.
const bodyChunk = 64 << 10

func writeTooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close") // the rest of the body is never read
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

// rebinding reports whether r came on a loopback connection but names a
// host that is not loopback: a page whose name was rebound to 127.0.0.1
// (DNS rebinding). It refuses what mcp-go's own check refuses.
func rebinding(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	var loopback bool
	if tcp, ok := local.(*net.TCPAddr); ok {
		loopback = tcp.IP.IsLoopback() // without String's two allocations per request
	} else {
		loopback = loopbackHost(local.String())
	}
	return loopback && !loopbackHost(r.Host)
}

// loopbackHost reports whether addr, a host or host:port, is loopback.
func loopbackHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// bearerOK reports whether r carries one of tokens. Every token is
// compared, in constant time, so the timing says nothing about which. An
// empty token matches nothing, even an empty entry of tokens.
func bearerOK(r *http.Request, tokens []string) bool {
	got, ok := bearer(r)
	if !ok || got == "" {
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
	if p, ok := oauthPrincipal(r.Context()); ok {
		return principalName(p)
	}
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

// sessionTable holds the open sessions of one HTTP transport, with the
// principal that opened each. It is bounded (reserve) and forgets a session
// as soon as it ends: unlike mcp-go's InsecureStatefulSessionIdManager, it
// keeps nothing of terminated sessions (an unknown id gets 404 alike).
//
// With a store (streamable HTTP with a shared state.Store), the session
// records live there, so every replica knows every session (fleet.go); the
// local map then holds the sessions this replica's mcp-go engine has, and
// the bound counts those.
type sessionTable struct {
	max   int // < 0: no bound
	store state.Store
	ttl   time.Duration // a record's idle timeout (<= 0: none)
	// onEnd runs when a principal ends a session (DELETE), with a store;
	// an error keeps the session.
	onEnd func(ctx context.Context, id string) error

	mu       sync.Mutex
	owners   map[string]string
	reserved int
}

// reserve takes a place for a session about to open, or reports false
// when the table is full. The place is released by release, whether or
// not the session was added.
func (t *sessionTable) reserve() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.max >= 0 && len(t.owners)+t.reserved >= t.max {
		return false
	}
	t.reserved++
	return true
}

func (t *sessionTable) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reserved--
}

// reservation is a place taken by reserve, released once. id, when set,
// is the session id already recorded in the store for the initialize
// that holds the place.
type reservation struct {
	t    *sessionTable
	done atomic.Bool
	id   string
}

func (r *reservation) consume() {
	if r.done.CompareAndSwap(false, true) {
		r.t.release()
	}
}

type reservationKey struct{}

// addReserved adds a session and, in the same step, gives back the place
// res held for it (if any), so that the session is never counted twice.
func (t *sessionTable) addReserved(id, principal string, res *reservation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owners == nil {
		t.owners = make(map[string]string)
	}
	t.owners[id] = principal
	if res != nil && res.done.CompareAndSwap(false, true) {
		t.reserved--
	}
}

// owner returns the principal that opened a session this replica has.
func (t *sessionTable) owner(id string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.owners[id]
	return p, ok
}

// isLocal reports whether this replica's engine has the session.
func (t *sessionTable) isLocal(id string) bool {
	_, ok := t.owner(id)
	return ok
}

// lookup returns a session's owner, from the store when there is one
// (renewing the session's idle timeout there), else from this replica.
func (t *sessionTable) lookup(ctx context.Context, id string) (owner string, known bool, rec sessionRecord, err error) {
	if t.store == nil {
		owner, known = t.owner(id)
		return owner, known, rec, nil
	}
	rec, known, err = t.lookupRecord(ctx, id)
	return rec.Owner, known, rec, err
}

func (t *sessionTable) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.owners, id)
}

// sessionResolver is the streamable HTTP transport's session id manager:
// random ids, each bound to the principal that opened it.
type sessionResolver struct {
	t    *sessionTable
	auth bool
}

func (r sessionResolver) ResolveSessionIdManager(req *http.Request) mcpserver.SessionIdManager {
	if req == nil {
		// mcp-go asks with no request when it ends sessions itself (idle,
		// or shutdown): that is the server, which may end any session.
		return boundSessions{t: r.t, any: true}
	}
	if in, ok := req.Context().Value(internalKey{}).(internalReq); ok {
		return boundSessions{t: r.t, any: true, internal: true, in: in}
	}
	res, _ := req.Context().Value(reservationKey{}).(*reservation)
	seen, _ := req.Context().Value(lookedUpKey{}).(lookedUp)
	return boundSessions{t: r.t, principal: principalOf(req, r.auth), res: res, seen: seen, ctx: req.Context()}
}

// lookedUp is the guard's lookup of the session a request names, kept in
// the request's context so that the session manager does not ask the
// store again.
type lookedUp struct {
	id, owner string
	known     bool
}

type lookedUpKey struct{}

type boundSessions struct {
	t         *sessionTable
	principal string
	any       bool         // the server's own view: every session is its
	internal  bool         // a request the server made itself
	in        internalReq  // what it carries
	res       *reservation // the initialize request's place, if any
	seen      lookedUp     // the guard's lookup, if it made one
	ctx       context.Context
}

func (b boundSessions) Generate() string {
	switch {
	case b.in.hydrate != "":
		b.t.addReserved(b.in.hydrate, b.in.owner, nil)
		return b.in.hydrate
	case b.res != nil && b.res.id != "":
		b.t.addReserved(b.res.id, b.principal, b.res)
		return b.res.id
	}
	id := "mcp-session-" + rand.Text()
	b.t.addReserved(id, b.principal, b.res)
	return id
}

// lookup finds a session: the guard's lookup when it made one, else the
// table's.
func (b boundSessions) lookup(id string) (owner string, known bool, err error) {
	if b.seen.id == id && id != "" {
		return b.seen.owner, b.seen.known, nil
	}
	ctx := b.ctx
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
	}
	owner, known, _, err = b.t.lookup(ctx, id)
	return owner, known, err
}

func (b boundSessions) Validate(id string) (bool, error) {
	owner, ok, err := b.lookup(id)
	if err != nil {
		return false, err
	}
	if !ok || (!b.any && owner != b.principal) {
		return false, errors.New("session not found")
	}
	return false, nil
}

func (b boundSessions) Terminate(id string) (bool, error) {
	if b.any && !b.internal && b.t.store != nil {
		// The server ends its own copy (idle here, or shutting down): the
		// session lives on in the fleet until a DELETE or its record's
		// idle timeout.
		b.t.remove(id)
		return false, nil
	}
	if !b.any {
		owner, ok, err := b.lookup(id)
		if err != nil {
			return false, err
		}
		if ok && owner != b.principal {
			return false, errors.New("session not found") // another principal's: not for them to see
		}
	}
	if b.t.store != nil && b.t.onEnd != nil {
		ctx := b.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		if err := b.t.onEnd(context.WithoutCancel(ctx), id); err != nil {
			return false, err
		}
	}
	b.t.remove(id)
	return false, nil
}
