package statetest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/state"
)

// collector gathers the messages a subscriber receives.
type collector struct {
	mu   sync.Mutex
	msgs []string
}

// add is a subscriber's fn.
func (c *collector) add(msg []byte) {
	c.mu.Lock()
	c.msgs = append(c.msgs, string(msg))
	c.mu.Unlock()
}

// got returns a copy of the messages so far.
func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

// waitFor waits until the collector holds n messages.
func (c *collector) waitFor(t *testing.T, n int) []string {
	t.Helper()
	eventually(t, fmt.Sprintf("%d messages received", n), func() bool { return len(c.got()) >= n })
	return c.got()
}

// publish sends msg on channel and fails the test on any error.
func publish(t *testing.T, s state.Store, channel, msg string) {
	t.Helper()
	if err := s.Publish(ctx(t), channel, []byte(msg)); err != nil {
		t.Fatalf("Publish(%q): got %v, want nil", channel, err)
	}
}

func testPublishInOrder(t *testing.T, s state.Store, k keys) {
	const n = 20
	ch := k.of("ch")
	var a, b collector
	stopA := s.Subscribe(ch, a.add)
	defer stopA()
	stopB := s.Subscribe(ch, b.add)
	defer stopB()
	var want []string
	for i := range n {
		want = append(want, strconv.Itoa(i))
		publish(t, s, ch, strconv.Itoa(i))
	}
	for name, c := range map[string]*collector{"first": &a, "second": &b} {
		if got := c.waitFor(t, n); !slices.Equal(got, want) {
			t.Errorf("%s subscriber: got %q, want %q", name, got, want)
		}
	}
	// A message on another channel reaches neither.
	publish(t, s, k.of("other"), "elsewhere")
	publish(t, s, ch, "last")
	want = append(want, "last")
	for name, c := range map[string]*collector{"first": &a, "second": &b} {
		if got := c.waitFor(t, n+1); !slices.Equal(got, want) {
			t.Errorf("%s subscriber after a message on another channel: got %q, want %q", name, got, want)
		}
	}
}

func testStopStopsDelivery(t *testing.T, s state.Store, k keys) {
	ch := k.of("ch")
	var stopped, witness collector
	stop := s.Subscribe(ch, stopped.add)
	stopWitness := s.Subscribe(ch, witness.add)
	defer stopWitness()
	publish(t, s, ch, "before")
	stopped.waitFor(t, 1)
	witness.waitFor(t, 1)
	stop()
	stop() // a second call does nothing
	publish(t, s, ch, "after")
	// Once the witness has the message, the stopped subscriber would have
	// had time to get it too.
	witness.waitFor(t, 2)
	if got := stopped.got(); !slices.Equal(got, []string{"before"}) {
		t.Errorf("messages of a stopped subscriber: got %q, want %q", got, []string{"before"})
	}
}

func testStopWaitsForFn(t *testing.T, s state.Store, k keys) {
	ch := k.of("ch")
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	stop := s.Subscribe(ch, func([]byte) {
		once.Do(func() { close(entered) })
		<-release
	})
	publish(t, s, ch, "hold")
	select {
	case <-entered:
	case <-time.After(deadline):
		close(release)
		t.Fatalf("fn not called after %v", deadline)
	}
	stopped := make(chan struct{})
	go func() {
		stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Error("stop returned while fn was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-stopped:
	case <-time.After(deadline):
		t.Fatalf("stop did not return %v after fn did", deadline)
	}
}

func testPublishFromFn(t *testing.T, s state.Store, k keys) {
	ping, pong := k.of("ping"), k.of("pong")
	var pongs, pings collector
	stopPong := s.Subscribe(pong, pongs.add)
	defer stopPong()
	stopPing := s.Subscribe(ping, func(msg []byte) {
		pings.add(msg)
		// Publish from inside fn, to another channel and to this one.
		if err := s.Publish(context.Background(), pong, append([]byte("re:"), msg...)); err != nil {
			t.Errorf("Publish from fn: got %v, want nil", err)
		}
		if string(msg) == "1" {
			if err := s.Publish(context.Background(), ping, []byte("2")); err != nil {
				t.Errorf("Publish from fn to its own channel: got %v, want nil", err)
			}
		}
	})
	defer stopPing()
	publish(t, s, ping, "1")
	if got, want := pongs.waitFor(t, 2), []string{"re:1", "re:2"}; !slices.Equal(got, want) {
		t.Errorf("messages published from fn: got %q, want %q", got, want)
	}
	if got, want := pings.got(), []string{"1", "2"}; !slices.Equal(got, want) {
		t.Errorf("messages of the subscriber that published: got %q, want %q", got, want)
	}
}

func testCloseStopsSubscriptions(t *testing.T, s state.Store, k keys) {
	ch := k.of("ch")
	var c collector
	stop := s.Subscribe(ch, c.add)
	publish(t, s, ch, "before")
	c.waitFor(t, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
	case <-time.After(deadline):
		t.Fatalf("Close did not return after %v", deadline)
	}
	stopped := make(chan struct{})
	go func() {
		stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(deadline):
		t.Fatalf("stop after Close did not return after %v", deadline)
	}
	if got := c.got(); !slices.Equal(got, []string{"before"}) {
		t.Errorf("messages after Close: got %q, want %q", got, []string{"before"})
	}
}
