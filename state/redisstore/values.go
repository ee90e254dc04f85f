package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-tools/mcp-tools/state"
)

// Get returns the value at key, or state.ErrNotFound; a positive refresh
// sets the key's time to live in the same command (GETEX PX).
func (s *Store) Get(ctx context.Context, key string, refresh time.Duration) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	op, cancel := s.op(ctx)
	defer cancel()
	var cmd *redis.StringCmd
	if refresh > 0 {
		cmd = s.client.GetEx(op, s.key(key), millis(refresh))
	} else {
		cmd = s.client.Get(op, s.key(key))
	}
	v, err := cmd.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, state.ErrNotFound
	}
	if err != nil {
		return nil, s.fail(ctx, "get", err)
	}
	return v, nil
}

// Set stores value at key for ttl (SET PX).
func (s *Store) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op, cancel := s.op(ctx)
	defer cancel()
	return s.fail(ctx, "set", s.client.Set(op, s.key(key), value, millis(ttl)).Err())
}

// SetNX stores value at key for ttl unless key holds a value (SET PX NX).
func (s *Store) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	op, cancel := s.op(ctx)
	defer cancel()
	ok, err := s.client.SetNX(op, s.key(key), value, millis(ttl)).Result()
	if err != nil {
		return false, s.fail(ctx, "setnx", err)
	}
	return ok, nil
}

// Delete removes keys (one DEL).
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	prefixed := make([]string, len(keys))
	for i, k := range keys {
		prefixed[i] = s.key(k)
	}
	op, cancel := s.op(ctx)
	defer cancel()
	return s.fail(ctx, "del", s.client.Del(op, prefixed...).Err())
}
