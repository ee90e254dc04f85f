package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/tools"
)

// DefaultCallTimeout bounds a call when neither Options.CallTimeout nor the
// tool's own options say otherwise.
const DefaultCallTimeout = 60 * time.Second

// ToolOptions are per-tool governance settings. The zero value adds no
// limit and keeps the server-wide timeout.
//
// They are a tool's Limits as the operator sets them: each non-zero field
// overrides the tool's own (tools.Info.Limits), field by field.
type ToolOptions = tools.Limits

// limitsFor merges a tool's own limits with the operator's for it.
func (s *Server) limitsFor(info tools.Info) tools.Limits {
	l := info.Limits
	o := s.opts.Tools[info.Name]
	if o.Timeout != 0 {
		l.Timeout = o.Timeout
	}
	if o.MaxConcurrency != 0 {
		l.MaxConcurrency = o.MaxConcurrency
	}
	if o.Rate != 0 {
		l.Rate, l.Burst = o.Rate, o.Burst
	}
	return l
}

// budgetKey is whose budget a call spends: the bearer token's, when tokens
// are in use (a new session does not reset it), else the session's.
func budgetKey(ctx context.Context) string {
	if p := principalFrom(ctx); p != "" {
		return p
	}
	if s, ok := tools.SessionFrom(ctx); ok {
		return "session:" + s.ID
	}
	return "session:"
}

// budgetMiddleware refuses calls past the per-session budget. It sits after
// validation, so a refused call does not count. For a gated tool it leaves
// the charge to the approval middleware, which knows whether the call is the
// retry of one already charged (a state it verified for this exact call) or
// a call of its own; a made-up, replayed or foreign state is charged like
// any call, or refused before anything runs.
func (s *Server) budgetMiddleware(gated bool) tools.Middleware {
	return func(info tools.Info, next tools.Func) tools.Func {
		if s.opts.MaxCallsPerSession <= 0 {
			return next
		}
		name := info.Name
		return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
			if _, resumed := resumeFrom(ctx, name); resumed {
				return next(ctx, args) // the first call of this composite was charged
			}
			if gated {
				return next(context.WithValue(ctx, chargeKey{}, name), args)
			}
			if err := s.charge(ctx); err != nil {
				return tools.Result{}, err
			}
			return next(ctx, args)
		}
	}
}

type chargeKey struct{}

// chargeLater reports whether the budget middleware left tool's charge to
// the approval middleware.
func chargeLater(ctx context.Context, tool string) bool {
	name, _ := ctx.Value(chargeKey{}).(string)
	return name != "" && name == tool
}

// charge spends one call of the caller's budget, in the store: exact
// across replicas. A session's counter lives while the session is used (it
// goes when the session ends); a token's has no end.
func (s *Server) charge(ctx context.Context) error {
	who := budgetKey(ctx)
	var ttl time.Duration
	if strings.HasPrefix(who, "session:") {
		ttl = sessionBudgetTTL
	}
	ok, err := s.store.Take(ctx, "budget:"+who, int64(s.opts.MaxCallsPerSession), ttl)
	switch {
	case err != nil && ctx.Err() != nil:
		return &tools.Error{Kind: tools.KindCancelled, Message: "the call was cancelled", Err: err}
	case err != nil:
		return unavailable("the call budget cannot be checked", err)
	case !ok:
		return &tools.Error{Kind: tools.KindBudgetExhausted,
			Message: fmt.Sprintf("tool call budget of %d calls exhausted for this session", s.opts.MaxCallsPerSession)}
	}
	return nil
}

// waitSlot takes a place in sem, waiting while ctx lives.
func waitSlot(ctx context.Context, sem chan struct{}, what string) error {
	select {
	case sem <- struct{}{}:
		return nil
	default:
	}
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &tools.Error{Kind: tools.KindCancelled, Message: "the call was cancelled while waiting for " + what, Err: ctx.Err()}
	}
}

// globalLimitMiddleware bounds the calls running at once across the
// server. It sits after approval: a person's thinking time holds no place.
func (s *Server) globalLimitMiddleware(_ tools.Info, next tools.Func) tools.Func {
	if s.global == nil {
		return next
	}
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		if err := waitSlot(ctx, s.global, "a free place (server-wide limit)"); err != nil {
			return tools.Result{}, err
		}
		defer func() { <-s.global }()
		return next(ctx, args)
	}
}

// toolLimitMiddleware applies a tool's own concurrency bound and rate. The
// limiter is made here, once per tool, and shared by every chain the
// returned middleware wraps. With a shared store the rate is the fleet's
// (every replica draws on one limiter in the store); the concurrency bound
// is always this replica's.
func (s *Server) toolLimitMiddleware(info tools.Info) tools.Middleware {
	o := s.limitsFor(info)
	var sem chan struct{}
	if o.MaxConcurrency > 0 {
		sem = make(chan struct{}, o.MaxConcurrency)
	}
	var lim waiter
	switch {
	case o.Rate > 0 && s.shared:
		lim = sharedRate{store: s.store, key: "rate:" + info.Name, rate: o.Rate, burst: max(o.Burst, 1)}
	case o.Rate > 0:
		lim = rate.NewLimiter(rate.Limit(o.Rate), max(o.Burst, 1))
	}
	return func(_ tools.Info, next tools.Func) tools.Func {
		if sem == nil && lim == nil {
			return next
		}
		return limited(info, o, sem, lim, next)
	}
}

// waiter waits for a rate limiter's permission.
type waiter interface {
	Wait(ctx context.Context) error
}

// sharedRate is a rate limiter in the store, one for the whole fleet.
type sharedRate struct {
	store state.Store
	key   string
	rate  float64
	burst int
}

// Wait asks the store until the event is allowed, sleeping as long as it
// says between asks.
func (r sharedRate) Wait(ctx context.Context) error {
	for {
		wait, err := r.store.Allow(ctx, r.key, r.rate, r.burst)
		if err != nil {
			return err
		}
		if wait <= 0 {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

func limited(info tools.Info, o ToolOptions, sem chan struct{}, lim waiter, next tools.Func) tools.Func {
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		if sem != nil {
			if err := waitSlot(ctx, sem, fmt.Sprintf("a free place (%q runs at most %d at once)", info.Name, o.MaxConcurrency)); err != nil {
				return tools.Result{}, err
			}
			defer func() { <-sem }()
		}
		if lim != nil {
			if err := lim.Wait(ctx); err != nil {
				if storeErr(err) && ctx.Err() == nil {
					return tools.Result{}, unavailable(fmt.Sprintf("%q's shared rate limit cannot be checked", info.Name), err)
				}
				return tools.Result{}, &tools.Error{Kind: tools.KindCancelled, Message: fmt.Sprintf("the call was cancelled while waiting for %q's rate limit", info.Name), Err: err}
			}
		}
		return next(ctx, args)
	}
}

// timeoutFor is the time a call of info may take, or 0 for no bound.
func (s *Server) timeoutFor(info tools.Info) time.Duration {
	d := s.opts.CallTimeout
	if t := s.limitsFor(info).Timeout; t != 0 {
		d = t
	}
	if d < 0 {
		return 0
	}
	return d
}

// timeoutMiddleware bounds the call: its context ends at the deadline, and
// a call that fails after the deadline is reported as timed out. The tool
// runs on the caller's goroutine (the tools.Tool contract asks every tool to
// return when its context is done; remote tools kill their process group,
// HTTP tools abort the request), so no goroutine is added per call.
func (s *Server) timeoutMiddleware(info tools.Info, next tools.Func) tools.Func {
	d := s.timeoutFor(info)
	if d == 0 {
		return next
	}
	name := info.Name
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		ctx, cancel := context.WithTimeoutCause(ctx, d, errTimedOut)
		defer cancel()
		res, err := next(ctx, args)
		if err != nil && errors.Is(context.Cause(ctx), errTimedOut) {
			return tools.Result{}, &tools.Error{Kind: tools.KindTimeout, Message: fmt.Sprintf("tool %q timed out after %s", name, d), Err: err}
		}
		return res, err
	}
}

var errTimedOut = errors.New("call timed out")
