package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// The webhook's defaults.
const (
	// DefaultWebhookTimeout bounds one question when Webhook.Timeout is 0
	// and the caller's context has no deadline.
	DefaultWebhookTimeout = 30 * time.Second
	// DefaultMaxAnswerBytes caps the answer when Webhook.MaxAnswerBytes
	// is 0.
	DefaultMaxAnswerBytes = 64 << 10
)

// Webhook asks a remote service (a chat bot, a ticket system) for the
// decision, for hosts whose clients cannot ask a person. Its zero value,
// given a URL, works; it is safe for concurrent use once set up.
type Webhook struct {
	// URL receives the question as a JSON POST.
	URL string
	// Timeout bounds one question, from sending it to reading the answer,
	// and never extends the caller's deadline: the question ends at the
	// earlier of the two. Zero: the caller's deadline alone (for a policy's
	// webhook, the approval timeout; see Policy.AskWebhook), or
	// DefaultWebhookTimeout when the caller's context has none.
	Timeout time.Duration
	// Headers are sent with the question (Authorization, say). Nil: none.
	Headers map[string]string
	// Client sends the question. Nil: a private client, bounded by the
	// question's context (see Timeout), that follows no redirect: a 3xx
	// answer is a failure like any other non-2xx status, so neither the
	// question nor the configured Headers go anywhere but URL, and the
	// decision comes from URL alone.
	Client *http.Client
	// MaxAnswerBytes caps the answer's body; a longer answer is an error.
	// Zero: DefaultMaxAnswerBytes.
	MaxAnswerBytes int64
}

// Request is the JSON body the webhook receives.
type Request struct {
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Summary    string          `json:"summary"`
	Session    string          `json:"session"`
	ClientName string          `json:"client_name,omitempty"`
}

// answer is the JSON the webhook answers with.
type answer struct {
	Decision  string          `json:"decision"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
}

// Decide asks the webhook about a call of info's tool with args. It POSTs
// req as JSON, with Tool and Arguments filled in from info and args (the
// values of secret arguments replaced by "[hidden]") and Summary when req
// has none, and reads an answer of the form
//
//	{"decision": "approve"|"reject"|"edit", "arguments": {...}, "reason": "..."}
//
// On "edit", arguments are the ones to run with: a secret argument echoed
// back as "[hidden]" keeps the model's value, and the result is validated
// with v, the tool's input schema (nil: not checked); an invalid edit is a
// *tools.Error of kind invalid_arguments. An edit that changes nothing is
// Approve. On "reject", Reason is "Rejected by reviewer: " and the answer's
// reason, or the summary of the arguments.
//
// Failing to get an answer (a timeout, a non-2xx status, an answer over
// MaxAnswerBytes, malformed JSON, an unknown decision) is an error; the
// caller decides what that means. When the webhook does not answer in time
// (Timeout, or the caller's deadline) the error wraps ErrNoAnswer, so that
// the caller can apply its on-timeout decision (Policy.AskWebhook does).
func (w *Webhook) Decide(ctx context.Context, req Request, info tools.Info, args json.RawMessage, v *schema.Validator) (Outcome, error) {
	if w.URL == "" {
		return Outcome{}, errors.New("approval webhook: no URL")
	}
	limit := w.MaxAnswerBytes
	if limit <= 0 {
		limit = DefaultMaxAnswerBytes
	}
	// The question ends at the earlier of the webhook's own timeout and
	// the caller's deadline; with neither, DefaultWebhookTimeout.
	timeout := w.Timeout
	deadline, bounded := ctx.Deadline()
	if bounded && (timeout <= 0 || time.Until(deadline) <= timeout) {
		timeout = time.Until(deadline).Round(time.Millisecond)
	} else {
		if timeout <= 0 {
			timeout = DefaultWebhookTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	noAnswer := func() error {
		return fmt.Errorf("approval webhook: %w within %s: %w", ErrNoAnswer, timeout, context.DeadlineExceeded)
	}
	req.Tool = info.Name
	req.Arguments = tools.Redact(args, info.Secret)
	if req.Summary == "" {
		req.Summary = Summary(info, args, 0)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Outcome{}, fmt.Errorf("approval webhook: encode the question: %w", err)
	}
	if err := checkURL(w.URL); err != nil {
		return Outcome{}, fmt.Errorf("approval webhook: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may carry a token: keep it out of messages
		}
		return Outcome{}, fmt.Errorf("approval webhook: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	for k, val := range w.Headers {
		hr.Header.Set(k, val)
	}
	client := w.Client
	if client == nil {
		client = noRedirects
	}
	resp, err := client.Do(hr)
	if err != nil {
		if timedOut(ctx, err) {
			return Outcome{}, noAnswer()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may carry a token: keep it out of messages
		}
		return Outcome{}, fmt.Errorf("approval webhook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return Outcome{}, fmt.Errorf("approval webhook: HTTP %d, want 2xx", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if timedOut(ctx, err) {
			return Outcome{}, noAnswer()
		}
		return Outcome{}, fmt.Errorf("approval webhook: reading the answer: %w", err)
	}
	if int64(len(raw)) > limit {
		return Outcome{}, fmt.Errorf("approval webhook: the answer is over %d bytes", limit)
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return Outcome{}, fmt.Errorf("approval webhook: the answer is not the expected JSON: %w", err)
	}
	switch a.Decision {
	case "approve":
		return Outcome{Decision: Approve, Args: args, By: "webhook"}, nil
	case "reject":
		reason := strings.TrimSpace(a.Reason)
		if reason == "" {
			reason = Summary(info, args, 0)
		}
		return Outcome{Decision: Reject, By: "webhook", Reason: "Rejected by reviewer: " + reason}, nil
	case "edit":
		if _, err := objectFields(a.Arguments); err != nil || len(bytes.TrimSpace(a.Arguments)) == 0 || string(bytes.TrimSpace(a.Arguments)) == "null" {
			return Outcome{}, errors.New(`approval webhook: an "edit" answer needs "arguments", a JSON object`)
		}
		edited := restoreSecrets(a.Arguments, args, info.Secret)
		// Compared number for number as written: an integer past 2^53
		// corrected by one is still a change.
		if bytes.Equal(canonicalExact(edited), canonicalExact(args)) {
			return Outcome{Decision: Approve, Args: args, By: "webhook"}, nil
		}
		if err := validateEdit(v, edited); err != nil {
			return Outcome{}, err
		}
		return Outcome{Decision: Edit, Args: edited, By: "webhook"}, nil
	}
	return Outcome{}, fmt.Errorf("approval webhook: unknown decision %q: want approve, reject or edit", a.Decision)
}

// checkURL reports a webhook URL that cannot be asked: one that does not
// parse, or is not http or https with a host. Its errors never show the
// URL, which may carry a token.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("the webhook URL cannot be parsed: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("the webhook URL's scheme is %q; use http or https", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("the webhook URL has no host")
	}
	return nil
}

// noRedirects is the client of a Webhook without one: a redirect comes back
// as the answer (a non-2xx status), never followed.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// ErrNoAnswer is wrapped by the error of a webhook that did not answer in
// time.
var ErrNoAnswer = errors.New("no answer")

// timedOut reports whether err, from asking under ctx, means the time ran
// out: ctx's deadline passed, or a client with a timeout of its own gave up.
func timedOut(ctx context.Context, err error) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout()
}

// restoreSecrets puts the model's secret values back where an edit echoed
// the "[hidden]" the webhook was shown, or left the field out: a reviewer
// who never saw a secret keeps it unless they set a new value. Secret
// names match in any case (tools.IsSecret), as they were hidden.
func restoreSecrets(edited, original json.RawMessage, secret []string) json.RawMessage {
	if len(secret) == 0 {
		return edited
	}
	var e, o map[string]json.RawMessage
	if json.Unmarshal(edited, &e) != nil || json.Unmarshal(original, &o) != nil {
		return edited
	}
	for k, v := range e {
		if tools.IsSecret(k, secret) && string(bytes.TrimSpace(v)) == `"`+hidden+`"` {
			if ov, ok := o[k]; ok {
				e[k] = ov
			} else {
				delete(e, k)
			}
		}
	}
	for k, v := range o {
		if _, ok := e[k]; !ok && tools.IsSecret(k, secret) {
			e[k] = v // left out by the reviewer, who never saw it
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return edited
	}
	return b
}
