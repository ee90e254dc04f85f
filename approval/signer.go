package approval

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors from Signer.Verify.
var (
	ErrForged   = errors.New("the approval state is not one this server issued")
	ErrExpired  = errors.New("the approval state has expired")
	ErrReplayed = errors.New("the approval state was already used")
	ErrMismatch = errors.New("the approval state belongs to another call")
)

// Signer makes the opaque state a client echoes back with its answer
// tamper-proof: signed with a per-process random key, bound to the session,
// the tool and the exact arguments, short-lived, and good for one use.
type Signer struct {
	key [32]byte
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // nonce -> expiry
}

// NewSigner returns a signer whose states live ttl (zero: 10 minutes).
func NewSigner(ttl time.Duration) *Signer {
	if ttl <= 0 {
		ttl = 10 * time.Minute
	}
	s := &Signer{ttl: ttl, now: time.Now, used: map[string]time.Time{}}
	if _, err := rand.Read(s.key[:]); err != nil {
		panic("approval: no randomness: " + err.Error())
	}
	return s
}

// Binding is what a state is bound to.
type Binding struct {
	Session string
	Tool    string
	Args    json.RawMessage
}

type payload struct {
	Session string `json:"s"`
	Tool    string `json:"t"`
	Args    string `json:"a"` // sha256 of the canonical arguments
	Expiry  int64  `json:"e"` // unix milliseconds
	Nonce   string `json:"n"`
}

// canonicalHash hashes args re-marshalled (encoding/json sorts keys), so
// spacing and key order do not matter.
func canonicalHash(args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	sum := sha256.Sum256(args)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Sign returns the state for a call.
func (s *Signer) Sign(b Binding) string {
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	p, _ := json.Marshal(payload{
		Session: b.Session, Tool: b.Tool, Args: canonicalHash(b.Args),
		Expiry: s.now().Add(s.ttl).UnixMilli(), Nonce: base64.RawURLEncoding.EncodeToString(nonce[:]),
	})
	enc := base64.RawURLEncoding.EncodeToString(p)
	return enc + "." + base64.RawURLEncoding.EncodeToString(s.mac(enc))
}

func (s *Signer) mac(enc string) []byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(enc))
	return m.Sum(nil)
}

// open checks a state's MAC and returns its payload.
func (s *Signer) open(state string) (payload, error) {
	enc, sig, ok := bytesCut(state)
	if !ok {
		return payload{}, ErrForged
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(enc)) {
		return payload{}, ErrForged
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return payload{}, ErrForged
	}
	var p payload
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&p); err != nil {
		return payload{}, ErrForged
	}
	return p, nil
}

// Verify checks a state against the call it comes back with. A state
// verifies once: a second Verify of it is ErrReplayed. A state that does not
// match the call is not used up.
//
// The checks run in this order: the MAC (ErrForged), the binding
// (ErrMismatch), the age (ErrExpired), single use (ErrReplayed). An expired
// state is never good for anything, so callers must not treat it as an
// answer of any kind.
func (s *Signer) Verify(state string, b Binding) error {
	p, err := s.open(state)
	if err != nil {
		return err
	}
	if p.Session != b.Session || p.Tool != b.Tool || p.Args != canonicalHash(b.Args) {
		return fmt.Errorf("%w: it was issued for another session, tool or arguments", ErrMismatch)
	}
	now := s.now()
	if now.UnixMilli() > p.Expiry {
		return ErrExpired
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

func bytesCut(s string) (string, string, bool) {
	i := bytes.LastIndexByte([]byte(s), '.')
	if i <= 0 || i == len(s)-1 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}
