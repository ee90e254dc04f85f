package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/internal/testredis"
	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/state/statetest"
)

// bound is how long a call to a Redis that is down or silent may take
// before the test fails: generous, the tests check that calls return, not
// how fast.
const bound = 10 * time.Second

// open opens a store for url and closes it when the test ends.
func open(t *testing.T, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(url, opts)
	if err != nil {
		t.Fatalf("Open(%q): got %v, want nil", url, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// within runs call and fails the test if it does not return within bound.
func within(t *testing.T, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(bound):
		t.Fatalf("%s: did not return within %v", what, bound)
		return nil
	}
}

// eventually polls cond until it holds, failing the test after bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// calls returns one call of each method of s that takes a context.
func calls(s *Store) []struct {
	name string
	call func(ctx context.Context) error
} {
	return []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Get", func(ctx context.Context) error {
			_, err := s.Get(ctx, "k", 0)
			if errors.Is(err, state.ErrNotFound) {
				return nil
			}
			return err
		}},
		{"Get with refresh", func(ctx context.Context) error {
			_, err := s.Get(ctx, "k", time.Minute)
			if errors.Is(err, state.ErrNotFound) {
				return nil
			}
			return err
		}},
		{"Set", func(ctx context.Context) error { return s.Set(ctx, "k", []byte("v"), time.Minute) }},
		{"SetNX", func(ctx context.Context) error { _, err := s.SetNX(ctx, "nx", []byte("v"), time.Minute); return err }},
		{"Delete", func(ctx context.Context) error { return s.Delete(ctx, "k", "nx") }},
		{"Take", func(ctx context.Context) error { _, err := s.Take(ctx, "budget", 100, time.Minute); return err }},
		{"Allow", func(ctx context.Context) error { _, err := s.Allow(ctx, "rate", 100, 100); return err }},
		{"Publish", func(ctx context.Context) error { return s.Publish(ctx, "ch", []byte("m")) }},
		{"Ping", func(ctx context.Context) error { return s.Ping(ctx) }},
	}
}

func TestConformance(t *testing.T) {
	srv := testredis.Start(t)
	statetest.Run(t, func(t *testing.T) state.Store {
		// The suite checks what the store does, not how fast: a timeout
		// that a loaded test machine cannot miss.
		s, err := Open(srv.URL(), Options{Timeout: bound})
		if err != nil {
			t.Fatalf("Open: got %v, want nil", err)
		}
		return s
	})
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		wantErr bool
	}{
		{"redis", "redis://127.0.0.1:1/0", false},
		{"password and db", "redis://user:s3cret@127.0.0.1:1/3", false},
		{"tls", "rediss://redis.example:6380/0", false},
		{"unix socket", "unix:///run/redis.sock", false},
		{"default host and port", "redis://", false},
		{"empty", "", true},
		{"other scheme", "http://127.0.0.1:6379", true},
		{"bad port", "redis://user:s3cret@127.0.0.1:notaport/0", true},
		{"bad host", "redis://user:s3cret@bad host:6379/0", true},
		{"bad db", "redis://127.0.0.1:6379/notadb", true},
		{"two path parts", "redis://127.0.0.1:6379/0/1", true},
		{"unknown parameter", "redis://127.0.0.1:6379/0?nosuch=1", true},
		// A password with a character that should have been
		// percent-encoded ends the userinfo early: the rest of the URL
		// is then read as a port, a path or a query, and none of it
		// may be repeated in the error.
		{"password with slash", "redis://user:s3cret/s3cret@127.0.0.1:6379/0", true},
		{"digits before slash", "redis://user:1234/s3cret@127.0.0.1:6379/0", true},
		{"digits before slash, no db", "redis://:1234/s3cret@127.0.0.1:6379", true},
		{"password with question mark", "redis://user:s3cret?s3cret@127.0.0.1:6379/0", true},
		{"digits before question mark", "redis://user:1234?s3cret@127.0.0.1:6379/0", true},
		{"password with hash", "redis://user:s3cret#s3cret@127.0.0.1:6379/0", true},
		{"password with space", "redis://user:s3cret s3cret@127.0.0.1:6379/0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.url, Options{})
			if s != nil {
				defer s.Close()
			}
			if got := err != nil; got != tt.wantErr {
				t.Fatalf("Open(%q): got error %v, want error: %v", tt.url, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("Open(%q): error %q shows the password", tt.url, err)
			}
		})
	}
}

func TestNothingListening(t *testing.T) {
	// Open succeeds without Redis; each call then fails with
	// ErrUnavailable.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := open(t, "redis://"+addr+"/0", Options{})
	for _, c := range calls(s) {
		err := within(t, c.name, func() error { return c.call(context.Background()) })
		if !errors.Is(err, state.ErrUnavailable) {
			t.Errorf("%s with nothing listening: got %v, want ErrUnavailable", c.name, err)
		}
	}
}

// silentServer accepts connections and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

func TestSilentServer(t *testing.T) {
	addr := silentServer(t)
	t.Run("timeout", func(t *testing.T) {
		s := open(t, "redis://"+addr+"/0", Options{Timeout: 200 * time.Millisecond})
		for _, c := range calls(s) {
			err := within(t, c.name, func() error { return c.call(context.Background()) })
			if !errors.Is(err, state.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s to a server that does not answer: got %v, want ErrUnavailable and not context.DeadlineExceeded", c.name, err)
			}
		}
		// Subscribe gives up waiting for the confirmation; stop does not
		// wait for the server either.
		stop := make(chan func(), 1)
		within(t, "Subscribe", func() error {
			stop <- s.Subscribe("ch", func([]byte) {})
			return nil
		})
		within(t, "stop", func() error { (<-stop)(); return nil })
	})
	t.Run("caller deadline", func(t *testing.T) {
		// The caller's deadline comes before the store's timeout: the
		// caller gets its context's error.
		s := open(t, "redis://"+addr+"/0", Options{Timeout: time.Minute})
		for _, c := range calls(s) {
			err := within(t, c.name, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				return c.call(ctx)
			})
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, state.ErrUnavailable) {
				t.Errorf("%s past the caller's deadline: got %v, want context.DeadlineExceeded", c.name, err)
			}
		}
	})
}

func TestRedisGoesAwayAndComesBack(t *testing.T) {
	tests := []struct {
		name string
		down func(*testredis.Server)
	}{
		{"stop", (*testredis.Server).Stop},
		{"kill", (*testredis.Server).Kill},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testredis.Start(t)
			s := open(t, srv.URL(), Options{Timeout: 500 * time.Millisecond})
			ctx := t.Context()
			before := newCollector()
			defer s.Subscribe("ch", before.add)()
			if err := s.Publish(ctx, "ch", []byte("up")); err != nil {
				t.Fatalf("Publish: got %v, want nil", err)
			}
			before.waitFor(t, "up")

			tt.down(srv)
			for _, c := range calls(s) {
				err := within(t, c.name, func() error { return c.call(ctx) })
				if !errors.Is(err, state.ErrUnavailable) {
					t.Errorf("%s while Redis is down: got %v, want ErrUnavailable", c.name, err)
				}
			}
			during := newCollector()
			var stopDuring func()
			within(t, "Subscribe while Redis is down", func() error {
				stopDuring = s.Subscribe("ch", during.add)
				return nil
			})
			defer stopDuring()

			srv.Restart()
			eventually(t, "Ping after restart", func() bool { return s.Ping(ctx) == nil })
			for _, c := range calls(s) {
				if err := c.call(ctx); err != nil {
					t.Errorf("%s after restart: got %v, want nil", c.name, err)
				}
			}
			// Subscriptions resubscribe on their own; publish until both
			// have a message sent after the restart.
			for i := 0; ; i++ {
				msg := fmt.Sprintf("back-%d", i)
				if err := s.Publish(ctx, "ch", []byte(msg)); err != nil {
					t.Fatalf("Publish after restart: got %v, want nil", err)
				}
				if before.has("back-") && during.has("back-") {
					break
				}
				if i == int(bound/(50*time.Millisecond)) {
					t.Fatalf("after %d messages: subscription made before the restart got %q, one made while down got %q; want a message each",
						i, before.got(), during.got())
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	srv := testredis.Start(t)
	ctx := t.Context()
	a := open(t, srv.URL(), Options{Prefix: "a:"})
	b := open(t, srv.URL(), Options{Prefix: "b:"})
	def := open(t, srv.URL(), Options{})

	t.Run("values", func(t *testing.T) {
		if err := a.Set(ctx, "k", []byte("A"), 0); err != nil {
			t.Fatal(err)
		}
		if v, err := b.Get(ctx, "k", 0); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Get in b of a key set in a: got %q, %v, want ErrNotFound", v, err)
		}
		if ok, err := b.SetNX(ctx, "k", []byte("B"), 0); !ok || err != nil {
			t.Errorf("SetNX in b of a key set in a: got %v, %v, want true, nil", ok, err)
		}
		if v, err := a.Client().Get(ctx, "a:k").Result(); v != "A" || err != nil {
			t.Errorf("raw GET a:k: got %q, %v, want %q, nil", v, err, "A")
		}
	})
	t.Run("default prefix", func(t *testing.T) {
		if err := def.Set(ctx, "k", []byte("D"), 0); err != nil {
			t.Fatal(err)
		}
		if v, err := def.Client().Get(ctx, DefaultPrefix+"k").Result(); v != "D" || err != nil {
			t.Errorf("raw GET %sk: got %q, %v, want %q, nil", DefaultPrefix, v, err, "D")
		}
	})
	t.Run("counters", func(t *testing.T) {
		if ok, err := a.Take(ctx, "budget", 1, 0); !ok || err != nil {
			t.Fatalf("Take in a: got %v, %v, want true, nil", ok, err)
		}
		if ok, err := b.Take(ctx, "budget", 1, 0); !ok || err != nil {
			t.Errorf("Take in b of a counter full in a: got %v, %v, want true, nil", ok, err)
		}
		if w, err := a.Allow(ctx, "rate", 0.01, 1); w != 0 || err != nil {
			t.Fatalf("Allow in a: got %v, %v, want 0, nil", w, err)
		}
		if w, err := b.Allow(ctx, "rate", 0.01, 1); w != 0 || err != nil {
			t.Errorf("Allow in b of a limiter exhausted in a: got %v, %v, want 0, nil", w, err)
		}
	})
	t.Run("channels", func(t *testing.T) {
		got := newCollector()
		defer b.Subscribe("ch", got.add)()
		if err := a.Publish(ctx, "ch", []byte("from a")); err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, "ch", []byte("from b")); err != nil {
			t.Fatal(err)
		}
		// Redis delivers in order: once b's message is in, a's would be.
		got.waitFor(t, "from b")
		if msgs := got.got(); len(msgs) != 1 {
			t.Errorf("messages on b's channel: got %q, want only %q", msgs, "from b")
		}
	})
}

func TestMillis(t *testing.T) {
	tests := []struct {
		in, want time.Duration
	}{
		{0, 0},
		{-time.Second, 0},
		{time.Nanosecond, time.Millisecond},
		{time.Millisecond, time.Millisecond},
		{1500 * time.Microsecond, 2 * time.Millisecond},
		{time.Hour, time.Hour},
		// "Forever" as the largest Duration: rounding up must not wrap
		// round to a negative duration, which go-redis reads as none.
		{math.MaxInt64, time.Duration(math.MaxInt64).Truncate(time.Millisecond)},
		{math.MaxInt64 - time.Millisecond, time.Duration(math.MaxInt64).Truncate(time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			if got := millis(tt.in); got != tt.want {
				t.Errorf("millis(%v): got %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// collector gathers the messages a subscriber receives.
type collector struct {
	mu   sync.Mutex
	msgs []string
}

func newCollector() *collector { return &collector{} }

// add is a subscriber's fn.
func (c *collector) add(msg []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, string(msg))
}

// got returns a copy of the messages so far.
func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

// has reports whether a message starting with prefix arrived.
func (c *collector) has(prefix string) bool {
	for _, m := range c.got() {
		if strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}

// waitFor waits for msg.
func (c *collector) waitFor(t *testing.T, msg string) {
	t.Helper()
	eventually(t, "message "+msg, func() bool { return c.has(msg) })
}
