package tools

import "errors"

// Audience says who a result is for.
type Audience int

const (
	// ForModel is the default: the result goes back into the model's context.
	ForModel Audience = iota
	// ForUser marks a result meant to be shown to the user directly (the
	// "immediate" behaviour): its content is annotated with audience ["user"].
	ForUser
)

// Result is what a successful call returns. A call fails only by
// returning an error (see Tool); the server renders that as an isError
// result whose text is "Error: " followed by the message.
type Result struct {
	// Text is the output for the reader (the model, unless Audience says
	// otherwise). A tool that returns nothing succeeds with empty text.
	Text string
	// Structured, when not nil, is sent as MCP structuredContent. It must
	// marshal to a JSON object.
	Structured any
	// Audience says who the content is for.
	Audience Audience
}

// Text returns a successful result carrying s.
func Text(s string) Result { return Result{Text: s} }

// Outcome is a finished call seen from its caller: its result, or its
// failure. It is for code that reports on calls (logs, tests, a CLI); tools
// themselves return (Result, error).
type Outcome struct {
	Result
	// Err is the failure, or nil on success.
	Err *Error
}

// OK reports whether the call succeeded.
func (o Outcome) OK() bool { return o.Err == nil }

// Settle folds a call's (Result, error) pair into its Outcome: a non-nil
// err becomes Err (see AsError) and drops any partial output.
func Settle(r Result, err error) Outcome {
	if err != nil {
		return Outcome{Result: Result{Audience: r.Audience}, Err: AsError(err)}
	}
	return Outcome{Result: r}
}

// AsError returns err as an *Error: itself when it is one (or wraps one),
// otherwise an execution failure carrying err's message.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindExecutionFailed, Message: err.Error(), Err: err}
}
