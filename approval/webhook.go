package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// maxWebhookAnswer caps the webhook's answer.
const maxWebhookAnswer = 64 << 10

// Webhook asks a remote service (a chat bot, a ticket system) for the
// decision, for hosts whose clients cannot ask a person.
type Webhook struct {
	URL string
	// Timeout bounds one question. Zero: 30 s (and never more than the
	// caller's context allows).
	Timeout time.Duration
	// Headers are sent with the question (Authorization, say).
	Headers map[string]string
	// Client sends the question. Nil: a private client.
	Client *http.Client
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

// Decide POSTs req (with the arguments, secret values hidden) and reads
// {"decision": "approve"|"reject"|"edit", "arguments": {...}, "reason": "..."}.
// A failure to get a well-formed answer is an error; the caller decides
// what it means. Edited arguments are validated with v.
func (w *Webhook) Decide(ctx context.Context, req Request, info tools.Info, args json.RawMessage, v *schema.Validator) (Outcome, error) {
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req.Tool = info.Name
	req.Arguments = hideSecrets(args, info.Secret)
	if req.Summary == "" {
		req.Summary = Summary(info, args, shortLen)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Outcome{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return Outcome{}, fmt.Errorf("approval webhook: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	for k, val := range w.Headers {
		hr.Header.Set(k, val)
	}
	client := w.Client
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	resp, err := client.Do(hr)
	if err != nil {
		return Outcome{}, fmt.Errorf("approval webhook: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxWebhookAnswer+1))
	if err != nil {
		return Outcome{}, fmt.Errorf("approval webhook: reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return Outcome{}, fmt.Errorf("approval webhook: HTTP %d", resp.StatusCode)
	}
	if len(raw) > maxWebhookAnswer {
		return Outcome{}, fmt.Errorf("approval webhook: the answer is over %d bytes", maxWebhookAnswer)
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return Outcome{}, fmt.Errorf("approval webhook: the answer is not the expected JSON: %w", err)
	}
	switch a.Decision {
	case "approve":
		return Outcome{Decision: Approve, Args: args, By: "webhook"}, nil
	case "reject":
		reason := a.Reason
		if reason == "" {
			reason = Summary(info, args, 60)
		}
		return Outcome{Decision: Reject, By: "webhook", Reason: "Rejected by reviewer: " + reason}, nil
	case "edit":
		if len(a.Arguments) == 0 {
			return Outcome{}, errors.New("approval webhook: an edit without arguments")
		}
		a.Arguments = restoreSecrets(a.Arguments, args, info.Secret)
		if v != nil {
			if err := v.Validate(a.Arguments); err != nil {
				return Outcome{}, &tools.Error{Kind: tools.KindInvalidArguments, Message: "the reviewer's edit is invalid: " + strings.TrimPrefix(tools.AsError(err).Message, "invalid arguments: "), Err: err}
			}
		}
		return Outcome{Decision: Edit, Args: a.Arguments, By: "webhook"}, nil
	}
	return Outcome{}, fmt.Errorf("approval webhook: unknown decision %q: want approve, reject or edit", a.Decision)
}

// hideSecrets replaces the values of secret fields by "[hidden]".
func hideSecrets(args json.RawMessage, secret []string) json.RawMessage {
	if len(secret) == 0 {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	for _, k := range secret {
		if _, ok := m[k]; ok {
			m[k] = json.RawMessage(`"[hidden]"`)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}

// restoreSecrets puts the model's secret values back where an edit echoed
// the "[hidden]" the webhook was shown.
func restoreSecrets(edited, original json.RawMessage, secret []string) json.RawMessage {
	if len(secret) == 0 {
		return edited
	}
	var e, o map[string]json.RawMessage
	if json.Unmarshal(edited, &e) != nil || json.Unmarshal(original, &o) != nil {
		return edited
	}
	for _, k := range secret {
		if string(e[k]) == `"[hidden]"` {
			if v, ok := o[k]; ok {
				e[k] = v
			} else {
				delete(e, k)
			}
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return edited
	}
	return b
}
