package approval_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/approval"
)

// testSigner returns a signer on a clock the test moves.
func testSigner(ttl time.Duration) (*approval.Signer, *time.Time) {
	now := time.Unix(1_700_000_000, 0)
	s := approval.NewSigner(ttl)
	approval.SetClock(s, func() time.Time { return now })
	return s, &now
}

// tamper re-encodes a state's payload after change, keeping its MAC.
func tamper(t *testing.T, state string, change func(map[string]any)) string {
	t.Helper()
	enc, mac, _ := strings.Cut(state, ".")
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	change(p)
	raw, _ = json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(raw) + "." + mac
}

// flipLast changes the last character of s to another valid one.
func flipLast(s string) string {
	last := s[len(s)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return s[:len(s)-1] + string(repl)
}

func TestSignerVerify(t *testing.T) {
	b := approval.Binding{Session: "s1", Tool: "send_mail", Args: json.RawMessage(`{"a":1,"b":[2,3]}`), CallID: "7"}
	tests := []struct {
		name  string
		state func(t *testing.T, s *approval.Signer) string
		b     approval.Binding
		want  error
	}{
		{name: "genuine", b: b},
		{name: "same args in another key order and spacing", b: approval.Binding{Session: "s1", Tool: "send_mail", Args: json.RawMessage(` { "b" : [2, 3], "a": 1 }`), CallID: "7"}},
		{name: "other session", b: approval.Binding{Session: "s2", Tool: b.Tool, Args: b.Args, CallID: b.CallID}, want: approval.ErrMismatch},
		{name: "other tool", b: approval.Binding{Session: b.Session, Tool: "file_write", Args: b.Args, CallID: b.CallID}, want: approval.ErrMismatch},
		{name: "other args", b: approval.Binding{Session: b.Session, Tool: b.Tool, Args: json.RawMessage(`{"a":1,"b":[3,2]}`), CallID: b.CallID}, want: approval.ErrMismatch},
		{name: "other call", b: approval.Binding{Session: b.Session, Tool: b.Tool, Args: b.Args, CallID: "8"}, want: approval.ErrMismatch},
		// Past 2^53 two integers can be the same float64: the state is
		// bound to the exact number, not to its nearest float64.
		{name: "other large integer", b: approval.Binding{Session: b.Session, Tool: b.Tool, Args: json.RawMessage(`{"account":9007199254740993}`), CallID: b.CallID},
			want: approval.ErrMismatch, state: func(t *testing.T, s *approval.Signer) string {
				return s.Sign(approval.Binding{Session: b.Session, Tool: b.Tool, Args: json.RawMessage(`{"account":9007199254740992}`), CallID: b.CallID})
			}},
		{name: "same large integer in another key order", b: approval.Binding{Session: b.Session, Tool: b.Tool, Args: json.RawMessage(`{"z":0.1,"account":9007199254740993}`), CallID: b.CallID},
			state: func(t *testing.T, s *approval.Signer) string {
				return s.Sign(approval.Binding{Session: b.Session, Tool: b.Tool, Args: json.RawMessage(`{"account": 9007199254740993, "z": 0.1}`), CallID: b.CallID})
			}},
		{name: "tampered payload", b: b, want: approval.ErrForged, state: func(t *testing.T, s *approval.Signer) string {
			return tamper(t, s.Sign(approval.Binding{Session: "s0", Tool: b.Tool, Args: b.Args, CallID: b.CallID}), func(p map[string]any) { p["s"] = "s1" })
		}},
		{name: "tampered expiry", b: b, want: approval.ErrForged, state: func(t *testing.T, s *approval.Signer) string {
			return tamper(t, s.Sign(b), func(p map[string]any) { p["e"] = p["e"].(float64) + 1e9 })
		}},
		{name: "tampered MAC", b: b, want: approval.ErrForged, state: func(t *testing.T, s *approval.Signer) string { return flipLast(s.Sign(b)) }},
		{name: "MAC cut", b: b, want: approval.ErrForged, state: func(t *testing.T, s *approval.Signer) string { st := s.Sign(b); return st[:len(st)-4] }},
		{name: "MAC missing", b: b, want: approval.ErrForged, state: func(t *testing.T, s *approval.Signer) string {
			st, _, _ := strings.Cut(s.Sign(b), ".")
			return st + "."
		}},
		{name: "another signer's state", b: b, want: approval.ErrForged, state: func(t *testing.T, s *approval.Signer) string { return approval.NewSigner(0).Sign(b) }},
		{name: "empty", b: b, want: approval.ErrForged, state: func(*testing.T, *approval.Signer) string { return "" }},
		{name: "garbage", b: b, want: approval.ErrForged, state: func(*testing.T, *approval.Signer) string { return "not a state at all" }},
		{name: "garbage with a dot", b: b, want: approval.ErrForged, state: func(*testing.T, *approval.Signer) string { return "e30.%%%" }},
		{name: "over MaxStateLen", b: b, want: approval.ErrForged, state: func(*testing.T, *approval.Signer) string {
			return strings.Repeat("A", approval.MaxStateLen) + ".AAAA"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := testSigner(time.Minute)
			state := s.Sign(b)
			if tt.state != nil {
				state = tt.state(t, s)
			}
			if err := s.Verify(t.Context(), state, tt.b); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSignerSingleUse(t *testing.T) {
	s, _ := testSigner(time.Minute)
	b := approval.Binding{Session: "s1", Tool: "t", Args: json.RawMessage(`{}`)}
	state := s.Sign(b)
	// A state that does not match is not used up by the attempt.
	if err := s.Verify(t.Context(), state, approval.Binding{Session: "s2", Tool: "t", Args: b.Args}); !errors.Is(err, approval.ErrMismatch) {
		t.Fatalf("Verify(other session) = %v, want ErrMismatch", err)
	}
	if err := s.Verify(t.Context(), state, b); err != nil {
		t.Fatalf("first Verify = %v, want nil", err)
	}
	if err := s.Verify(t.Context(), state, b); !errors.Is(err, approval.ErrReplayed) {
		t.Errorf("second Verify = %v, want ErrReplayed", err)
	}
	// Two states for the same call are independent.
	if err := s.Verify(t.Context(), s.Sign(b), b); err != nil {
		t.Errorf("Verify(fresh state for the same call) = %v, want nil", err)
	}
}

func TestSignerExpiry(t *testing.T) {
	tests := []struct {
		name  string
		ttl   time.Duration
		after time.Duration
		want  error
	}{
		{name: "just in time", ttl: time.Minute, after: time.Minute},
		{name: "too late", ttl: time.Minute, after: time.Minute + time.Millisecond, want: approval.ErrExpired},
		{name: "zero ttl is the default", ttl: 0, after: approval.DefaultStateTTL},
		{name: "zero ttl is the default, too late", ttl: 0, after: approval.DefaultStateTTL + time.Second, want: approval.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, now := testSigner(tt.ttl)
			b := approval.Binding{Session: "s", Tool: "t"}
			state := s.Sign(b)
			*now = now.Add(tt.after)
			if err := s.Verify(t.Context(), state, b); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("Verify after %s = %v, want %v", tt.after, err, tt.want)
			}
		})
	}
}

func TestSignerPrunesUsedNonces(t *testing.T) {
	s, now := testSigner(time.Minute)
	b := approval.Binding{Session: "s", Tool: "t"}
	for range 3 {
		if err := s.Verify(t.Context(), s.Sign(b), b); err != nil {
			t.Fatal(err)
		}
	}
	if got := approval.UsedNonces(s); got != 3 {
		t.Fatalf("used nonces kept = %d, want 3", got)
	}
	*now = now.Add(2 * time.Minute)
	if err := s.Verify(t.Context(), s.Sign(b), b); err != nil {
		t.Fatal(err)
	}
	if got := approval.UsedNonces(s); got != 1 {
		t.Errorf("used nonces kept after the others expired = %d, want 1", got)
	}
}

func TestSignerStateIsURLSafe(t *testing.T) {
	s, _ := testSigner(0)
	state := s.Sign(approval.Binding{Session: "a/b+c", Tool: "t", Args: json.RawMessage(`{"x":"?&="}`)})
	if strings.Trim(state, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") != "" {
		t.Errorf("state %q has characters outside the URL-safe alphabet", state)
	}
	if strings.Contains(state, "?&=") {
		t.Errorf("state %q carries the arguments in clear", state)
	}
}

func FuzzVerify(f *testing.F) {
	s := approval.NewSigner(time.Minute)
	b := approval.Binding{Session: "s", Tool: "t", Args: json.RawMessage(`{"a":1}`)}
	genuine := s.Sign(b)
	f.Add(genuine)
	f.Add(flipLast(genuine))
	f.Add("")
	f.Add("a.b")
	f.Fuzz(func(t *testing.T, state string) {
		err := s.Verify(t.Context(), state, b)
		if err == nil {
			if state != genuine {
				t.Errorf("Verify(%q) = nil, want only the genuine state %q to verify", state, genuine)
			}
			return
		}
		for _, known := range []error{approval.ErrForged, approval.ErrExpired, approval.ErrReplayed, approval.ErrMismatch} {
			if errors.Is(err, known) {
				return
			}
		}
		t.Errorf("Verify(%q) = %v, want one of the Err values", state, err)
	})
}

func TestSignersSharingAKeyVerifyEachOther(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	spent := map[string]bool{}
	spend := func(_ context.Context, id string, _ time.Time) (bool, error) {
		if spent[id] {
			return false, nil
		}
		spent[id] = true
		return true, nil
	}
	a, err := approval.NewSignerWith(approval.SignerOptions{Key: key, Spend: spend})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := approval.NewSignerWith(approval.SignerOptions{Key: key, Spend: spend})
	bind := approval.Binding{Session: "s", Tool: "t", Args: json.RawMessage(`{}`)}
	state := a.Sign(bind)
	if err := b.Verify(t.Context(), state, bind); err != nil {
		t.Fatalf("another signer with the same key: Verify = %v, want nil", err)
	}
	if err := a.Verify(t.Context(), state, bind); !errors.Is(err, approval.ErrReplayed) {
		t.Fatalf("replayed to the first signer: Verify = %v, want ErrReplayed", err)
	}
	other, _ := approval.NewSignerWith(approval.SignerOptions{Key: []byte(strings.Repeat("o", 32))})
	if err := other.Verify(t.Context(), a.Sign(bind), bind); !errors.Is(err, approval.ErrForged) {
		t.Fatalf("a signer with another key: Verify = %v, want ErrForged", err)
	}
}

func TestSignerRotation(t *testing.T) {
	old := []byte(strings.Repeat("o", 32))
	current := []byte(strings.Repeat("n", 32))
	bind := approval.Binding{Session: "s", Tool: "t"}
	before, _ := approval.NewSignerWith(approval.SignerOptions{Key: old})
	now := time.Unix(1_700_000_000, 0)
	after, err := approval.NewSignerWith(approval.SignerOptions{Key: current, Previous: old, PreviousUntil: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	approval.SetClock(before, func() time.Time { return now })
	approval.SetClock(after, func() time.Time { return now })
	if err := after.Verify(t.Context(), before.Sign(bind), bind); err != nil {
		t.Fatalf("a state of the previous key, within its window: Verify = %v, want nil", err)
	}
	late := before.Sign(bind)
	now = now.Add(2 * time.Minute)
	if err := after.Verify(t.Context(), late, bind); !errors.Is(err, approval.ErrForged) {
		t.Fatalf("a state of the previous key, after its window: Verify = %v, want ErrForged", err)
	}
}

func TestSignerRefusesShortKeysAndSpendErrors(t *testing.T) {
	if _, err := approval.NewSignerWith(approval.SignerOptions{Key: []byte("short")}); err == nil {
		t.Error("NewSignerWith(5-byte key) = nil error, want one")
	}
	if _, err := approval.NewSignerWith(approval.SignerOptions{Key: []byte(strings.Repeat("k", 32)), Previous: []byte("x")}); err == nil {
		t.Error("NewSignerWith(short previous key) = nil error, want one")
	}
	down := errors.New("store down")
	s, _ := approval.NewSignerWith(approval.SignerOptions{Spend: func(context.Context, string, time.Time) (bool, error) { return false, down }})
	bind := approval.Binding{Session: "s", Tool: "t"}
	if err := s.Verify(t.Context(), s.Sign(bind), bind); !errors.Is(err, down) {
		t.Errorf("Verify with a failing Spend = %v, want the Spend error", err)
	}
}
