package redisstore

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// subscriberQueue is how many messages go-redis buffers for a
// subscription whose fn is busy.
const subscriberQueue = 256

// subscription is one Subscribe: a go-redis PubSub and the goroutine that
// calls fn.
type subscription struct {
	ps       *redis.PubSub
	done     chan struct{}
	exited   chan struct{}
	stopOnce sync.Once
}

// Publish sends msg on channel (PUBLISH).
func (s *Store) Publish(ctx context.Context, channel string, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op, cancel := s.op(ctx)
	defer cancel()
	return s.fail(ctx, "publish", s.client.Publish(op, s.key(channel), msg).Err())
}

// Subscribe subscribes to channel on a connection of its own and waits,
// for at most the store's timeout, for Redis to confirm, so that a
// message published after Subscribe returns is delivered. If Redis does
// not answer, the subscription starts when it does. fn runs on a goroutine
// of the subscription. stop may be called more than once, but not from fn.
func (s *Store) Subscribe(channel string, fn func(msg []byte)) (stop func()) {
	if s.isClosed() {
		return func() {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	ps := s.client.Subscribe(ctx, s.key(channel))
	// The first reply is the confirmation; on an error go-redis has
	// dropped the connection and the channel below reconnects.
	_, _ = ps.Receive(ctx)
	cancel()

	sub := &subscription{ps: ps, done: make(chan struct{}), exited: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ps.Close()
		return func() {}
	}
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	go sub.run(ps.Channel(redis.WithChannelSize(subscriberQueue)), fn)
	return func() {
		s.mu.Lock()
		delete(s.subs, sub)
		s.mu.Unlock()
		sub.stop()
	}
}

// isClosed reports whether Close was called.
func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// run calls fn with each message until the subscription stops.
func (sub *subscription) run(ch <-chan *redis.Message, fn func(msg []byte)) {
	defer close(sub.exited)
	for {
		select {
		case <-sub.done:
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			// A stop that raced with the message wins.
			select {
			case <-sub.done:
				return
			default:
			}
			fn([]byte(msg.Payload))
		}
	}
}

// stop closes the PubSub, ends the goroutine and waits for it.
func (sub *subscription) stop() {
	sub.stopOnce.Do(func() {
		close(sub.done)
		_ = sub.ps.Close()
	})
	<-sub.exited
}
