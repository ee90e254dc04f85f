package state

import (
	"bytes"
	"context"
	"sync"
)

// memoryQueue is how many messages a Memory subscriber may have waiting.
const memoryQueue = 256

// bus is a Memory store's publish/subscribe.
type bus struct {
	mu     sync.RWMutex
	subs   map[string]map[*subscriber]struct{}
	closed bool
}

// subscriber is one Subscribe: a queue and the goroutine that drains it.
type subscriber struct {
	queue    chan []byte
	done     chan struct{}
	exited   chan struct{}
	stopOnce sync.Once
}

// Publish hands a copy of msg to every subscriber of channel in this
// process, dropping it for a subscriber whose queue is full. It never
// blocks.
func (m *Memory) Publish(ctx context.Context, channel string, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.bus.mu.RLock()
	defer m.bus.mu.RUnlock()
	for s := range m.bus.subs[channel] {
		select {
		case s.queue <- bytes.Clone(msg):
		default:
		}
	}
	return nil
}

// Subscribe calls fn, from a goroutine of its own, with each message
// published on channel until stop is called. stop waits for a running fn
// and may be called more than once, but not from fn itself. Subscribe on
// a closed store returns a stop that does nothing, and fn is never
// called.
func (m *Memory) Subscribe(channel string, fn func(msg []byte)) (stop func()) {
	s := &subscriber{
		queue:  make(chan []byte, memoryQueue),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	b := &m.bus
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return func() {}
	}
	if b.subs[channel] == nil {
		b.subs[channel] = map[*subscriber]struct{}{}
	}
	b.subs[channel][s] = struct{}{}
	b.mu.Unlock()
	go s.run(fn)
	return func() {
		b.mu.Lock()
		if set := b.subs[channel]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(b.subs, channel)
			}
		}
		b.mu.Unlock()
		s.stop()
	}
}

// run calls fn with each queued message until the subscriber stops.
func (s *subscriber) run(fn func(msg []byte)) {
	defer close(s.exited)
	for {
		select {
		case <-s.done:
			return
		case msg := <-s.queue:
			// A stop that raced with the message wins.
			select {
			case <-s.done:
				return
			default:
			}
			fn(msg)
		}
	}
}

// stop ends the subscriber's goroutine and waits for it.
func (s *subscriber) stop() {
	s.stopOnce.Do(func() { close(s.done) })
	<-s.exited
}

// close stops every subscriber and refuses new ones.
func (b *bus) close() {
	b.mu.Lock()
	b.closed = true
	subs := b.subs
	b.subs = map[string]map[*subscriber]struct{}{}
	b.mu.Unlock()
	for _, set := range subs {
		for s := range set {
			s.stop()
		}
	}
}
