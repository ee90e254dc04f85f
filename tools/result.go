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

// Result is the outcome of a call.
//
// A successful result has a nil Err. A failed one has Err set and, usually,
// an empty Text; the server renders it as an isError result whose text is
// "Error: " followed by the message.
type Result struct {
	// Text is the output for the reader (the model, unless Audience says
	// otherwise). A tool that returns nothing succeeds with empty text.
	Text string
	// Structured, when not nil, is sent as MCP structuredContent. It must
	// marshal to a JSON object.
	Structured any
	// Audience says who the content is for.
	Audience Audience
	// Err is the failure, or nil on success.
	Err *Error
}

// OK reports whether the result is a success.
func (r Result) OK() bool { return r.Err == nil }

// Text returns a successful result carrying s.
func Text(s string) Result { return Result{Text: s} }

// Outcome folds a call's (Result, error) pair into one Result: a non-nil err
// becomes the result's Err (see AsError) and drops any partial output.
func Outcome(r Result, err error) Result {
	if err != nil {
		return Result{Err: AsError(err), Audience: r.Audience}
	}
	return r
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
