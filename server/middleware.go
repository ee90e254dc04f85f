package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// recoverMiddleware turns a panic into an internal error. The panic value
// and stack go to the log at WARN, never to the client. A call of
// runtime.Goexit cannot be stopped: it is logged at ERROR, and the
// goroutine ends. The fast paths (fastPath.start, httpFast.serve), mcp-go's
// stdio calls (callApart), Server.Call (localTransport.handle) and a task's
// run still answer the call with an internal error; mcp-go's HTTP paths
// leave it unanswered.
func (s *Server) recoverMiddleware(info tools.Info, next tools.Func) tools.Func {
	name := info.Name
	return func(ctx context.Context, args json.RawMessage) (res tools.Result, err error) {
		returned := false
		defer func() {
			if p := recover(); p != nil {
				s.log.Warn("tool panicked", "tool", name, "panic", panicText(p), "stack", string(debug.Stack()))
				res, err = tools.Result{}, internalError(name)
			} else if !returned {
				s.log.Error("tool called runtime.Goexit: its goroutine ends (stdio, the HTTP fast path, Call and tasks answer the call with an internal error; mcp-go's HTTP paths cannot)", "tool", name, "stack", string(debug.Stack()))
			}
		}()
		res, err = next(ctx, args)
		returned = true
		return res, err
	}
}

// internalError is the error of a call whose tool panicked (or ended its
// goroutine): the details are in the log, never in the result.
func internalError(name string) *tools.Error {
	return &tools.Error{Kind: tools.KindInternal, Message: fmt.Sprintf("internal error in tool %q", name)}
}

// panicTextWait bounds how long panicText waits for a panic value's String
// or Error method.
const panicTextWait = time.Second

// panicText renders a tool's panic value for the log. Its String or Error
// method is the tool's code, run on a goroutine of its own: one that
// panics (fmt catches one panic, but lets go of a second met while
// printing the first, which would end the process) or does not return
// within panicTextWait is given up on, and the value's type is named
// instead. A method that never returns keeps its goroutine.
func panicText(p any) string {
	done := make(chan string, 1)
	go func() {
		defer func() {
			if recover() != nil {
				done <- fmt.Sprintf("a %T whose String or Error method panicked", p)
			}
		}()
		done <- fmt.Sprint(p)
	}()
	t := time.NewTimer(panicTextWait)
	defer t.Stop()
	select {
	case text := <-done:
		return text
	case <-t.C:
		return fmt.Sprintf("a %T whose String or Error method did not return within %s", p, panicTextWait)
	}
}

// outcomeMiddleware settles a call's outcome before it is logged, counted
// and rendered: a failure that came from the call's context ending is
// "cancelled"; a result over Options.MaxResultBytes becomes a
// result_too_large error. Structured content is encoded here, once.
func (s *Server) outcomeMiddleware(_ tools.Info, next tools.Func) tools.Func {
	limit := s.opts.MaxResultBytes
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		res, err := next(ctx, args)
		if err != nil {
			if tools.IsSuspended(err) { // waiting for the client, or a task
				return res, err
			}
			if te := tools.AsError(err); te.Kind == tools.KindExecutionFailed && ctx.Err() != nil {
				return tools.Result{}, &tools.Error{Kind: tools.KindCancelled, Message: "the call was cancelled", Err: te}
			}
			return res, err
		}
		size := len(res.Text)
		if res.Structured != nil {
			if _, encoded := res.Structured.(json.RawMessage); !encoded {
				b, err := json.Marshal(res.Structured)
				if err != nil {
					return tools.Result{}, &tools.Error{Kind: tools.KindInternal, Message: "internal error: the structured result cannot be encoded as JSON", Err: err}
				}
				res.Structured = json.RawMessage(b)
			}
			size += len(res.Structured.(json.RawMessage))
		}
		if limit > 0 && size > limit {
			return tools.Result{}, tooLarge(size, limit)
		}
		return res, nil
	}
}

// logMiddleware logs one line per call: INFO on success, WARN on failure,
// DEBUG with input and output up to ten times LogTruncate. Secret fields are redacted at every
// level. Nothing is formatted when the level is off.
func (s *Server) logMiddleware(info tools.Info, next tools.Func) tools.Func {
	name := info.Name
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		if !s.log.Enabled(ctx, slog.LevelWarn) {
			return next(ctx, args)
		}
		start := time.Now()
		res, err := next(ctx, args)
		d := time.Since(start)
		var pending *inputRequired
		if errors.As(err, &pending) {
			if s.log.Enabled(ctx, slog.LevelInfo) {
				s.log.LogAttrs(ctx, slog.LevelInfo, fmt.Sprintf("%s(%s) -> waiting for approval", name, tools.ShowArgsN(info, args, s.opts.LogTruncate)),
					slog.String("tool", name))
			}
			return res, err
		}
		var created *taskCreated
		if errors.As(err, &created) {
			if s.log.Enabled(ctx, slog.LevelInfo) {
				s.log.LogAttrs(ctx, slog.LevelInfo, fmt.Sprintf("%s(%s) -> task %s started", name, tools.ShowArgsN(info, args, s.opts.LogTruncate), created.rec.ID),
					slog.String("tool", name), slog.String("task", created.rec.ID), principalAttr(ctx))
			}
			return res, err
		}
		out := tools.Settle(res, err)
		if out.Err == nil && !s.log.Enabled(ctx, slog.LevelInfo) {
			return res, err
		}
		// The arguments are read no further than each line shows them.
		in := tools.ShowArgsN(info, args, s.opts.LogTruncate)
		who := principalAttr(ctx)
		if out.Err != nil {
			s.log.LogAttrs(ctx, slog.LevelWarn, name+"("+in+") -> Error: "+tools.Truncate(out.Err.Message, s.opts.LogTruncate),
				slog.String("tool", name), slog.String("kind", string(out.Err.Kind)), slog.Duration("duration", d), who)
		} else {
			s.log.LogAttrs(ctx, slog.LevelInfo, name+"("+in+") -> "+tools.Truncate(out.Text, s.opts.LogTruncate),
				slog.String("tool", name), slog.Duration("duration", d), who)
		}
		if s.log.Enabled(ctx, slog.LevelDebug) {
			text := out.Text
			if out.Err != nil {
				text = "Error: " + out.Err.Message
			}
			s.log.LogAttrs(ctx, slog.LevelDebug, "call detail", slog.String("tool", name), slog.String("input", tools.ShowArgsN(info, args, debugTruncate*s.opts.LogTruncate)), slog.String("output", tools.Truncate(text, debugTruncate*s.opts.LogTruncate)))
		}
		return res, err
	}
}

// principalAttr names who made the call (the token's subject, or a digest
// of a static token), or is an empty attribute, which handlers drop.
func principalAttr(ctx context.Context) slog.Attr {
	if sess, ok := tools.SessionFrom(ctx); ok && sess.Principal != "" {
		return slog.String("principal", sess.Principal)
	}
	return slog.Attr{}
}

// debugTruncate is how many times LogTruncate the DEBUG detail line shows:
// more than INFO, but never a whole megabyte.
const debugTruncate = 10

// validateMiddleware checks the arguments against the compiled schema; the
// tool never sees arguments that break it. It reads the bytes the tool will
// read, never a transport's decoding of them: mcp-go reads numbers as
// float64, which rounds (2^53+1 reads as 2^53, under a maximum the bytes are
// over; 0e700 reads as 0, past the literal limits), so validating its value
// let arguments the schema refuses reach the tool.
func validateMiddleware(v *schema.Validator) tools.Middleware {
	return func(_ tools.Info, next tools.Func) tools.Func {
		return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
			if err := v.Validate(args); err != nil {
				return tools.Result{}, err
			}
			return next(ctx, args)
		}
	}
}

// sessionLimits bounds the calls in flight per session. A sync.Map: every
// call reads it, from many goroutines, and sessions rarely come and go.
type sessionLimits struct {
	max int
	sem sync.Map // session id -> chan struct{}
}

func (l *sessionLimits) get(id string) chan struct{} {
	if c, ok := l.sem.Load(id); ok {
		return c.(chan struct{})
	}
	c, _ := l.sem.LoadOrStore(id, make(chan struct{}, l.max))
	return c.(chan struct{})
}

func (l *sessionLimits) forget(id string) { l.sem.Delete(id) }

// limitMiddleware makes a session's calls beyond MaxInFlight wait for a
// free place (or for their context to end).
func (s *Server) limitMiddleware(_ tools.Info, next tools.Func) tools.Func {
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		if _, task := ctx.Value(taskWantKey{}).(*taskWant); task {
			// A call that becomes a task is created at once; its work,
			// in the background, takes the session's place (the task
			// chain has this middleware too, without the request).
			return next(ctx, args)
		}
		id := ""
		if cs := mcpserver.ClientSessionFromContext(ctx); cs != nil {
			id = cs.SessionID()
		}
		sem := s.limits.get(id)
		select {
		case sem <- struct{}{}: // the usual case: a free place, no waiting
		default:
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return tools.Result{}, &tools.Error{Kind: tools.KindCancelled, Message: "the call was cancelled while waiting for a free slot", Err: ctx.Err()}
			}
		}
		defer func() { <-sem }()
		return next(ctx, args)
	}
}
