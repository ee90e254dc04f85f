// Package state holds what every replica of an mcp-tools server must agree
// on: call budgets, single-use marks on approval states, remembered
// approvals, shared rate limits, session records, and the messages
// replicas send each other (an elicitation answer that reached the wrong
// replica, a session that ended).
//
// Store is the one interface, small and made of plain primitives (values
// with a time to live, bounded counters, a rate limiter, a message bus);
// the server builds its meanings on them. Two implementations ship:
// Memory (one process, nothing to install, the default) and, in package
// state/redisstore, Redis, for a fleet. Both pass the same conformance
// test, statetest.Run.
package state

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Get for a key that is not there (never set,
// deleted, or expired).
var ErrNotFound = errors.New("state: not found")

// ErrUnavailable wraps every error of a store that cannot be reached or
// did not answer in time. A caller turns it into a clear "try again"
// error; it never falls back to state of its own, which would break what
// the fleet agreed (a budget, a single use).
var ErrUnavailable = errors.New("state store unavailable")

// Store is shared state. Every method may be called concurrently. Every
// method that takes a context returns when the context is done, and a
// store that cannot be reached fails with an error that errors.Is
// ErrUnavailable, promptly (an implementation bounds each operation; a
// down store is an error, never a hang).
//
// Keys are plain strings; an implementation may prefix them. A ttl of
// zero or less means the value never expires.
type Store interface {
	// Get returns the value at key, or ErrNotFound. When refresh is
	// positive, the key's time to live is set to refresh in the same step
	// (a session record read on each request stays alive while used).
	Get(ctx context.Context, key string, refresh time.Duration) ([]byte, error)
	// Set stores value at key, replacing any value, for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// SetNX stores value at key for ttl only if key holds nothing, and
	// reports whether it did: the first of any number of callers, on any
	// replica, gets true.
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	// Delete removes keys; missing keys are not an error.
	Delete(ctx context.Context, keys ...string) error
	// Take adds one to the counter at key unless it already holds limit or
	// more, and reports whether it did. The check and the increment are
	// one atomic step across every replica: with limit 10, exactly 10
	// calls of Take on a fresh key get true. When ttl is positive the
	// counter's time to live is set to ttl on every successful Take.
	Take(ctx context.Context, key string, limit int64, ttl time.Duration) (bool, error)
	// Allow asks the rate limiter at key for one event: rate events a
	// second on average, bursts of up to burst (at least 1). It returns 0
	// when the event is allowed now, or how long to wait before asking
	// again. It is the generic cell rate algorithm, so every replica
	// shares one limit. A rate that is not positive is an error.
	Allow(ctx context.Context, key string, rate float64, burst int) (retryAfter time.Duration, err error)
	// Publish sends msg to every current subscriber of channel, on every
	// replica (this one included). Delivery is at most once: a subscriber
	// that is not connected at that moment misses it.
	Publish(ctx context.Context, channel string, msg []byte) error
	// Subscribe calls fn with each message published on channel from now
	// until the returned stop function is called, one message at a time,
	// in the order received. A store that loses its connection
	// resubscribes when it can; messages sent in between are lost. stop
	// waits for a running fn to return; it may be called more than once
	// and after Close, but never from fn (it would wait for itself).
	Subscribe(channel string, fn func(msg []byte)) (stop func())
	// Ping reports whether the store can be reached now.
	Ping(ctx context.Context) error
	// Close releases the store's connections and stops its subscriptions,
	// waiting for their goroutines. Calling it again does nothing.
	Close() error
}

// Shared reports whether s is shared by more than one process: anything
// but a Memory store. A server uses it to tell what "end a session here"
// means: in one process, everything goes; in a fleet, only this replica's
// part, since the session may live on elsewhere.
func Shared(s Store) bool {
	_, local := s.(*Memory)
	return !local
}
