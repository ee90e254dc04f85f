package server

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
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
	return p.session() != nil
}

// start runs the eligible call f; done is called when it has ended and
// been answered.
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
		var id any
		_ = json.Unmarshal(f.id, &id)
		recordRequestID(ctx, id, &req)
	}
	p.wg.Add(1)
	p.workers.run(func() {
		defer p.wg.Done()
		defer done()
		defer p.s.calls.done()
		defer func() {
			p.mu.Lock()
			delete(p.running, key)
			p.mu.Unlock()
			cancel()
		}()
		res, _ := h(ctx, req) // the handler never returns an error: failures are results
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
// workers.
func (p *fastPath) wait() {
	if p != nil {
		p.wg.Wait()
		close(p.workers.stop)
	}
}

// workers runs jobs on goroutines that outlive a job. A new goroutine's
// stack starts small and is grown, by copying, on each call's way down the
// governed chain: under load that was a fifth of the server's CPU. A
// worker's stack stays grown. A job starts at once: on an idle worker if
// one is waiting, else on a new one; at most keep workers wait idle, and
// they end when stop is closed.
type workers struct {
	jobs chan func() // unbuffered: a send succeeds only to a waiting worker
	stop chan struct{}
	keep int32
	idle atomic.Int32
}

// run starts job.
func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		go w.loop(job)
	}
}

func (w *workers) loop(job func()) {
	for {
		job()
		if w.idle.Add(1) > w.keep {
			w.idle.Add(-1)
			return
		}
		select {
		case job = <-w.jobs:
			w.idle.Add(-1)
		case <-w.stop:
			w.idle.Add(-1)
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
	body, err := json.Marshal(res)
	if err != nil {
		body = []byte(`{"content":[{"type":"text","text":"Error: internal error: the result cannot be encoded"}],"isError":true}`)
	}
	msg := make([]byte, 0, len(responseHead)+len(id)+len(body)+12)
	msg = append(msg, responseHead...)
	msg = append(msg, id...)
	msg = append(msg, `,"result":`...)
	msg = append(msg, body...)
	return append(msg, "}\n"...)
}

// stdioSessionRef holds the stdio session mcp-go registers, for the fast
// path's calls to run in.
type stdioSessionRef = atomic.Pointer[mcpserver.ClientSession]

// stdioSessionID is the id of mcp-go's stdio session.
const stdioSessionID = "stdio"
