package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// stdio worker pool bounds. mcp-go runs a call on its read loop when its
// queue is full; the queue is made larger than any number of calls the
// filter lets through, so that never happens.
const (
	maxStdioWorkers = 100
	// DefaultMaxQueuedCalls bounds the tools/call requests a stdio client
	// may have outstanding (running or waiting for a worker).
	DefaultMaxQueuedCalls = 1024
)

// ServeStdio serves the tools on in and out, one JSON-RPC message per line,
// until in ends, out breaks, ctx is done, or a Shutdown is over. When ctx
// is done it shuts down: new calls are refused, in-flight calls may finish
// within the grace period, then the rest are cancelled; a Shutdown called
// elsewhere does the same, and ServeStdio returns nil when it is over. When
// in ends, every call already read, running or still waiting for a worker,
// is run and finishes the same way (the grace period counted from the end
// of in), each answered. A write
// to out that fails (the client closed its end) ends the session at once,
// and ServeStdio returns nil.
//
// Every line is read strictly before mcp-go sees it (see inspectFrame): a
// malformed or ambiguous message, a request before initialize, or a
// tools/call past Options.MaxQueuedCalls outstanding calls gets an
// immediate JSON-RPC error, so pings, cancellations and a person's answers
// are always read. A line longer than Options.MaxMessageBytes is refused
// with a JSON-RPC error (code -32600) and skipped.
//
// A program that serves stdout should catch SIGPIPE (signal.Notify), as
// cmd/mcp-tools does: otherwise the first write to a closed stdout kills the
// process before any of this can happen.
//
// mcp-go keeps one process-wide stdio session, so only one ServeStdio may run
// in a process at a time.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, endSession := context.WithCancelCause(ctx)
	defer endSession(nil)
	in, restore := pollable(in)
	defer restore()
	cancelled := &cancelledSet{}
	filter := &stdioFilter{max: s.opts.MaxQueuedCalls, cancelled: cancelled}
	w := &lockedWriter{w: out, sent: filter.sent, broken: func(err error) {
		s.log.Warn("stdout is closed; ending the session", "err", err)
		endSession(errOutputClosed)
	}}
	filter.w = w
	stopWatch := watchHangup(out, func() {
		s.log.Warn("stdout is closed; ending the session", "err", "the client closed its end")
		endSession(errOutputClosed)
	})
	defer stopWatch()
	s.stdioOut.Store(w)
	defer s.stdioOut.CompareAndSwap(w, nil)
	if s.tasks != nil {
		w.rewrite = func(p []byte) []byte {
			if s.taskReplies.Load() == 0 {
				return p
			}
			out, ok := rewriteTaskReply(p)
			if ok {
				s.taskReplies.Add(-1)
			}
			return out
		}
	}
	workers := min(s.opts.MaxInFlight, maxStdioWorkers)
	stdio := mcpserver.NewStdioServer(s.mcp)
	stdio.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelWarn))
	mcpserver.WithWorkerPoolSize(workers)(stdio)
	mcpserver.WithQueueSize(s.opts.MaxQueuedCalls + workers)(stdio)

	// Calls run on contexts derived from hardStop, which Shutdown cancels
	// once the grace period is over; listening stops after the shutdown.
	listenCtx, stopListen := context.WithCancel(s.hardStop)
	defer stopListen()
	filter.fast = newFastPath(s, listenCtx, w)
	var answering sync.WaitGroup // tasks/* requests being answered
	if s.tasks != nil {
		filter.tasks = func(fr frame, done func()) {
			answering.Go(func() {
				defer done()
				b, _ := s.answerTask(listenCtx, taskCallOf(fr, "session:"+stdioSessionID))
				if b != nil {
					_, _ = w.writeOwn(append(b, '\n'))
				}
			})
		}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			cause := context.Cause(ctx)
			s.log.Info("shutting down", "reason", cause)
			if errors.Is(cause, errOutputClosed) {
				s.stopNow()
			} else {
				_ = s.Shutdown(context.Background())
			}
			stopListen()
		case <-done:
		}
	}()

	// finish finishes the calls read when the input ends, as at a
	// shutdown, each answered, within the grace period counted from the
	// end: before mcp-go sees the end, since it then cancels every call it
	// runs and may drop those still waiting in its pool. First the calls
	// mcp-go took (running or waiting for one of its workers) are let run
	// and answered, as no new call can come; only then does the shutdown
	// begin, which would refuse those not yet started. mcpGo is false when
	// mcp-go's Listen is over, and no call it took will be answered.
	finish := func(mcpGo bool) {
		if ctx.Err() != nil || listenCtx.Err() != nil { // a shutdown, not the end of the input
			return
		}
		s.log.Info("stdin closed; finishing the calls in flight")
		grace, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
		defer cancel()
		if mcpGo {
			select {
			case <-filter.slowDone():
			case <-grace.Done():
			case <-ctx.Done():
			case <-listenCtx.Done():
			}
		}
		_ = s.Shutdown(grace)                // what is left of the grace period
		_ = s.Shutdown(context.Background()) // and the end of the shutdown
	}
	lines := &lineLimiter{r: bufio.NewReaderSize(in, 64<<10), max: int(s.opts.MaxMessageBytes), onEOF: func() { finish(true) }, onOversize: func(prefix []byte, size int) {
		s.log.Warn("stdio message refused: too large", "bytes_at_least", size, "limit", s.opts.MaxMessageBytes)
		writeOversizeError(ownWriter{w}, prefix, s.opts.MaxMessageBytes)
	}, onLine: func(line []byte) bool {
		keep, refused := filter.admit(line)
		if refused != nil {
			s.log.Warn("stdio message refused", "reason", refused.msg)
			_, _ = w.writeOwn(errorResponse(refused)) // frees no call's place
		}
		return keep
	}}
	err := stdio.Listen(listenCtx, lines, w)
	// A call mcp-go took and did not answer (at a shutdown it drops those
	// still waiting for a worker) is answered here: it was not run.
	for _, id := range filter.unanswered() {
		_, _ = w.Write(encodeResponse(id, shuttingDown()))
	}
	// Input ended (or the session is stopping): the calls finish within
	// the grace period, as at a shutdown, and each is answered; none is
	// dropped because stdin closed first. (At the end of the input, this
	// happened before mcp-go saw it; here for any other read error.)
	finish(false)
	filter.fast.wait()
	stopListen() // a tasks/result still waiting ends here
	answering.Wait()
	w.settle(time.Second) // a response handed to another goroutine's write is out

	if errors.Is(err, context.Canceled) || errors.Is(context.Cause(ctx), errOutputClosed) {
		err = nil
	}
	return err
}

// errOutputClosed ends a stdio session whose output can no longer be
// written.
var errOutputClosed = errors.New("stdout closed by the client")

// stdioFilter decides, line by line, what mcp-go's stdio loop gets to see.
type stdioFilter struct {
	w         *lockedWriter
	max       int
	cancelled *cancelledSet
	fast      *fastPath // nil: every call goes to mcp-go
	// tasks answers a tasks/* request (nil: mcp-go answers them), and
	// then calls done.
	tasks func(fr frame, done func())
	// taskReqs counts the tasks/* requests being answered: with the calls,
	// at most max (a tasks/result waits until its task ends).
	taskReqs atomic.Int32

	initialized atomic.Bool
	mu          sync.Mutex
	// pending holds the outstanding tools/call requests by normalised id
	// (see idKey): the raw id of a call mcp-go runs (freed when its
	// response is written, or when it is cancelled, since mcp-go may then
	// write nothing), nil for one the fast path runs (freed when it ends).
	pending map[string][]byte
	n       atomic.Int32 // len(pending)
	// slow counts the calls mcp-go runs among pending; slowIdle, made by
	// slowDone, is closed when it reaches 0.
	slow     int
	slowIdle chan struct{}
}

// admit reports whether line goes on to mcp-go, or the error to answer
// instead. A call the fast path takes goes nowhere: it is answered there.
func (f *stdioFilter) admit(line []byte) (bool, *frameError) {
	if len(bytes.TrimSpace(line)) == 0 {
		return false, nil
	}
	fr, bad := inspectFrame(line)
	if bad != nil {
		return false, bad
	}
	switch {
	case fr.response:
		return true, nil // a person's answer, or any reply: always read
	case fr.method == string(mcp.MethodNotificationCancelled):
		id := f.cancelled.observe(line)
		f.fast.cancel(id)
		f.forgetSlow(id)
		return true, nil
	case fr.method == string(mcp.MethodInitialize) && fr.id != nil:
		f.initialized.Store(true)
		return true, nil
	case !f.initialized.Load() && fr.isRequest() && fr.method != string(mcp.MethodPing):
		return false, &frameError{id: fr.id, code: mcp.INVALID_REQUEST,
			msg: fmt.Sprintf("the session is not initialized: send initialize before %s", fr.method)}
	case isTaskMethod(fr.method) && f.tasks != nil:
		// tasks/cancel is always read, as a cancellation is: it frees
		// places, and is answered at once.
		if int(f.taskReqs.Add(1))+int(f.n.Load()) > f.max && fr.method != "tasks/cancel" {
			f.taskReqs.Add(-1)
			return false, &frameError{id: fr.id, code: codeServerBusy,
				msg: fmt.Sprintf("server busy: %d calls and task requests are already outstanding on this session; retry when some have finished", f.max)}
		}
		f.tasks(fr, func() { f.taskReqs.Add(-1) })
		return false, nil
	case fr.method == string(mcp.MethodToolsCall) && fr.id != nil:
		fast := f.fast.eligible(fr)
		if refused := f.track(fr, !fast); refused != nil {
			return false, refused
		}
		if fast {
			key := idKey(fr.id)
			f.fast.start(fr, func() { f.release(key) })
			return false, nil
		}
		return true, nil
	}
	return true, nil
}

// track records an outstanding call, or refuses it past the bound, or
// when its id is that of a call still running.
func (f *stdioFilter) track(fr frame, slow bool) *frameError {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == nil {
		f.pending = make(map[string][]byte)
	}
	key := idKey(fr.id)
	if slow && strings.HasPrefix(key, "?") {
		// A number past float64's range: mcp-go cannot read it, and
		// answers with a null id, which would never free the call's place.
		return &frameError{id: fr.id, code: mcp.INVALID_REQUEST, msg: "invalid request: the id is a number too large to read; use a smaller number or a string"}
	}
	if _, dup := f.pending[key]; dup {
		return &frameError{id: fr.id, code: mcp.INVALID_REQUEST, msg: "invalid request: a request with this id is still in progress"}
	}
	if len(f.pending)+int(f.taskReqs.Load()) >= f.max {
		return &frameError{id: fr.id, code: codeServerBusy,
			msg: fmt.Sprintf("server busy: %d calls are already outstanding on this session; retry when some have finished", f.max)}
	}
	var id []byte // nil: a fast call
	if slow {
		id = bytes.Clone(fr.id) // fr.id is in the line, which is reused
		f.slow++
	}
	f.pending[key] = id
	f.n.Store(int32(len(f.pending)))
	return nil
}

// release frees the place of the call with key.
func (f *stdioFilter) release(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remove(key)
}

// remove frees the place of the call with key; f.mu is held.
func (f *stdioFilter) remove(key string) {
	id, ok := f.pending[key]
	if !ok {
		return
	}
	delete(f.pending, key)
	f.n.Store(int32(len(f.pending)))
	if id != nil {
		f.slow--
		if f.slow == 0 && f.slowIdle != nil {
			close(f.slowIdle)
			f.slowIdle = nil
		}
	}
}

// slowDone returns a channel closed when no call mcp-go runs is
// outstanding: each was answered, or cancelled by the client.
func (f *stdioFilter) slowDone() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.slow == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if f.slowIdle == nil {
		f.slowIdle = make(chan struct{})
	}
	return f.slowIdle
}

// unanswered returns the raw ids of the calls mcp-go took and has not
// answered: once its Listen has returned, it never will.
func (f *stdioFilter) unanswered() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids [][]byte
	for _, id := range f.pending {
		if id != nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// forgetSlow frees the place of a call mcp-go runs, by key.
func (f *stdioFilter) forgetSlow(key string) {
	if key == "" || f.n.Load() == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.pending[key]; ok && id != nil {
		f.remove(key)
	}
}

// sent sees every message written to the client, except the filter's own
// refusals, before it is written, and reports whether to drop it: the
// response to a cancelled request is not sent (the MCP specification asks
// so); the response to a call mcp-go ran frees its place.
func (f *stdioFilter) sent(msg []byte) (drop bool) {
	if f.n.Load() == 0 && f.cancelled.n.Load() == 0 {
		return false
	}
	id, ok := responseID(msg)
	if !ok {
		return false
	}
	key := idKey([]byte(id))
	f.forgetSlow(key)
	return f.cancelled.take(key)
}

// idKey is a request id as mcp-go reads it, whatever its spelling: 1.0
// and 1 are one id, and so are "a&b" and "a\u0026b".
func idKey(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "s" + s
		}
		return "s" + string(raw)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return "n" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "?" + string(raw)
}

// responsePrefix is how mcp-go starts every response it writes.
var responsePrefix = []byte(`{"jsonrpc":"2.0","id":`)

// responseID returns the id of msg when it is a response (no method). The
// usual shape is read without decoding; anything else is decoded.
func responseID(msg []byte) (string, bool) {
	if rest, ok := bytes.CutPrefix(msg, responsePrefix); ok {
		if end := bytes.IndexByte(rest, ','); end > 0 && !bytes.ContainsAny(rest[:end], `"\\{[`) {
			if after := rest[end+1:]; bytes.HasPrefix(after, []byte(`"result"`)) || bytes.HasPrefix(after, []byte(`"error"`)) {
				return string(rest[:end]), true // a number id
			}
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return "", false
	}
	return string(m.ID), true
}

// codeServerBusy is the JSON-RPC error code of a call refused because too
// many are outstanding (in the range JSON-RPC leaves to servers).
const codeServerBusy = -32000

// lockedWriter makes each Write atomic, so the messages that mcp-go writes
// and the errors this package writes never interleave. A message for which
// sent reports true is not written. The first write that fails calls
// broken; later writes fail at once.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	sent func([]byte) bool
	// rewrite, when set, may replace a message before it is written (a
	// call that became a task).
	rewrite func([]byte) []byte
	broken  func(error)
	err     error
	// pending holds what was written while another goroutine's write was
	// in progress (writing); spare is the buffer it last used.
	pending, spare []byte
	writing        bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.sent != nil && l.sent(p) {
		return len(p), nil
	}
	if l.rewrite != nil {
		if _, err := l.writeOwn(l.rewrite(p)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return l.writeOwn(p)
}

// settle waits, at most max, until no write is in progress: a message
// written while another goroutine was writing leaves with that goroutine's
// next write, which may outlive the goroutine that wrote it.
func (l *lockedWriter) settle(max time.Duration) {
	deadline := time.Now().Add(max)
	for {
		l.mu.Lock()
		busy := l.writing || len(l.pending) > 0
		l.mu.Unlock()
		if !busy || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// ownWriter writes through writeOwn.
type ownWriter struct{ l *lockedWriter }

func (o ownWriter) Write(p []byte) (int, error) { return o.l.writeOwn(p) }

// writeOwn writes p without showing it to sent: the filter's own
// refusals, which belong to no tracked call.
func (l *lockedWriter) writeOwn(p []byte) (int, error) {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return 0, l.err
	}
	l.pending = append(l.pending, p...)
	if l.writing {
		// The goroutine writing now takes this message along when its
		// write returns: many responses ready at once leave in one write.
		l.mu.Unlock()
		return len(p), nil
	}
	l.writing = true
	for len(l.pending) > 0 && l.err == nil {
		buf := l.pending
		l.pending = l.spare[:0]
		l.mu.Unlock()
		_, err := l.w.Write(buf)
		l.mu.Lock()
		l.spare = buf[:0]
		if err != nil {
			l.err = err
			l.pending = nil
			if l.broken != nil {
				go l.broken(err)
			}
		}
	}
	l.writing = false
	err := l.err
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// cancelledSet remembers the ids of requests the client cancelled, so that
// no response is sent for them, as the MCP specification asks.
type cancelledSet struct {
	mu  sync.Mutex
	ids map[string]struct{}
	n   atomic.Int32 // len(ids), read without the lock on the hot path
}

// maxCancelled bounds the set; a cancelled call whose response never comes
// would otherwise stay in it forever.
const maxCancelled = 1024

// observe records the request id of a notifications/cancelled line, and
// returns it ("" when the line names none).
func (c *cancelledSet) observe(line []byte) string {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || len(n.Params.RequestID) == 0 {
		return ""
	}
	id := idKey(n.Params.RequestID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = make(map[string]struct{})
	}
	if len(c.ids) >= maxCancelled {
		for k := range c.ids { // drop one, not the lot
			delete(c.ids, k)
			break
		}
	}
	c.ids[id] = struct{}{}
	c.n.Store(int32(len(c.ids)))
	return id
}

// take reports whether id is that of a cancelled request, forgetting it if
// so.
func (c *cancelledSet) take(id string) bool {
	if c.n.Load() == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ids[id]; !ok {
		return false
	}
	delete(c.ids, id)
	c.n.Store(int32(len(c.ids)))
	return true
}

// lineLimiter passes lines through whole, and drops (reporting it) any line
// longer than max bytes, reading it in pieces so memory stays bounded.
type lineLimiter struct {
	r          *bufio.Reader
	max        int
	onOversize func(prefix []byte, size int)
	onLine     func(line []byte) bool // sees every line; false drops it
	onEOF      func()                 // called before the end of the input is passed on
	line       []byte                 // the current line, being assembled or handed out
	pending    []byte                 // what is left of line to hand out
	err        error
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			if errors.Is(l.err, io.EOF) && l.onEOF != nil {
				l.onEOF()
				l.onEOF = nil
			}
			return 0, l.err
		}
		l.next()
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// next reads one line into pending, or drops it when it is too long.
func (l *lineLimiter) next() {
	l.line = l.line[:0]
	size := 0
	over := false
	var top skeleton
	for {
		chunk, err := l.r.ReadSlice('\n')
		size += len(chunk)
		if !over {
			// The line's end ("\n" or "\r\n") is not part of the message;
			// a line not yet whole has at least its "\n" to come.
			msg := size - 1
			if !errors.Is(err, bufio.ErrBufferFull) {
				msg = size - lineEnd(l.line, chunk)
			}
			if msg > l.max {
				over = true
				top.write(l.line)
				l.line = l.line[:0]
			} else {
				l.line = append(l.line, chunk...)
			}
		}
		if over {
			top.write(chunk)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over {
			l.onOversize(top.b, size)
			if err != nil {
				l.err = err
			}
			return
		}
		if l.onLine == nil || l.onLine(l.line) {
			if err != nil && len(l.line) > 0 && l.line[len(l.line)-1] != '\n' {
				// The last line, with no newline to end it: mcp-go drops
				// such a line, so it gets one.
				l.line = append(l.line, '\n')
			}
			l.pending = l.line
		}
		if err != nil {
			l.err = err
		}
		return
	}
}

// lineEnd is the length of the "\n" or "\r\n" that ends the line whose
// last chunk is chunk (0 at the end of the input without one).
func lineEnd(line, chunk []byte) int {
	if !bytes.HasSuffix(chunk, []byte("\n")) {
		return 0
	}
	if bytes.HasSuffix(chunk, []byte("\r\n")) || (len(chunk) == 1 && bytes.HasSuffix(line, []byte("\r"))) {
		return 2
	}
	return 1
}

// skeleton keeps, in bounded memory, what an over-long line says at its
// top level, so that its id can be read wherever it is (the TypeScript SDK
// writes it last): each value nested deeper is written 0, each top-level
// string longer than maxSkeletonString null; past maxSkeleton bytes, the
// rest is dropped.
type skeleton struct {
	b          []byte
	depth      int
	inStr, esc bool
	long       bool // the top-level string being read is too long to keep
	strAt      int  // where in b that string starts
}

const (
	maxSkeleton       = 4096
	maxSkeletonString = 256
)

func (s *skeleton) write(p []byte) {
	for _, c := range p {
		if len(s.b) > maxSkeleton {
			return
		}
		top := s.depth <= 1
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
			}
			if !top {
				continue
			}
			if !s.long {
				s.b = append(s.b, c)
				s.long = len(s.b)-s.strAt > maxSkeletonString
			}
			if !s.inStr && s.long {
				s.b = append(s.b[:s.strAt], "null"...)
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			if top {
				s.strAt, s.long = len(s.b), false
				s.b = append(s.b, c)
			}
		case '{', '[':
			s.depth++
			switch s.depth {
			case 1:
				s.b = append(s.b, c)
			case 2:
				s.b = append(s.b, '0')
			}
		case '}', ']':
			if s.depth == 1 {
				s.b = append(s.b, c)
			}
			s.depth = max(s.depth-1, 0)
		default:
			if top {
				s.b = append(s.b, c)
			}
		}
	}
}

// oversizeID is the id of an over-long message from what is known of it
// (its skeleton, or its first bytes): the value of its one top-level "id",
// when read whole, as it came (as inspectFrame errors name it); nil
// otherwise. A search for "id" anywhere took one nested in params, or the
// "1" of 1.5.
func oversizeID(prefix []byte) json.RawMessage {
	d := lenientDecoder(prefix)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	var id json.RawMessage
	for {
		name, err := d.ReadToken()
		if err != nil || name.Kind() != '"' {
			return id // the end of the object, or of what is known of it
		}
		if name.String() != "id" {
			if d.SkipValue() != nil {
				return id
			}
			continue
		}
		v, err := d.ReadValue()
		switch {
		case err != nil, id != nil, !v.IsValid(): // cut short, or a second id
			return nil
		case v.Kind() == '"':
			id = json.RawMessage(v.Clone())
		case v.Kind() == '0' && int(d.InputOffset()) < len(prefix): // not cut short
			id = json.RawMessage(v.Clone())
		default:
			return nil
		}
	}
}

// writeOversizeError answers an over-long message, with its id when the id
// can be read from the start of the line.
func writeOversizeError(w io.Writer, prefix []byte, limit int64) {
	var id any
	if raw := oversizeID(prefix); raw != nil {
		id = raw
	}
	resp := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: mcp.JSONRPC_VERSION, ID: id}
	resp.Error.Code = mcp.INVALID_REQUEST
	resp.Error.Message = fmt.Sprintf("message too large: the limit is %d bytes", limit)
	b, _ := json.Marshal(resp)
	var buf bytes.Buffer
	buf.Write(b)
	buf.WriteByte('\n')
	_, _ = w.Write(buf.Bytes())
}
