package tools

import "context"

// Session identifies the client connection a call came from. Tools read it
// with SessionFrom to keep per-user state; it is never part of any schema.
type Session struct {
	// ID is the MCP session id ("stdio" for the single stdio session, or ""
	// when the call did not come through a server).
	ID string
	// ClientName is the name the client gave in its initialize request.
	ClientName string
	// Principal identifies who authenticated the session (a digest of the
	// bearer token, say), or "" when nothing did.
	Principal string
}

type sessionKey struct{}

// WithSession returns a context carrying s.
func WithSession(ctx context.Context, s Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// SessionFrom returns the session carried by ctx, if any.
func SessionFrom(ctx context.Context) (Session, bool) {
	s, ok := ctx.Value(sessionKey{}).(Session)
	return s, ok
}

// ProgressFunc reports how far a call has got. total is 0 when unknown.
type ProgressFunc func(progress, total float64, message string)

type progressKey struct{}

// WithProgress returns a context whose calls report progress to fn.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress reports progress for the call running under ctx. It does
// nothing when the caller did not ask for progress, so tools may call it
// freely.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	if fn, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && fn != nil {
		fn(progress, total, message)
	}
}
