package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// errRateLimited says a JWKS fetch was wanted sooner than minInterval
// after the last one.
var errRateLimited = errors.New("jwks: fetched too recently to fetch again")

// keySet is an issuer's JWKS, fetched lazily: when the keys are older than
// refresh, and when a token names a key id the set does not have, at most
// once per minInterval either way. One fetch runs at a time; those who
// wanted it meanwhile use its result.
type keySet struct {
	url         string
	client      *http.Client
	refresh     time.Duration
	minInterval time.Duration
	now         func() time.Time

	fetchMu    sync.Mutex  // held during a fetch
	refreshing atomic.Bool // a background refresh is under way

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	gen       uint64    // bumped by every successful fetch
	fetched   time.Time // of the keys
	attempted time.Time // last fetch attempt, successful or not
}

// lookup returns the keys that may verify a signature by kid with alg
// (every usable key when kid is empty), refreshing the set when due and
// refetching it once for an unknown kid.
func (s *keySet) lookup(ctx context.Context, kid string, alg jose.SignatureAlgorithm) ([]jose.JSONWebKey, error) {
	keys, gen, fetched := s.snapshot()
	// A fetch outlives the request that started it, since others may be
	// waiting for it; DefaultHTTPTimeout bounds it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultHTTPTimeout)
	defer cancel()
	if s.now().Sub(fetched) >= s.refresh {
		if gen == 0 {
			// No keys yet: this request needs the fetch.
			if s.fetch(ctx, gen) == nil {
				keys, gen, _ = s.snapshot()
			}
		} else if s.refreshing.CompareAndSwap(false, true) {
			// Due for a refresh: it runs in the background, one at a
			// time, and requests go on with the keys they have, so an
			// issuer that is slow or down stalls no one. When it fails
			// the old keys stay in use.
			go func() {
				defer s.refreshing.Store(false)
				rctx, cancel := context.WithTimeout(context.Background(), DefaultHTTPTimeout)
				defer cancel()
				_ = s.fetch(rctx, gen)
			}()
		}
	}
	if found := match(keys, kid, alg); len(found) > 0 {
		return found, nil
	}
	if err := s.fetch(ctx, gen); err != nil {
		return nil, fmt.Errorf("key id %q: %w", kid, err)
	}
	keys, _, _ = s.snapshot()
	if found := match(keys, kid, alg); len(found) > 0 {
		return found, nil
	}
	return nil, fmt.Errorf("key id %q for %s: not in the issuer's JWKS", kid, alg)
}

func (s *keySet) snapshot() ([]jose.JSONWebKey, uint64, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys, s.gen, s.fetched
}

func match(keys []jose.JSONWebKey, kid string, alg jose.SignatureAlgorithm) []jose.JSONWebKey {
	var found []jose.JSONWebKey
	for _, k := range keys {
		if (kid == "" || k.KeyID == kid) && usable(k, alg) {
			found = append(found, k)
		}
	}
	return found
}

// fetch gets the JWKS unless a fetch after generation seen succeeded
// meanwhile (then it returns nil), or the last attempt was less than
// minInterval ago (errRateLimited).
func (s *keySet) fetch(ctx context.Context, seen uint64) error {
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	s.mu.Lock()
	if s.gen != seen {
		s.mu.Unlock()
		return nil
	}
	now := s.now()
	if s.gen > 0 && now.Sub(s.attempted) < s.minInterval {
		s.mu.Unlock()
		return errRateLimited
	}
	s.attempted = now
	s.mu.Unlock()

	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	found, err := getJSON(ctx, s.client, s.url, &doc)
	if err == nil && !found {
		err = fmt.Errorf("%s: not found", s.url)
	}
	if err != nil {
		return fmt.Errorf("auth: jwks: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, min(len(doc.Keys), MaxKeys))
	for _, raw := range doc.Keys {
		if len(keys) == MaxKeys {
			break
		}
		var k jose.JSONWebKey
		// A key this library cannot read (another kty, a private or
		// malformed key) is skipped; the others still serve.
		if err := json.Unmarshal(raw, &k); err != nil || !k.IsPublic() {
			continue
		}
		keys = append(keys, k)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = keys
	s.gen++
	s.fetched = s.now()
	return nil
}
