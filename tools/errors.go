package tools

import (
	"errors"
	"fmt"
)

// Kind is the stable, machine-readable class of a failed call. It is sent in
// the result's _meta so that clients can tell failures apart without parsing
// text.
type Kind string

// The kinds of failure.
const (
	// KindInvalidArguments: the arguments did not fit the tool's schema or
	// its rules; the model can retry with fixed arguments.
	KindInvalidArguments Kind = "invalid_arguments"
	// KindExecutionFailed: the tool ran and failed.
	KindExecutionFailed Kind = "execution_failed"
	// KindInternal: the tool panicked or broke its contract.
	KindInternal Kind = "internal_error"
	// KindTimeout: the call ran out of time and its work was cancelled.
	KindTimeout Kind = "timeout"
	// KindCancelled: the client cancelled the call.
	KindCancelled Kind = "cancelled"
	// KindApprovalDenied: a reviewer (or the approval policy) refused the call.
	KindApprovalDenied Kind = "approval_denied"
	// KindBudgetExhausted: the session's call budget is spent.
	KindBudgetExhausted Kind = "budget_exhausted"
	// KindResultTooLarge: the tool's result was over the server's cap on a
	// result's size, and was not sent.
	KindResultTooLarge Kind = "result_too_large"
	// KindUnavailable: something the call needs besides the tool (the
	// state store that replicas share) could not be reached, so the call
	// was not run; it can be retried as it is.
	KindUnavailable Kind = "unavailable"
)

// Error is a failed call: its kind, an optional numeric code, and a message
// written for the model.
type Error struct {
	Kind    Kind
	Code    int // optional; 0 means none
	Message string
	Err     error // the underlying cause, if any; never shown to the client
}

// Error returns the message for the model.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error of the same kind, so that
// errors.Is(err, &tools.Error{Kind: tools.KindTimeout}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Kind == e.Kind
}

// InvalidArgs returns an invalid-arguments error with a formatted message.
func InvalidArgs(format string, args ...any) *Error {
	return &Error{Kind: KindInvalidArguments, Message: fmt.Sprintf(format, args...)}
}

// Failed returns an execution failure with a formatted message. Like
// fmt.Errorf, a %w verb records the cause.
func Failed(format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: KindExecutionFailed, Message: err.Error(), Err: err}
}

// WithCode returns a copy of e carrying code.
func (e *Error) WithCode(code int) *Error {
	c := *e
	c.Code = code
	return &c
}

// Suspended is implemented by the error a call returns when it cannot go on
// until the client answers a question (a person's approval, say): the
// server turns it into that question. Composite tools and middleware pass
// it on unchanged; it is not a failure.
type Suspended interface {
	error
	Suspended()
}

// IsSuspended reports whether err is, or wraps, a Suspended.
func IsSuspended(err error) bool {
	var s Suspended
	return errors.As(err, &s)
}
