package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// approvalInputID keys the approval question in a multi round-trip input
// request.
const approvalInputID = "approval"

// DefaultHeartbeat is how often a call waiting for a person reports
// progress, when the client asked for progress.
const DefaultHeartbeat = 10 * time.Second

// inputRequired is returned through the chain by a call that must ask the
// client for input first (the multi round-trip pattern); the handler sends
// result as it is.
type inputRequired struct {
	result *mcp.CallToolResult
	// state and params, when state is set, are what result was built
	// from, so that a composite can wrap the state in its own.
	state  string
	params mcp.ElicitationParams
}

// withState returns the same question with another request state.
func (p *inputRequired) withState(state string) *inputRequired {
	b := mcpserver.NewInputRequestBuilder(state).Elicit(approvalInputID, p.params)
	return &inputRequired{result: b.ToolResult(), state: state, params: p.params}
}

func (*inputRequired) Error() string { return "input required" }

// Suspended marks inputRequired as a tools.Suspended: the call waits for
// the client's answer, it did not fail.
func (*inputRequired) Suspended() {}

type roundTripKey struct{}

// roundTripFrom returns the multi round-trip answer a retried call carries.
func roundTripFrom(ctx context.Context) (mcp.MultiRoundTripParams, bool) {
	p, ok := ctx.Value(roundTripKey{}).(mcp.MultiRoundTripParams)
	return p, ok && p.RequestState != ""
}

// approvals is the server's side of approval gates.
type approvals struct {
	policy    approval.Policy
	heartbeat time.Duration
	signer    *approval.Signer
}

// bindingFor binds a state to the call: the session (or, without one, the
// authenticated principal), the tool and the arguments.
func bindingFor(ctx context.Context, tool string, args json.RawMessage) approval.Binding {
	s, _ := tools.SessionFrom(ctx)
	who := s.ID
	if who == "" {
		who = s.Principal
	}
	return approval.Binding{Session: who, Tool: tool, Args: args}
}

// approvalMiddleware gates info's calls when the policy (or the tool itself)
// says so. What the person sees and how their answer is read is the approval
// package's; how the question travels is decided here:
//
//   - a client on protocol 2026-07-28 or later gets an input_required
//     result carrying the question and a signed state, and retries with the
//     answer;
//   - an older client that declared elicitation is asked with
//     elicitation/create, while the call waits (with progress heartbeats,
//     the approval timeout, and cancellation);
//   - any other client gets the policy's fallback: deny, allow or webhook.
func (s *Server) approvalMiddleware(info tools.Info, gated bool, v *schema.Validator) tools.Middleware {
	return func(_ tools.Info, next tools.Func) tools.Func {
		if !gated {
			return next
		}
		name := info.Name
		return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
			sess, _ := tools.SessionFrom(ctx)
			start := time.Now()
			// charge spends the budget for a call that was not charged
			// before: every call but the verified retry of one that asked.
			charge := func() error {
				if chargeLater(ctx, name) {
					return s.charge(ctx)
				}
				return nil
			}
			if _, resumed := resumeFrom(ctx, name); resumed {
				// A composite resumed at one of its steps was approved by
				// its first call; the retry's answer is for that step.
				return next(ctx, args)
			}
			remembered, err := s.remembered(ctx, sess.ID, name)
			if err != nil {
				return tools.Result{}, err
			}
			if remembered {
				if err := charge(); err != nil {
					return tools.Result{}, err
				}
				s.logDecision(ctx, name, approval.Outcome{Decision: approval.Approve, By: "remembered"}, start)
				return next(ctx, args)
			}
			form, err := approval.NewForm(info, args)
			if err != nil {
				return tools.Result{}, fmt.Errorf("approval form: %w", err)
			}
			var out approval.Outcome
			if rt, ok := roundTripFrom(ctx); ok {
				out, err = s.resume(ctx, name, args, form, rt, v)
				if err != nil {
					return tools.Result{}, err
				}
				// The answer is spent: the layers inside (a composite's
				// steps) must not read it as theirs.
				ctx = withoutRoundTrip(ctx)
			} else {
				if err := charge(); err != nil {
					return tools.Result{}, err
				}
				var pending *inputRequired
				out, pending, err = s.ask(ctx, info, args, form, v)
				if pending != nil {
					return tools.Result{}, pending
				}
				if err != nil {
					return tools.Result{}, err
				}
			}
			s.logDecision(ctx, name, out, start)
			switch out.Decision {
			case approval.Approve, approval.Edit:
				if out.Remember && sess.ID != "" {
					// Best effort: a store that fails here costs the
					// person one more question, never a call.
					if err := s.store.Set(ctx, rememberKey(sess.ID, name), []byte{1}, rememberTTL); err != nil {
						s.log.Warn("approval not remembered: the state store cannot be reached", "tool", name, "err", err)
					}
				}
				runArgs := args
				if out.Decision == approval.Edit {
					runArgs = out.Args
				}
				return next(ctx, runArgs)
			default:
				return tools.Result{}, &tools.Error{Kind: tools.KindApprovalDenied, Message: out.Reason}
			}
		}
	}
}

// rememberKey is where "approved for the rest of session" is kept.
func rememberKey(session, tool string) string { return "approved:" + session + ":" + tool }

// remembered reports whether a person approved tool for the rest of the
// session. A store that cannot be reached is an error, not a question:
// asking again would be safe, but budgets and states need the store too.
func (s *Server) remembered(ctx context.Context, session, tool string) (bool, error) {
	if session == "" {
		return false, nil
	}
	_, err := s.store.Get(ctx, rememberKey(session, tool), 0)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, state.ErrNotFound):
		return false, nil
	case ctx.Err() != nil:
		return false, &tools.Error{Kind: tools.KindCancelled, Message: "the call was cancelled", Err: err}
	default:
		return false, unavailable("remembered approvals cannot be read", err)
	}
}

// forgetSession drops what the store keeps for a session that ended: its
// budget and its remembered approvals.
func (s *Server) forgetSession(ctx context.Context, id string) {
	keys := []string{"budget:session:" + id}
	for _, name := range s.gatedNames {
		keys = append(keys, rememberKey(id, name))
	}
	if err := s.store.Delete(ctx, keys...); err != nil {
		s.log.Warn("the state of an ended session was not dropped; it expires on its own", "err", err)
	}
}

// resume reads the answer a modern client sent back with its retry.
func (s *Server) resume(ctx context.Context, name string, args json.RawMessage, form approval.Form, rt mcp.MultiRoundTripParams, v *schema.Validator) (approval.Outcome, error) {
	if err := s.approvals.signer.Verify(ctx, rt.RequestState, bindingFor(ctx, name, args)); err != nil {
		if storeErr(err) {
			return approval.Outcome{}, unavailable("the approval answer cannot be checked", err)
		}
		if errors.Is(err, approval.ErrExpired) {
			// Never the on-timeout decision: a late answer and a replayed
			// old state look the same, and neither may run the tool.
			return approval.Outcome{Decision: approval.Reject, By: "timeout", Reason: fmt.Sprintf("Rejected: the answer came after the %s approval time limit; the tool did not run", s.approvals.policy.Timeout)}, nil
		}
		return approval.Outcome{Decision: approval.Reject, By: "state", Reason: fmt.Sprintf("Rejected: the approval answer was refused (%v); the tool did not run", err)}, nil
	}
	ans := elicitationAnswer(rt.InputResponses, approvalInputID)
	if ans == nil {
		return approval.Outcome{Decision: approval.Reject, By: "elicitation", Reason: "Rejected: the retry carried no answer to the approval question; the tool did not run"}, nil
	}
	return s.decide(form, args, ans, v)
}

// elicitationAnswer returns the elicitation result the client sent under
// id, or nil when there is none or it is not one. Its content's numbers are
// json.Number, as the client wrote them: mcp-go keeps the response's text
// until it is decoded, and its own decoding (ElicitationResponse) goes
// through float64, which would run 9007199254740992 for the
// 9007199254740993 a person typed.
func elicitationAnswer(responses mcp.InputResponses, id string) *mcp.ElicitationResult {
	r, ok := responses[id]
	if !ok {
		return nil
	}
	raw, err := json.Marshal(r) // the text as received
	if err != nil {
		return nil
	}
	var wire struct {
		Action  mcp.ElicitationResponseAction `json:"action"`
		Content json.RawMessage               `json:"content"`
	}
	if json.Unmarshal(raw, &wire) != nil {
		return nil
	}
	ans := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: wire.Action}}
	if len(wire.Content) > 0 {
		d := json.NewDecoder(bytes.NewReader(wire.Content))
		d.UseNumber()
		if d.Decode(&ans.Content) != nil {
			return nil
		}
	}
	return ans
}

// decide reads a person's answer. An edit that breaks the tool's schema is
// an invalid-arguments error: the tool does not run, and the model learns
// why.
func (s *Server) decide(form approval.Form, args json.RawMessage, ans *mcp.ElicitationResult, v *schema.Validator) (approval.Outcome, error) {
	content, _ := ans.Content.(map[string]any)
	if ans.Content != nil && content == nil {
		return approval.Outcome{Decision: approval.Reject, By: "elicitation", Reason: "Rejected: the reviewer's answer did not fit the form: content is not an object"}, nil
	}
	out, err := form.Decide(args, approval.Answer{Action: string(ans.Action), Content: content}, v)
	if err != nil {
		return approval.Outcome{}, err
	}
	if out.By == "" {
		out.By = "elicitation"
	}
	return out, nil
}

// ask puts the question to the client, or applies the fallback when the
// client cannot ask a person. pending is set when the question travels as
// an input_required result.
func (s *Server) ask(ctx context.Context, info tools.Info, args json.RawMessage, form approval.Form, v *schema.Validator) (approval.Outcome, *inputRequired, error) {
	params := mcp.ElicitationParams{Message: form.Message, RequestedSchema: form.Schema}
	if modern := mcp.IsModernProtocol(mcpserver.RequestProtocolVersion(ctx)); modern {
		if !clientCanElicit(ctx) {
			out, err := s.fallback(ctx, info, args, v)
			return out, nil, err
		}
		state := s.approvals.signer.Sign(bindingFor(ctx, info.Name, args))
		b := mcpserver.NewInputRequestBuilder(state).Elicit(approvalInputID, params)
		return approval.Outcome{}, &inputRequired{result: b.ToolResult(), state: state, params: params}, nil
	}
	cs := mcpserver.ClientSessionFromContext(ctx)
	if _, ok := cs.(mcpserver.SessionWithElicitation); !ok || !clientCanElicit(ctx) {
		out, err := s.fallback(ctx, info, args, v)
		return out, nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, s.approvals.policy.Timeout)
	defer cancel()
	stop := s.heartbeat(ctx, info.Name)
	defer stop()
	if sess, _ := tools.SessionFrom(ctx); sess.ID != "" {
		defer s.startAsking(sess.ID)()
	}
	ans, err := s.mcp.RequestElicitation(waitCtx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  params,
	})
	switch {
	case err == nil:
		out, err := s.decide(form, args, ans, v)
		return out, nil, err
	case ctx.Err() != nil:
		return approval.Outcome{}, nil, &tools.Error{Kind: tools.KindCancelled, Message: "the call was cancelled while waiting for approval", Err: ctx.Err()}
	case waitCtx.Err() != nil:
		return s.timedOut(args), nil, nil
	default:
		return approval.Outcome{Decision: approval.Reject, By: "elicitation", Reason: fmt.Sprintf("Rejected: the approval question could not be asked (%v); the tool did not run", err)}, nil, nil
	}
}

// timedOut applies the on-timeout decision.
func (s *Server) timedOut(args json.RawMessage) approval.Outcome {
	return s.approvals.policy.TimedOut(args)
}

// fallback decides for a client that cannot ask a person.
func (s *Server) fallback(ctx context.Context, info tools.Info, args json.RawMessage, v *schema.Validator) (approval.Outcome, error) {
	p := s.approvals.policy
	switch p.Fallback {
	case approval.FallbackAllow:
		s.log.Warn("approval auto-granted: the client cannot ask a person and the fallback is allow", "tool", info.Name)
		return approval.Outcome{Decision: approval.Approve, Args: args, By: "policy:allow"}, nil
	case approval.FallbackWebhook:
		sess, _ := tools.SessionFrom(ctx)
		form, _ := approval.NewForm(info, args)
		stop := s.heartbeat(ctx, info.Name)
		defer stop()
		// AskWebhook waits at most the approval timeout, and a webhook that
		// does not answer in time gets the on-timeout decision, as a person
		// would.
		out, err := p.AskWebhook(ctx, approval.Request{Tool: info.Name, Summary: form.Message, Session: sess.ID, ClientName: sess.ClientName}, info, args, v)
		if err != nil {
			if ctx.Err() != nil {
				return approval.Outcome{}, &tools.Error{Kind: tools.KindCancelled, Message: "the call was cancelled while waiting for approval", Err: ctx.Err()}
			}
			var te *tools.Error
			if errors.As(err, &te) && te.Kind == tools.KindInvalidArguments {
				return approval.Outcome{}, te
			}
			return approval.Outcome{Decision: approval.Reject, By: "webhook", Reason: fmt.Sprintf("Rejected: the approval webhook failed (%v); the tool did not run", err)}, nil
		}
		if out.By == "" {
			out.By = "webhook"
		}
		return out, nil
	default:
		msg := approval.DenyMessage(info.Name)
		if overSSE(ctx) {
			msg = approval.DenySSEMessage(info.Name) // the transport, not the client, is what cannot ask
		}
		return approval.Outcome{Decision: approval.Reject, By: "policy:deny", Reason: msg}, nil
	}
}

// clientCanElicit reports whether the client declared the elicitation
// capability: per request on protocol 2026-07-28 and later, in initialize
// before. mcp-go does not check this before asking, so we do.
func clientCanElicit(ctx context.Context) bool {
	if info := mcpserver.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
		return info.ClientCapabilities.Elicitation != nil
	}
	if cs, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo); ok {
		return cs.GetClientCapabilities().Elicitation != nil
	}
	return false
}

// heartbeat reports progress every interval while a person decides, so
// clients with a request timeout keep waiting. It does nothing when the
// client did not ask for progress.
func (s *Server) heartbeat(ctx context.Context, tool string) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(s.approvals.heartbeat)
		defer t.Stop()
		n := 0.0
		for {
			select {
			case <-t.C:
				n++
				tools.ReportProgress(ctx, n, 0, fmt.Sprintf("waiting for a person to approve %q", tool))
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done) }
}

func (s *Server) logDecision(ctx context.Context, tool string, out approval.Outcome, start time.Time) {
	s.log.LogAttrs(ctx, slog.LevelInfo, "approval decision",
		slog.String("tool", tool), slog.String("decision", out.Decision.String()),
		slog.String("by", out.By), slog.Duration("waited", time.Since(start)), principalAttr(ctx))
	s.opts.Telemetry.Decided(tool, out.Decision, time.Since(start))
}
