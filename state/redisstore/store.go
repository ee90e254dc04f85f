package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/mcp-tools/mcp-tools/state"
)

// DefaultPrefix is the key prefix of a Store whose Options.Prefix is empty.
const DefaultPrefix = "mcp-tools:"

// DefaultTimeout bounds each operation of a Store whose Options.Timeout
// is zero.
const DefaultTimeout = time.Second

// Options configures a Store. The zero value works.
type Options struct {
	// Prefix is put before every key and channel name, so that several
	// servers (or other programs) can share one Redis database. Zero
	// means DefaultPrefix.
	Prefix string
	// Timeout bounds each operation, from waiting for a pooled connection
	// to reading the reply, retries included; it is also the dial, read
	// and write timeout, overriding any set in the URL. Zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// Store is a state.Store on Redis. Its methods may be called
// concurrently.
type Store struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	prefix  string
	timeout time.Duration

	mu     sync.Mutex
	subs   map[*subscription]struct{}
	closed bool
}

var _ state.Store = (*Store)(nil)

// Open returns a Store for the Redis at url (redis://, rediss:// or
// unix://, as redis.ParseURL reads them). It does not connect: a Redis
// that is down is reported by the operations (and Ping), not by Open. A
// URL that cannot be parsed is an error, which never repeats the URL (it
// may hold a password).
func Open(url string, opts Options) (*Store, error) {
	ropts, err := redis.ParseURL(url)
	if err != nil && strings.Contains(url, "@") {
		// A password with an unencoded / ? or # ends the userinfo early,
		// and the parsers then quote the rest of it as a port, a path or
		// a query: say nothing that comes from the URL.
		return nil, errors.New("redisstore: open: bad URL (not shown: it holds a password; a / ? # or @ in a user name or password must be percent-encoded)")
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: open: bad URL: %w", redactURLError(err))
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	ropts.DialTimeout = opts.Timeout
	ropts.ReadTimeout = opts.Timeout
	ropts.WriteTimeout = opts.Timeout
	ropts.PoolTimeout = opts.Timeout
	ropts.ContextTimeoutEnabled = true
	// One retry, for a pooled connection that died with a Redis restart;
	// one dial attempt per try, so that a Redis that refuses connections
	// fails fast.
	ropts.MaxRetries = 1
	ropts.DialerRetries = 1
	// Maintenance notifications are a Redis Enterprise feature; asking
	// for them costs a round trip on every new connection.
	ropts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	client := redis.NewClient(ropts)
	return &Store{
		client:  client,
		limiter: redis_rate.NewLimiter(client),
		prefix:  opts.Prefix,
		timeout: opts.Timeout,
		subs:    map[*subscription]struct{}{},
	}, nil
}

// Client returns the go-redis client the store uses, for what the store
// does not do (inspection, tests). Keys written through it are not
// prefixed.
func (s *Store) Client() *redis.Client {
	return s.client
}

// Ping reports whether Redis answers PING.
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op, cancel := s.op(ctx)
	defer cancel()
	return s.fail(ctx, "ping", s.client.Ping(op).Err())
}

// Close stops every subscription, waiting for their goroutines, and
// closes the connections. Calling it again does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	subs := s.subs
	s.subs = nil
	s.mu.Unlock()
	for sub := range subs {
		sub.stop()
	}
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("redisstore: close: %w", err)
	}
	return nil
}

// op returns the context of one operation: ctx bounded by the store's
// timeout.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// key returns the Redis key for key.
func (s *Store) key(key string) string {
	return s.prefix + key
}

// fail turns the error of operation name into the store's: nil stays nil,
// the caller's context error when ctx is done, else an error that wraps
// state.ErrUnavailable and err. When the operation ran out of the store's
// timeout, err is not wrapped: the caller's context did not end, and
// errors.Is(err, context.DeadlineExceeded) must not say it did.
func (s *Store) fail(ctx context.Context, name string, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: redis %s: no answer within %v", state.ErrUnavailable, name, s.timeout)
	}
	return fmt.Errorf("%w: redis %s: %w", state.ErrUnavailable, name, err)
}

// redactURLError returns err without the URL that url.Parse puts in its
// errors.
func redactURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// millis returns d for a Redis PX argument: 0 for none when d is not
// positive, else d rounded up to a whole millisecond (down, for the few
// durations within a millisecond of the largest, where rounding up would
// overflow into a negative duration, which go-redis reads as no expiry).
func millis(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if d > math.MaxInt64-(time.Millisecond-1) {
		return d.Truncate(time.Millisecond)
	}
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}
