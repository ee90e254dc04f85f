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
	"regexp"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// stdio worker pool bounds set by mcp-go.
const (
	maxStdioWorkers = 100
	stdioQueueSize  = 10000
)

// ServeStdio serves the tools on in and out, one JSON-RPC message per line,
// until in ends or ctx is done. When ctx is done it shuts down: new calls are
// refused, in-flight calls may finish within the grace period, then the rest
// are cancelled.
//
// A line longer than Options.MaxMessageBytes is refused with a JSON-RPC
// error (code -32600) and skipped; the next line is served as usual.
//
// mcp-go keeps one process-wide stdio session, so only one ServeStdio may run
// in a process at a time.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out}
	cancelled := &cancelledSet{}
	w.drop = cancelled.takeResponse
	workers := min(s.opts.MaxInFlight, maxStdioWorkers)
	stdio := mcpserver.NewStdioServer(s.mcp)
	stdio.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelWarn))
	mcpserver.WithWorkerPoolSize(workers)(stdio)
	mcpserver.WithQueueSize(stdioQueueSize)(stdio)

	// Calls run on contexts derived from hardStop, which Shutdown cancels
	// once the grace period is over; listening stops after the shutdown.
	listenCtx, stopListen := context.WithCancel(s.hardStop)
	defer stopListen()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			s.log.Info("shutting down", "reason", context.Cause(ctx))
			s.Shutdown(context.Background())
			stopListen()
		case <-done:
		}
	}()

	lines := &lineLimiter{r: bufio.NewReaderSize(in, 64<<10), max: int(s.opts.MaxMessageBytes), onOversize: func(prefix []byte, size int) {
		s.log.Warn("stdio message refused: too large", "bytes_at_least", size, "limit", s.opts.MaxMessageBytes)
		writeOversizeError(w, prefix, s.opts.MaxMessageBytes)
	}, onLine: cancelled.observe}
	err := stdio.Listen(listenCtx, lines, w)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// lockedWriter makes each Write atomic, so the messages that mcp-go writes
// and the errors this package writes never interleave. A message for which
// drop reports true is not written.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	drop func([]byte) bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.drop != nil && l.drop(p) {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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

var cancelledMarker = []byte(`"notifications/cancelled"`)

// observe records the request id of a notifications/cancelled line.
func (c *cancelledSet) observe(line []byte) {
	if !bytes.Contains(line, cancelledMarker) {
		return
	}
	var n struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || n.Method != "notifications/cancelled" || len(n.Params.RequestID) == 0 {
		return
	}
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
	c.ids[string(n.Params.RequestID)] = struct{}{}
	c.n.Store(int32(len(c.ids)))
}

// takeResponse reports whether msg is the response to a cancelled request,
// forgetting the request if so.
func (c *cancelledSet) takeResponse(msg []byte) bool {
	if c.n.Load() == 0 {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ids[string(m.ID)]; !ok {
		return false
	}
	delete(c.ids, string(m.ID))
	c.n.Store(int32(len(c.ids)))
	return true
}

// lineLimiter passes lines through whole, and drops (reporting it) any line
// longer than max bytes, reading it in pieces so memory stays bounded.
type lineLimiter struct {
	r          *bufio.Reader
	max        int
	onOversize func(prefix []byte, size int)
	onLine     func(line []byte) // sees every line that is passed on
	line       []byte            // the current line, being assembled or handed out
	pending    []byte            // what is left of line to hand out
	err        error
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
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
	var prefix []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		size += len(chunk)
		if !over {
			if size > l.max+1 { // +1: the newline is not part of the message
				over = true
				prefix = append([]byte(nil), firstBytes(append(l.line, chunk...), 256)...)
				l.line = l.line[:0]
			} else {
				l.line = append(l.line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over {
			l.onOversize(prefix, size)
			if err != nil {
				l.err = err
			}
			return
		}
		l.pending = l.line
		if l.onLine != nil {
			l.onLine(l.line)
		}
		if err != nil {
			l.err = err
		}
		return
	}
}

func firstBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

var idRE = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)`)

// writeOversizeError answers an over-long message, with its id when the id
// can be read from the start of the line.
func writeOversizeError(w io.Writer, prefix []byte, limit int64) {
	var id any
	if m := idRE.FindSubmatch(prefix); m != nil {
		var v any
		if json.Unmarshal(m[1], &v) == nil {
			id = v
		}
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
