// Package redisstore is a state.Store on Redis, for a fleet of mcp-tools
// replicas that must agree on budgets, single uses, rate limits and
// sessions, and that send each other messages.
//
// Open takes a redis:// or rediss:// (TLS) URL,
// redis://[user:pass@]host:port/db, and connects lazily: a Redis that is
// down when the server starts is not an error (the server reports
// not-ready until Ping answers), but a malformed URL is.
//
// # What each primitive costs
//
// Every call is one round trip to Redis, bounded by Options.Timeout:
//
//   - Get: GET, or GETEX PX when refreshing.
//   - Set, SetNX: SET with PX (and NX).
//   - Delete: one DEL for all the keys.
//   - Take: one Lua script that checks and INCRs atomically and sets
//     PEXPIRE; EVALSHA, plus one EVAL the first time after Redis lost
//     its script cache (a restart).
//   - Allow: one Lua script (github.com/go-redis/redis_rate, GCRA on the
//     Redis clock), EVALSHA as for Take.
//   - Publish: PUBLISH; Redis fans the message out.
//   - Ping: PING.
//   - Subscribe: one connection of its own per subscription, held until
//     stop, plus one round trip to confirm the subscription before
//     Subscribe returns (bounded by Options.Timeout; if Redis does not
//     answer in time, the subscription starts when it comes back). An
//     idle subscription PINGs Redis every few seconds to notice a lost
//     connection.
//
// # Errors
//
// An error that comes from Redis or the network wraps
// state.ErrUnavailable, except Take's on a key that holds a value that is
// not a decimal integer (as with a Memory store, trying again would not
// help); when the caller's context is done the context's error is
// returned instead. go-redis retries a command once (MaxRetries
// 1) so that a pooled connection that died with a Redis restart costs no
// error, and every operation, retries included, ends after
// Options.Timeout.
//
// # Limits
//
//   - One Redis server (or a proxy in front of several); Redis Cluster and
//     Sentinel URLs are not supported. Redis 6.2 or later (GETEX).
//   - Redis replicates asynchronously: a failover to a replica can lose
//     the last writes, and with them a budget's last Takes or a
//     single-use mark.
//   - Times to live have millisecond resolution; a positive duration
//     under 1ms counts as 1ms.
//   - Keys are Options.Prefix + key; the rate limiter's are
//     "rate:" + Options.Prefix + key (redis_rate adds "rate:"), and
//     channels are Options.Prefix + channel. An ACL for the store must
//     allow both key patterns.
//   - Publish/Subscribe is Redis Pub/Sub: at most once, no history. A
//     subscriber that is disconnected misses what is published until it
//     has resubscribed (go-redis does that on reconnect). A subscriber
//     whose fn falls 256 messages behind stalls its connection; a message
//     that cannot be queued for a minute is dropped.
//   - go-redis logs connection failures through its own process-wide
//     logger (standard error by default); a program that wants them
//     elsewhere calls redis.SetLogger.
package redisstore
