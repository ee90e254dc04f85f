package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// take adds one to the counter at KEYS[1] unless it holds ARGV[1] or
// more, and then sets its time to live to ARGV[2] milliseconds when that
// is positive. It returns 1 when it added, else 0, and the error
// notInteger when the key holds something else than a decimal integer
// (Lua's tonumber alone would take "0x10", "1e3" or " 5" and compare them
// with the limit, which INCR then refuses).
var take = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
local n = 0
if v then
  if not string.match(v, '^-?%d+$') then
    return redis.error_reply('` + notInteger + `')
  end
  n = tonumber(v)
end
if n >= tonumber(ARGV[1]) then
  return 0
end
redis.call('INCR', KEYS[1])
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
`)

// notInteger is the error of Take on a key that holds a value that is not
// a decimal integer.
const notInteger = "value is not an integer"

// Take adds one to the counter at key unless it holds limit or more, in
// one Lua script.
func (s *Store) Take(ctx context.Context, key string, limit int64, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if limit <= 0 {
		return false, nil
	}
	op, cancel := s.op(ctx)
	defer cancel()
	n, err := take.Run(op, s.client, []string{s.key(key)}, limit, millis(ttl).Milliseconds()).Int()
	if rerr := redis.Error(nil); errors.As(err, &rerr) && strings.Contains(rerr.Error(), notInteger) {
		// What the key holds, not Redis being unavailable: trying again
		// would not help. ("value is not an integer or out of range" is
		// INCR's own reply.)
		return false, fmt.Errorf("redisstore: take %q: %s", key, notInteger)
	}
	if err != nil {
		return false, s.fail(ctx, "take", err)
	}
	return n == 1, nil
}

// maxPeriod is the longest interval between events Allow asks redis_rate
// for, 2^62 ns (about 146 years): a wait of up to one period, turned into
// seconds and back, still fits in a time.Duration.
const maxPeriod = 1 << 62

// Allow asks the rate limiter at key for one event, with redis_rate's GCRA
// script: rate events a second, bursts of up to burst (less than 1 counts
// as 1). A rate of +Inf allows everything without asking Redis; a rate
// that is not positive is an error; an interval between events longer
// than maxPeriod (about 146 years) counts as maxPeriod.
func (s *Store) Allow(ctx context.Context, key string, rate float64, burst int) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if !(rate > 0) {
		return 0, fmt.Errorf("redisstore: allow %q: rate %v is not positive", key, rate)
	}
	if math.IsInf(rate, 1) {
		return 0, nil
	}
	// The period is clamped in floating point before the conversion: a
	// float64 too large for a Duration converts to a value that depends
	// on the platform (math.MinInt64 on amd64, which would make the
	// period 1ns and lift the limit altogether), and redis_rate turns the
	// wait, up to one period, back into a Duration the same way.
	period := time.Duration(maxPeriod)
	if f := float64(time.Second) / rate; f < maxPeriod {
		period = max(time.Duration(f), time.Nanosecond)
	}
	limit := redis_rate.Limit{
		Rate:   1,
		Burst:  max(burst, 1),
		Period: period,
	}
	op, cancel := s.op(ctx)
	defer cancel()
	res, err := s.limiter.Allow(op, s.key(key), limit)
	if err != nil {
		return 0, s.fail(ctx, "allow", err)
	}
	if res.Allowed > 0 {
		return 0, nil
	}
	return max(res.RetryAfter, time.Nanosecond), nil
}
