package server

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/tools"
)

// What replicas share, and how (see package state for the store):
//
//	budget:<who>              a bounded counter (Take), per session or token
//	approved:<session>:<tool> "remember for this session", 24 h or until the session ends
//	spent:<kind>:<nonce>      single-use marks of approval and resume states (SetNX)
//	rate:<tool>               the tool's rate limiter, fleet-wide (Allow), with a shared store
//	session:<id>              a streamable HTTP session's record (owner, initialize params)
//
// With the default in-memory store the same keys live in this process.

// StateKeys are the secrets that sign approval states and seal pipeline
// resume states. Every replica of a fleet must have the same Current key,
// so that a state issued by one verifies on another. The zero value makes
// a random key per process: a 2026-07-28 retry must then come back to the
// process that asked.
type StateKeys struct {
	// Current signs and verifies: at least 32 bytes of secret.
	Current []byte
	// Previous, when set, still verifies (never signs) for one approval
	// timeout after the server starts: the key being rotated out, for the
	// states issued under it that still wait for their answer.
	Previous []byte
}

// Derived key purposes: one secret, a key for each use.
const (
	keyInfoApproval = "mcp-tools approval state v1"
	keyInfoResume   = "mcp-tools resume state v1"
)

// deriveKey returns the 32-byte key for purpose from secret (nil: nil).
func deriveKey(secret []byte, purpose string) []byte {
	if secret == nil {
		return nil
	}
	k, err := hkdf.Key(sha256.New, secret, nil, purpose, 32)
	if err != nil {
		panic("server: hkdf: " + err.Error()) // only for lengths sha256 cannot give
	}
	return k
}

// rememberTTL is how long "approve for the rest of this session" is kept
// in the store when the session does not end explicitly before.
const rememberTTL = 24 * time.Hour

// sessionBudgetTTL is how long a session's budget counter outlives its
// last call, when the session does not end explicitly before.
const sessionBudgetTTL = 24 * time.Hour

// unavailable is the error of a call that needs the shared store when it
// cannot be reached. The call did not run.
func unavailable(what string, err error) *tools.Error {
	return &tools.Error{Kind: tools.KindUnavailable, Err: err,
		Message: fmt.Sprintf("the shared state store cannot be reached, so %s; the tool did not run; retry in a moment", what)}
}

// spend marks the single-use id spent until the given time, on every
// replica, and reports whether this was its first use.
func (s *Server) spend(ctx context.Context, id string, until time.Time) (bool, error) {
	ttl := time.Until(until) + time.Second
	first, err := s.store.SetNX(ctx, "spent:"+id, []byte{1}, ttl)
	if err != nil {
		return false, err
	}
	return first, nil
}

// storeHealth pings a shared store in the background, so that /readyz
// answers from memory: not ready while the store cannot be reached.
type storeHealth struct {
	down atomic.Bool
	stop chan struct{}
	done chan struct{}
}

// healthEvery is how often a shared store is pinged for /readyz.
const healthEvery = time.Second

func watchStore(st state.Store, onChange func(up bool)) *storeHealth {
	h := &storeHealth{stop: make(chan struct{}), done: make(chan struct{})}
	ping := func() {
		ctx, cancel := context.WithTimeout(context.Background(), healthEvery)
		defer cancel()
		err := st.Ping(ctx)
		if was := h.down.Swap(err != nil); was != (err != nil) && onChange != nil {
			onChange(err == nil)
		}
	}
	ping()
	go func() {
		defer close(h.done)
		t := time.NewTicker(healthEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				ping()
			case <-h.stop:
				return
			}
		}
	}()
	return h
}

func (h *storeHealth) close() {
	close(h.stop)
	<-h.done
}

// storeErr reports whether err is the store's (unreachable), as opposed
// to the caller's context ending.
func storeErr(err error) bool { return errors.Is(err, state.ErrUnavailable) }

// setupKeys makes the approval signer and the resume sealer from
// Options.StateKeys, with single-use marks in the store.
func (s *Server) setupKeys(opts Options) error {
	k := opts.StateKeys
	if k.Current != nil && len(k.Current) < 32 {
		return fmt.Errorf("server: the state key is %d bytes; it must have at least 32", len(k.Current))
	}
	if k.Previous != nil && len(k.Previous) < 32 {
		return fmt.Errorf("server: the previous state key is %d bytes; it must have at least 32", len(k.Previous))
	}
	if k.Previous != nil && k.Current == nil {
		return errors.New("server: a previous state key needs a current one")
	}
	// The previous key verifies for one approval timeout: every state it
	// signed has expired by then.
	until := time.Now().Add(opts.Approval.Timeout)
	signer, err := approval.NewSignerWith(approval.SignerOptions{
		TTL: opts.Approval.Timeout, Key: deriveKey(k.Current, keyInfoApproval),
		Previous: deriveKey(k.Previous, keyInfoApproval), PreviousUntil: until,
		Spend: s.spend,
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.approvals = approvals{policy: opts.Approval, heartbeat: opts.ApprovalHeartbeat, signer: signer}
	s.resumes = newSealer(opts.Approval.Timeout, deriveKey(k.Current, keyInfoResume), deriveKey(k.Previous, keyInfoResume), until, s.spend)
	return nil
}
