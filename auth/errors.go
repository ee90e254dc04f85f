package auth

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoToken is returned by Verify when the request carried no bearer
// token. Its answer is 401 with a challenge naming the resource metadata,
// and no error code (RFC 6750 §3.1).
var ErrNoToken = errors.New("auth: no bearer token")

// TokenError is returned by Verify when a token was given but cannot be
// accepted: malformed, wrongly signed, signed by an unknown key or with an
// algorithm not allowed, expired, not yet valid, or for another issuer or
// audience. Its answer is 401 with error="invalid_token".
type TokenError struct {
	// Reason says what was wrong, in a few words fit for a client
	// (error_description); it never quotes the token.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *TokenError) Error() string {
	if e.Err != nil {
		return "auth: invalid token: " + e.Reason + ": " + e.Err.Error()
	}
	return "auth: invalid token: " + e.Reason
}

func (e *TokenError) Unwrap() error { return e.Err }

// ScopeError is returned by Verify (for Config.RequiredScopes) and by
// Principal.Require when a valid token lacks scopes. Its answer is 403 with
// error="insufficient_scope" and scope="<Missing...>".
type ScopeError struct {
	// Missing lists the scopes needed that the token does not carry.
	Missing []string
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("auth: insufficient scope: the token lacks %q", strings.Join(e.Missing, " "))
}

// invalid returns a *TokenError.
func invalid(reason string, err error) error {
	return &TokenError{Reason: reason, Err: err}
}
