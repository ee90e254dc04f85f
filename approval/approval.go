// Package approval decides whether a gated tool call may run: it builds the
// form a person sees, turns their answer into a decision (approve, reject
// or edit), signs the state a client echoes back, remembers "yes for this
// session", and offers fallbacks for when no person can be asked.
//
// It knows nothing of MCP: the server package carries the form to the
// client as an elicitation and the answer back.
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// DefaultTimeout is how long a pending approval waits when
// Policy.Timeout is zero.
const DefaultTimeout = 5 * time.Minute

// Decision is what a reviewer decided. The zero value is Reject, so that a
// decision nobody made never lets a call run.
type Decision int

// The decisions.
const (
	Reject Decision = iota
	Approve
	Edit
)

// String names the decision: "approve", "reject" or "edit" (and
// "Decision(n)" for a value that is none of them).
func (d Decision) String() string {
	switch d {
	case Reject:
		return "reject"
	case Approve:
		return "approve"
	case Edit:
		return "edit"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Outcome is a decision with what follows from it.
type Outcome struct {
	Decision Decision
	// Args are the arguments to run with: the model's on Approve, the
	// edited ones on Edit.
	Args json.RawMessage
	// Remember is set when the reviewer asked not to be asked again about
	// this tool for the rest of the session.
	Remember bool
	// Reason is the message for the model on Reject.
	Reason string
	// By says who decided: "elicitation", "webhook", "policy:allow",
	// "policy:deny", "timeout", "remembered".
	By string
}

// Fallback is what happens to a gated call when the client cannot ask a
// person.
type Fallback string

// The fallbacks.
const (
	FallbackDeny    Fallback = "deny"
	FallbackAllow   Fallback = "allow"
	FallbackWebhook Fallback = "webhook"
)

// ParseFallback parses a fallback name; "" is deny.
func ParseFallback(s string) (Fallback, error) {
	switch Fallback(s) {
	case "", FallbackDeny:
		return FallbackDeny, nil
	case FallbackAllow, FallbackWebhook:
		return Fallback(s), nil
	}
	return "", fmt.Errorf("unknown approval fallback %q: use deny, allow or webhook", s)
}

// Policy says which tools are gated and how. The zero value gates only the
// tools gated in Go (Gate), waits DefaultTimeout, rejects on timeout, and
// denies when no person can be asked.
type Policy struct {
	// Require lists tools a person must approve, besides those gated in Go.
	Require []string
	// Exempt lists tools opened up explicitly; it beats everything else
	// (a built-in that writes, gated by default, can be opened up here).
	Exempt []string
	// Timeout is how long a pending approval waits. Zero: DefaultTimeout.
	Timeout time.Duration
	// OnTimeout is the decision when nobody answers in time: Reject (the
	// zero value) or Approve.
	OnTimeout Decision
	// Fallback applies when the client cannot ask a person. "": deny.
	Fallback Fallback
	// Webhook asks a remote service; required when Fallback is webhook.
	// Its question is bounded by Timeout too (see AskWebhook).
	Webhook *Webhook
}

// timeout is the approval timeout: Timeout, or DefaultTimeout when zero.
func (p Policy) timeout() time.Duration {
	if p.Timeout <= 0 {
		return DefaultTimeout
	}
	return p.Timeout
}

// TimedOut is the decision for a call that nobody decided within the
// approval timeout: Approve with args when OnTimeout says so, otherwise a
// rejection that says how long it waited.
func (p Policy) TimedOut(args json.RawMessage) Outcome {
	if p.OnTimeout == Approve {
		return Outcome{Decision: Approve, Args: args, By: "timeout"}
	}
	return Outcome{Decision: Reject, By: "timeout", Reason: fmt.Sprintf("Rejected: no approval decision within %s; the tool did not run", p.timeout())}
}

// AskWebhook asks p.Webhook about a call of info's tool with args (see
// Webhook.Decide), waiting at most the approval timeout (Timeout), or the
// webhook's own Timeout when that is shorter. A webhook that does not
// answer within that time gets the on-timeout decision (TimedOut), as a
// person who does not answer would: it is not an error. Any other failure
// is returned as Decide returns it (an invalid edit is a *tools.Error of
// kind invalid_arguments); when ctx ends first, the error wraps ctx.Err().
func (p Policy) AskWebhook(ctx context.Context, req Request, info tools.Info, args json.RawMessage, v *schema.Validator) (Outcome, error) {
	if p.Webhook == nil {
		return Outcome{}, errors.New("approval webhook: the policy has no webhook")
	}
	wctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	out, err := p.Webhook.Decide(wctx, req, info, args, v)
	switch {
	case err == nil:
		return out, nil
	case ctx.Err() != nil:
		return Outcome{}, fmt.Errorf("approval webhook: %w", ctx.Err())
	case errors.Is(err, ErrNoAnswer):
		return p.TimedOut(args), nil
	}
	return Outcome{}, err
}

// Validate reports a policy that cannot work.
func (p Policy) Validate() error {
	if _, err := ParseFallback(string(p.Fallback)); err != nil {
		return fmt.Errorf("approval policy: %w", err)
	}
	if p.Fallback == FallbackWebhook && (p.Webhook == nil || p.Webhook.URL == "") {
		return errors.New("approval policy: the webhook fallback needs a webhook URL")
	}
	if p.Fallback == FallbackWebhook {
		if err := checkURL(p.Webhook.URL); err != nil {
			return fmt.Errorf("approval policy: %w", err)
		}
	}
	if p.OnTimeout != Reject && p.OnTimeout != Approve {
		return fmt.Errorf("approval policy: the on-timeout decision is %s; use reject or approve", p.OnTimeout)
	}
	if p.Timeout < 0 {
		return fmt.Errorf("approval policy: the timeout is %s; use a positive duration, or 0 for %s", p.Timeout, DefaultTimeout)
	}
	if p.Webhook != nil && p.Webhook.Timeout < 0 {
		return fmt.Errorf("approval policy: the webhook timeout is %s; use a positive duration, or 0 for %s", p.Webhook.Timeout, DefaultWebhookTimeout)
	}
	if p.Webhook != nil && p.Webhook.MaxAnswerBytes < 0 {
		return fmt.Errorf("approval policy: the webhook's answer cap is %d bytes; use a positive size, or 0 for %d", p.Webhook.MaxAnswerBytes, DefaultMaxAnswerBytes)
	}
	return nil
}

// Gated reports whether a tool called name is gated: exempt tools never
// are; tools required by the policy, or gated in Go, are.
func (p Policy) Gated(name string, gatedInGo bool) bool {
	if slices.Contains(p.Exempt, name) {
		return false
	}
	return gatedInGo || slices.Contains(p.Require, name)
}

// DenyMessage is what the model reads when a gated call cannot be put to a
// person because the client does not support elicitation. It names both
// ways out for the person running the server, who is often the user.
func DenyMessage(tool string) string {
	return fmt.Sprintf("Tool '%s' requires approval but the connected client does not support elicitation, so no one can be asked; the tool did not run. "+
		"%s", tool, waysOut(tool, "Whoever"))
}

// DenySSEMessage is what the model reads when a gated call arrives over the
// legacy HTTP+SSE transport, which cannot carry the approval question
// whatever the client supports.
func DenySSEMessage(tool string) string {
	return fmt.Sprintf("Tool '%s' requires approval but the legacy SSE transport cannot carry the approval question to the client; the tool did not run. "+
		"Serve over streamable HTTP (--transport http) so a client with elicitation can ask a person. Otherwise, %s", tool, waysOut(tool, "whoever"))
}

// waysOut names the two flags that let a gated tool run without a person.
func waysOut(tool, whoever string) string {
	return fmt.Sprintf("%s runs mcp-tools can turn approval off for this tool with --no-approval %s, "+
		"or set what happens when no one can be asked with --approval-fallback allow (run without asking) "+
		"or --approval-fallback webhook (ask the approval webhook of the config file).", whoever, tool)
}

// Gate marks t as needing a person's approval before each call: its
// descriptor says Gated (nothing is detected from a wrapper type, so
// tools.Wrap and the like keep it). The tool is published as destructive
// (unless it is read-only), so clients can warn too. The gate itself is
// applied by the server that serves the tool; a Composite stays one.
func Gate(t tools.Tool) tools.Tool {
	info := t.Info()
	if info.Gated {
		return t
	}
	info.Gated = true
	if !info.Annotations.ReadOnly {
		info.Annotations.Destructive = true
	}
	return tools.WithInfo(t, info)
}
