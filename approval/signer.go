package approval

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Errors from Signer.Verify; each is errors.Is-able through the error
// Verify returns.
var (
	ErrForged   = errors.New("the approval state is not one this server issued")
	ErrExpired  = errors.New("the approval state has expired")
	ErrReplayed = errors.New("the approval state was already used")
	ErrMismatch = errors.New("the approval state belongs to another call")
)

// Signer makes the opaque state a client echoes back with its answer
// tamper-proof: signed (HMAC-SHA256), bound to the session, the tool and the
// exact arguments, short-lived, and good for one use. Make one with
// NewSigner or NewSignerWith; it is safe for concurrent use.
type Signer struct {
	key      []byte
	previous []byte    // also verifies, until previousUntil; nil: none
	until    time.Time // when previous stops verifying
	ttl      time.Duration
	now      func() time.Time
	spend    SpendFunc

	mu   sync.Mutex
	used map[string]time.Time // nonce -> expiry, when spend is nil
}

// SpendFunc marks the single-use id spent until the given time, and
// reports whether this was its first use. A fleet of servers shares one
// (a state.Store's SetNX), so that a state replayed to another server is
// refused too. An error (the shared store is down) fails the Verify.
type SpendFunc func(ctx context.Context, id string, until time.Time) (first bool, err error)

// DefaultStateTTL is how long a state lives when NewSigner is given zero.
const DefaultStateTTL = 10 * time.Minute

// MaxStateLen is the longest state Verify reads; a longer one is ErrForged
// without being looked at (the states Sign makes are a few hundred bytes).
const MaxStateLen = 4096

// MinKeyLen is the shortest key SignerOptions accept.
const MinKeyLen = 32

// NewSigner returns a signer with a fresh random key whose states live ttl
// (zero or less: DefaultStateTTL), and which remembers spent states in
// memory. States from another signer, or from an earlier process, never
// verify.
func NewSigner(ttl time.Duration) *Signer {
	s, err := NewSignerWith(SignerOptions{TTL: ttl})
	if err != nil {
		panic("approval: " + err.Error())
	}
	return s
}

// SignerOptions configure NewSignerWith. The zero value is NewSigner(0).
type SignerOptions struct {
	// TTL is how long a state lives. Zero: DefaultStateTTL.
	TTL time.Duration
	// Key signs and verifies states: at least MinKeyLen bytes, the same on
	// every server that must verify another's states. Nil: a random key.
	Key []byte
	// Previous, when set, verifies states too (it never signs), until
	// PreviousUntil: a key being rotated out, kept for the states issued
	// under it that are still waiting for their answer.
	Previous      []byte
	PreviousUntil time.Time
	// Spend marks states used. Nil: a map in this process.
	Spend SpendFunc
}

// NewSignerWith returns a signer as opts say. It fails on a key shorter
// than MinKeyLen.
func NewSignerWith(opts SignerOptions) (*Signer, error) {
	if opts.TTL <= 0 {
		opts.TTL = DefaultStateTTL
	}
	s := &Signer{ttl: opts.TTL, now: time.Now, spend: opts.Spend, used: map[string]time.Time{}}
	switch {
	case opts.Key == nil:
		s.key = make([]byte, 32)
		if _, err := rand.Read(s.key); err != nil {
			return nil, fmt.Errorf("no randomness: %w", err)
		}
	case len(opts.Key) < MinKeyLen:
		return nil, fmt.Errorf("the state key is %d bytes, shorter than %d", len(opts.Key), MinKeyLen)
	default:
		s.key = bytes.Clone(opts.Key)
	}
	if opts.Previous != nil {
		if len(opts.Previous) < MinKeyLen {
			return nil, fmt.Errorf("the previous state key is %d bytes, shorter than %d", len(opts.Previous), MinKeyLen)
		}
		s.previous, s.until = bytes.Clone(opts.Previous), opts.PreviousUntil
	}
	return s, nil
}

// Binding is what a state is bound to: the call it was issued for.
type Binding struct {
	// Session is the session the call came from.
	Session string
	// Tool is the name of the tool called.
	Tool string
	// Args are the call's arguments; their spacing and key order do not
	// matter.
	Args json.RawMessage
	// CallID identifies the call further, when the caller has an id for
	// it ("" binds to no id).
	CallID string
}

type payload struct {
	Session string `json:"s"`
	Tool    string `json:"t"`
	CallID  string `json:"c,omitempty"`
	Args    string `json:"a"` // sha256 of the canonical arguments
	Expiry  int64  `json:"e"` // unix milliseconds
	Nonce   string `json:"n"`
}

// canonicalHash hashes args re-marshalled (encoding/json sorts keys), so
// spacing and key order do not matter; numbers keep their text, so two
// integers past 2^53 that round to the same float64 are not one call.
func canonicalHash(args json.RawMessage) string {
	sum := sha256.Sum256(canonicalExact(args))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// canonicalExact is canonical with each number as it was written. It
// returns raw itself when raw is not JSON.
func canonicalExact(raw json.RawMessage) []byte {
	if !json.Valid(raw) {
		return raw
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// Sign returns the state for the call b: an opaque, URL-safe token holding
// the session, the tool, a digest of the canonical arguments, an expiry and
// a random nonce, followed by their HMAC-SHA256.
func (s *Signer) Sign(b Binding) string {
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	p, _ := json.Marshal(payload{
		Session: b.Session, Tool: b.Tool, CallID: b.CallID, Args: canonicalHash(b.Args),
		Expiry: s.now().Add(s.ttl).UnixMilli(), Nonce: base64.RawURLEncoding.EncodeToString(nonce[:]),
	})
	enc := base64.RawURLEncoding.EncodeToString(p)
	return enc + "." + base64.RawURLEncoding.EncodeToString(s.mac(enc))
}

func (s *Signer) mac(enc string) []byte { return macWith(s.key, enc) }

func macWith(key []byte, enc string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(enc))
	return m.Sum(nil)
}

// macOK reports whether sig is enc's MAC under the key, or under the
// previous key while it is still accepted.
func (s *Signer) macOK(enc string, sig []byte) bool {
	if hmac.Equal(sig, s.mac(enc)) {
		return true
	}
	return s.previous != nil && s.now().Before(s.until) && hmac.Equal(sig, macWith(s.previous, enc))
}

// stateEncoding reads states strictly: one text per byte string, so a
// state cannot be changed without changing what it says.
var stateEncoding = base64.RawURLEncoding.Strict()

// open checks a state's MAC and returns its payload.
func (s *Signer) open(state string) (payload, error) {
	if len(state) > MaxStateLen {
		return payload{}, ErrForged
	}
	enc, sig, ok := strings.Cut(state, ".")
	if !ok || enc == "" || sig == "" {
		return payload{}, ErrForged
	}
	got, err := stateEncoding.DecodeString(sig)
	if err != nil || !s.macOK(enc, got) {
		return payload{}, ErrForged
	}
	raw, err := stateEncoding.DecodeString(enc)
	if err != nil {
		return payload{}, ErrForged
	}
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return payload{}, ErrForged
	}
	return p, nil
}

// Verify checks a state against the call it comes back with. A state
// verifies once: a second Verify of it is ErrReplayed, on this signer or on
// any other sharing its Spend. A state that does not match the call is not
// used up.
//
// The checks run in this order: the MAC (ErrForged), the binding
// (ErrMismatch), the age (ErrExpired), single use (ErrReplayed, or the
// Spend function's error). An expired state is never good for anything, so
// callers must not treat it as an answer of any kind.
func (s *Signer) Verify(ctx context.Context, state string, b Binding) error {
	p, err := s.open(state)
	if err != nil {
		return err
	}
	if p.Session != b.Session || p.Tool != b.Tool || p.CallID != b.CallID || p.Args != canonicalHash(b.Args) {
		return fmt.Errorf("%w: it was issued for another session, tool, call or arguments", ErrMismatch)
	}
	now := s.now()
	if now.UnixMilli() > p.Expiry {
		return ErrExpired
	}
	if s.spend != nil {
		first, err := s.spend(ctx, "approval-state:"+p.Nonce, time.UnixMilli(p.Expiry))
		if err != nil {
			return fmt.Errorf("approval state: %w", err)
		}
		if !first {
			return ErrReplayed
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, exp := range s.used {
		if now.UnixMilli() > exp.UnixMilli() {
			delete(s.used, n)
		}
	}
	if _, seen := s.used[p.Nonce]; seen {
		return ErrReplayed
	}
	s.used[p.Nonce] = time.UnixMilli(p.Expiry)
	return nil
}
