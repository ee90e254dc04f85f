package server

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/tools"
)

// The streamable HTTP fast path: as on stdio (fastpath.go), a plain
// tools/call of a session this replica's mcp-go engine holds is answered
// from the guard's one strict read of the frame, in the session's mcp-go
// context, with the result encoded once. mcp-go's handlePost would decode
// the body twice more (a probe for its shape, then the request) and wrap
// the call in a goroutine that forwards notifications; a plain call needs
// none of it. mcp-go still answers every call this path leaves to it: one
// that may talk back to the client while it runs (a gated tool, which may
// ask a person; a call with a progress token; a tool with a task mode),
// one with parameters besides name, arguments and _meta, one of protocol
// 2026-07-28, one whose headers mcp-go would refuse, and, once per quarter
// of the session idle timeout, one call of each session, so that mcp-go's
// own idle clock (which only its handler can reset) sees the session in
// use.

// httpFast is one server's streamable HTTP fast path.
type httpFast struct {
	s     *Server
	auth  bool
	every time.Duration // how often a session's call goes to mcp-go (its idle clock); 0: never needed

	sessions sync.Map // session id -> *fastSession, for sessions mcp-go registered
	// running holds the calls being served, by session id and idKey, for
	// notifications/cancelled (mcp-go's table of calls in flight does not
	// have them).
	running sync.Map // string -> *fastCall
}

// fastCall is a call the fast path is serving.
type fastCall struct{ cancel context.CancelFunc }

// cancel cancels the call of session that a notifications/cancelled
// message names, if the fast path is serving it.
func (f *httpFast) cancel(session string, msg []byte) {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil || len(n.Params.RequestID) == 0 {
		return
	}
	if c, ok := f.running.Load(session + "\x00" + idKey(n.Params.RequestID)); ok {
		c.(*fastCall).cancel()
	}
}

// fastSession is a session mcp-go holds, as the fast path knows it.
type fastSession struct {
	cs       mcpserver.ClientSession
	lastSlow atomic.Int64 // unix nanos of its last call answered by mcp-go
}

func newHTTPFast(s *Server, auth bool) *httpFast {
	f := &httpFast{s: s, auth: auth}
	if t := s.opts.SessionIdleTimeout; t > 0 {
		f.every = t / 4
	}
	return f
}

// registered and unregistered follow mcp-go's sessions (its hooks).
func (f *httpFast) registered(cs mcpserver.ClientSession) {
	if id := cs.SessionID(); id != "" && id != stdioSessionID {
		fs := &fastSession{cs: cs}
		fs.lastSlow.Store(time.Now().UnixNano())
		f.sessions.Store(id, fs)
	}
}

func (f *httpFast) unregistered(id string) { f.sessions.Delete(id) }

// take returns the session to answer fr in, or nil when mcp-go must.
// known is the guard's word that the session exists (in a fleet, that its
// record is in the store): a session this engine still holds but the
// fleet has ended is mcp-go's to refuse.
func (f *httpFast) take(fr frame, session string, known bool, r *http.Request) *fastSession {
	if !known || fr.method != string(mcp.MethodToolsCall) || fr.id == nil || fr.other != 0 || fr.modern || fr.task || session == "" {
		return nil
	}
	if fr.progress || !metaDecodes(fr.meta) {
		return nil
	}
	if _, ok := f.s.handlers[fr.tool]; !ok || f.s.talksBack[fr.tool] {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil
	}
	if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && (!mcp.IsValidProtocolVersion(v) || mcp.IsModernProtocol(v)) {
		return nil
	}
	v, ok := f.sessions.Load(session)
	if !ok {
		return nil
	}
	fs := v.(*fastSession)
	if f.every > 0 {
		now := time.Now().UnixNano()
		if last := fs.lastSlow.Load(); now-last > int64(f.every) && fs.lastSlow.CompareAndSwap(last, now) {
			return nil // this one resets mcp-go's idle clock
		}
	}
	return fs
}

// serve answers fr, a call take admitted.
func (f *httpFast) serve(w http.ResponseWriter, r *http.Request, fr frame, fs *fastSession) {
	h := f.s.handlers[fr.tool]
	req := fastRequest(fr)
	req.Header = r.Header
	ctx, cancel := context.WithCancel(f.s.mcp.WithContext(withPrincipal(r.Context(), principalOf(r, f.auth)), fs.cs))
	defer cancel()
	key, c := fs.cs.SessionID()+"\x00"+idKey(fr.id), &fastCall{cancel}
	f.running.Store(key, c)
	defer f.running.CompareAndDelete(key, c)
	if f.s.opts.Telemetry != nil {
		recordRequestID(ctx, rawRequestID(fr.id), &req)
	}
	answered := false
	defer func() {
		if answered {
			return
		}
		// The chain panicked outside the tool's own recovery (logged here:
		// net/http's log is discarded), or the tool called runtime.Goexit:
		// then this goroutine ends and net/http closes the connection
		// without finishing the response, so the answer is written whole,
		// with its length, flushed first, and says the connection ends (a
		// client would otherwise send its next request on it).
		p := recover()
		if p != nil {
			f.s.log.Warn("tool call panicked outside its tool", "tool", fr.tool, "panic", panicText(p), "stack", string(debug.Stack()))
		}
		msg := encodeResponse(fr.id, render(tools.Outcome{Err: internalError(fr.tool)}, 0))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
		if p == nil {
			w.Header().Set("Connection", "close")
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(msg)
		if p == nil {
			_ = http.NewResponseController(w).Flush()
		}
	}()
	res, _ := h(ctx, req) // the handler never returns an error: failures are results
	answered = true
	if ctx.Err() != nil && r.Context().Err() != nil {
		return // the client is gone
	}
	msg := encodeResponse(fr.id, res)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(msg)
}
