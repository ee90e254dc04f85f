package server

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/tools"
)

// The stdio fast path: a tools/call is answered from the one strict read of
// its frame (inspectFrame), with no further decoding of the message: the
// tool's governed chain gets the arguments' bytes, and the result is
// encoded once, here. mcp-go stays the protocol engine for everything else
// (initialize, lists, pings, notifications, a person's answers) and for the
// calls this path leaves to it: one of protocol 2026-07-28 or later, one
// with parameters other than name, arguments and _meta, one for a tool the
// server does not have. A call on this path runs in mcp-go's stdio session,
// so progress, elicitation and cancellation behave as on mcp-go's path;
// it runs on a goroutine of its own (see workers; the session's limit,
// MaxInFlight, makes the ones past it wait), and its place among the
// outstanding calls (MaxQueuedCalls) is freed when it ends.

// fastPath serves one stdio session's fast calls.
type fastPath struct {
	s         *Server
	listenCtx context.Context
	w         io.Writer

	base atomic.Pointer[context.Context] // the session's context, once mcp-go registered it

	mu      sync.Mutex
	running map[string]context.CancelFunc // by idKey
	wg      sync.WaitGroup
	workers workers
}

func newFastPath(s *Server, listenCtx context.Context, w io.Writer) *fastPath {
	return &fastPath{s: s, listenCtx: listenCtx, w: w, running: map[string]context.CancelFunc{},
		workers: workers{jobs: make(chan func()), stop: make(chan struct{}), keep: maxStdioWorkers}}
}

// session returns the context the session's calls run in, or nil before
// mcp-go registered the session.
func (p *fastPath) session() context.Context {
	if c := p.base.Load(); c != nil {
		return *c
	}
	cs := p.s.stdioSession.Load()
	if cs == nil {
		return nil
	}
	c := p.s.mcp.WithContext(p.listenCtx, *cs)
	p.base.Store(&c)
	return c
}

// eligible reports whether f is a call this path answers.
func (p *fastPath) eligible(f frame) bool {
	if p == nil || f.method != string(mcp.MethodToolsCall) || f.id == nil || f.other != 0 || f.modern {
		return false
	}
	if _, ok := p.s.handlers[f.tool]; !ok {
		return false // mcp-go answers an unknown tool as it always has
	}
	if !metaDecodes(f.meta) {
		return false // mcp-go refuses it (a number past float64 in _meta)
	}
	return p.session() != nil
}

// start runs the eligible call f; done is called when it has ended, just
// before its answer is written (as mcp-go's calls are freed in
// stdioFilter.sent): a client that reads the answer may reuse the id, or
// send its next call at MaxQueuedCalls, at once.
func (p *fastPath) start(f frame, done func()) {
	h := p.s.handlers[f.tool]
	req := fastRequest(f)
	key := idKey(f.id)
	// Counted in flight now, as it is read: a shutdown that begins before
	// its goroutine runs (stdin closing right after it) still waits for it.
	if !p.s.calls.start() {
		p.respond(f.id, shuttingDown())
		done()
		return
	}
	ctx, cancel := context.WithCancel(context.WithValue(p.session(), trackedKey{}, true))
	p.mu.Lock()
	p.running[key] = cancel
	p.mu.Unlock()
	if p.s.opts.Telemetry != nil {
		recordRequestID(ctx, rawRequestID(f.id), &req)
	}
	p.wg.Add(1)
	p.workers.run(func() {
		defer p.wg.Done()
		defer p.s.calls.done() // after the answer: a shutdown waits for it
		ended := false         // end runs once: after the handler, or on its panic
		end := func() {
			if ended {
				return
			}
			ended = true
			p.mu.Lock()
			delete(p.running, key)
			p.mu.Unlock()
			cancel()
			done()
		}
		defer end()
		answered := false
		defer func() {
			if !answered { // the tool called runtime.Goexit: the call still gets its answer
				end()
				p.respond(f.id, render(tools.Outcome{Err: internalError(f.tool)}, 0))
			}
		}()
		res, _ := h(ctx, req) // the handler never returns an error: failures are results
		answered = true
		end()
		p.respond(f.id, res)
	})
}

// cancel cancels the fast call with key (an idKey), if there is one.
func (p *fastPath) cancel(key string) {
	if p == nil || key == "" {
		return
	}
	p.mu.Lock()
	c := p.running[key]
	p.mu.Unlock()
	if c != nil {
		c()
	}
}

// wait waits for the fast calls still running, and then ends the idle
// workers and waits for them.
func (p *fastPath) wait() {
	if p != nil {
		p.wg.Wait()
		close(p.workers.stop)
		p.workers.wg.Wait()
	}
}

// workers runs jobs on goroutines that outlive a job. A new goroutine's
// stack starts small and is grown, by copying, on each call's way down the
// governed chain: under load that was a fifth of the server's CPU. A
// worker's stack stays grown until the collector shrinks an idle one,
// which happens at most once per GC cycle. A job starts at once: on a
// waiting worker if there is one, else on a new one; at most keep workers
// wait, and they end when stop is closed (wait for them with wg).
type workers struct {
	jobs chan func() // unbuffered: a send reaches a worker that promised to take it
	stop chan struct{}
	keep int32
	// idle counts the workers that promised to take a job from jobs: a
	// worker adds itself before it waits, and run takes one promise
	// before it sends, so the send always finds its receiver.
	idle atomic.Int32
	wg   sync.WaitGroup
}

// run starts job.
func (w *workers) run(job func()) {
	for n := w.idle.Load(); n > 0; n = w.idle.Load() {
		if w.idle.CompareAndSwap(n, n-1) {
			select {
			case w.jobs <- job:
				return
			case <-w.stop: // the workers are ending: the job gets its own
			}
			break
		}
	}
	w.wg.Add(1)
	go w.loop(job)
}

func (w *workers) loop(job func()) {
	defer w.wg.Done()
	for {
		job()
		for {
			n := w.idle.Load()
			if n >= w.keep {
				return // enough workers wait
			}
			if w.idle.CompareAndSwap(n, n+1) {
				break
			}
		}
		select {
		case job = <-w.jobs:
		case <-w.stop:
			return
		}
	}
}

var responseHead = []byte(`{"jsonrpc":"2.0","id":`)

// respond writes the response to the call with the raw id, encoded once.
// It goes through the session's writer, so a cancelled call's response is
// dropped as on mcp-go's path.
func (p *fastPath) respond(id []byte, res *mcp.CallToolResult) {
	_, _ = p.w.Write(encodeResponse(id, res))
}

// metaDecodes reports whether params._meta, as the frame copied it (nil
// when absent), decodes as mcp-go decodes it: one that does not (a number
// past float64 anywhere in it) makes mcp-go refuse the whole call as
// unparsable, where fastRequest would drop the _meta and run the call.
func metaDecodes(meta []byte) bool {
	if len(meta) == 0 {
		return true
	}
	var m mcp.Meta
	return json.Unmarshal(meta, &m) == nil
}

// fastRequest is the CallToolRequest a fast path hands a tool's handler,
// made from the frame's parts: its arguments' bytes as they came.
func fastRequest(f frame) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Method = string(mcp.MethodToolsCall)
	req.Params.Name = f.tool
	req.Params.RawArguments = f.args
	if len(f.meta) > 0 {
		var m mcp.Meta
		if json.Unmarshal(f.meta, &m) == nil {
			req.Params.Meta = &m
		}
	}
	return req
}

// encodeResponse is the JSON-RPC response, one line, to the call with the
// raw id: the result encoded once.
func encodeResponse(id []byte, res *mcp.CallToolResult) []byte {
	msg := make([]byte, 0, len(responseHead)+len(id)+textResultSize(res)+64)
	msg = append(msg, responseHead...)
	msg = append(msg, id...)
	msg = append(msg, `,"result":`...)
	if out, ok := appendTextResult(msg, res); ok {
		return append(out, "}\n"...)
	}
	body, err := json.Marshal(res)
	if err != nil {
		body = []byte(`{"content":[{"type":"text","text":"Error: internal error: the result cannot be encoded"}],"isError":true}`)
	}
	msg = append(msg, body...)
	return append(msg, "}\n"...)
}

// appendTextResult appends res as mcp-go encodes it, when res is the
// common shape (text content only, no structured content, no _meta), and
// reports whether it did. mcp-go's MarshalJSON goes through a map and an
// []any for every result; this writes the same bytes directly: the members
// in the map's (sorted) order, each text as encoding/json quotes it (the
// standard one: built with GOEXPERIMENT=jsonv2, encoding/json writes
// invalid UTF-8 as a raw U+FFFD where this writes \ufffd, the same JSON
// string). Any other shape is left to json.Marshal.
func appendTextResult(dst []byte, res *mcp.CallToolResult) ([]byte, bool) {
	if res == nil || len(res.Content) == 0 || res.Meta != nil || res.ResultType != "" ||
		len(res.RawStructuredContent) > 0 || res.StructuredContent != nil ||
		len(res.InputRequests) > 0 || res.RequestState != "" {
		return dst, false
	}
	dst = append(dst, `{"content":[`...)
	for i, c := range res.Content {
		t, ok := c.(mcp.TextContent)
		if !ok || t.Annotations != nil || t.Meta != nil {
			return dst, false
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":`...)
		dst = appendQuoted(dst, t.Type)
		dst = append(dst, `,"text":`...)
		dst = appendQuoted(dst, t.Text)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if res.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), true
}

// textResultSize is about the size of res's text, to size a buffer.
func textResultSize(res *mcp.CallToolResult) int {
	n := 0
	if res != nil {
		for _, c := range res.Content {
			if t, ok := c.(mcp.TextContent); ok {
				n += len(t.Text) + 32
			}
		}
	}
	return n
}

// appendQuoted appends s quoted as encoding/json quotes a string (HTML
// characters, U+2028 and U+2029 escaped; invalid UTF-8 replaced), the
// way mcp-go's path writes it.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// stdioSessionRef holds the stdio session mcp-go registers, for the fast
// path's calls to run in.
type stdioSessionRef = atomic.Pointer[mcpserver.ClientSession]

// stdioSessionID is the id of mcp-go's stdio session.
const stdioSessionID = "stdio"
