package server

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/tools"
)

// A composite (a pipeline) whose step waits for a person's approval on a
// 2026-07-28 client answers with input_required, like any gated call. Its
// requestState is sealed here: the pipeline, who called it and with which
// arguments, the step to resume at and that step's arguments, and the
// step's own approval state, encrypted and authenticated (AES-256-GCM) with
// the server's state key (Options.StateKeys; every replica of a fleet shares it), and short-lived. The retry resumes at that step: the
// steps before it do not run again (a step whose output varies, a clock or
// the web, cannot make the retry a different call), the pipeline is not
// charged again, and any number of gated steps are asked in turn. The
// state is single-use (and so is the step's own), so a replayed pipeline
// state is refused before anything runs.

// resumePrefix marks a sealed resume state (an approval state has none).
const resumePrefix = "mcp-tools-resume.1."

// resumePoint is what a sealed state says.
type resumePoint struct {
	Who   string          `json:"w"`
	Tool  string          `json:"t"`
	Args  string          `json:"a"` // hash of the composite's canonical arguments
	Step  int             `json:"k"`
	SArgs json.RawMessage `json:"x"` // the step's arguments
	Inner string          `json:"i"` // the step's own request state
	Exp   int64           `json:"e"`
	Nonce string          `json:"n"` // makes the state single-use
}

// sealer seals and opens resume states. Each state is good for one
// retry: spent ones are marked in the store until they expire.
type sealer struct {
	aead     cipher.AEAD
	previous cipher.AEAD // also opens, until `until`; nil: none
	until    time.Time
	ttl      time.Duration
	spend    approval.SpendFunc
}

// newSealer seals with key (nil: a random one), and opens with previous
// too until the given time.
func newSealer(ttl time.Duration, key, previous []byte, until time.Time, spend approval.SpendFunc) *sealer {
	if key == nil {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("server: no randomness for the resume key: " + err.Error())
		}
	}
	s := &sealer{aead: gcm(key), ttl: ttl, spend: spend}
	if previous != nil {
		s.previous, s.until = gcm(previous), until
	}
	return s
}

func gcm(key []byte) cipher.AEAD {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // keys are 32 bytes, derived
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// argsHash is a digest of args: spacing and key order do not matter, and
// numbers count as written, so two integers past 2^53 that round to one
// float64 are two calls.
func argsHash(args json.RawMessage) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if d.Decode(&v) != nil || d.More() {
		v = string(args)
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys: spacing and order do not matter
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

func (s *sealer) seal(p resumePoint) string {
	p.Exp = time.Now().Add(s.ttl).Unix()
	p.Nonce = rand.Text()
	plain, _ := json.Marshal(p)
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	box := s.aead.Seal(nonce, nonce, plain, []byte(resumePrefix))
	return resumePrefix + base64.RawURLEncoding.EncodeToString(box)
}

var errResumeState = errors.New("the state is not one this server issued for this call")

// open returns the point a state says, checked against the call it came
// back with.
func (s *sealer) open(ctx context.Context, state, who, tool string, args json.RawMessage) (resumePoint, error) {
	var p resumePoint
	box, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(state, resumePrefix))
	if err != nil || len(box) < s.aead.NonceSize() {
		return p, errResumeState
	}
	plain, err := s.aead.Open(nil, box[:s.aead.NonceSize()], box[s.aead.NonceSize():], []byte(resumePrefix))
	if err != nil && s.previous != nil && time.Now().Before(s.until) {
		plain, err = s.previous.Open(nil, box[:s.aead.NonceSize()], box[s.aead.NonceSize():], []byte(resumePrefix))
	}
	if err != nil || json.Unmarshal(plain, &p) != nil {
		return p, errResumeState
	}
	if p.Who != who || p.Tool != tool || p.Args != argsHash(args) {
		return p, errResumeState
	}
	if time.Now().Unix() > p.Exp {
		return p, approval.ErrExpired
	}
	first, err := s.spend(ctx, "resume-state:"+p.Nonce, time.Unix(p.Exp, 0))
	if err != nil {
		return p, err
	}
	if !first {
		return p, errResumeUsed
	}
	return p, nil
}

var errResumeUsed = errors.New("the state was already used: each answer resumes the call once")

type resumeKey struct{}

// resumeFrom returns the verified resume point of a retried call of tool.
func resumeFrom(ctx context.Context, tool string) (resumePoint, bool) {
	p, ok := ctx.Value(resumeKey{}).(resumePoint)
	return p, ok && p.Tool == tool
}

// withoutRoundTrip hides the retry's state from the layers inside the one
// that consumed it.
func withoutRoundTrip(ctx context.Context) context.Context {
	if _, ok := roundTripFrom(ctx); !ok {
		return ctx
	}
	return context.WithValue(ctx, roundTripKey{}, mcp.MultiRoundTripParams{})
}

// resumeMiddleware, on a composite's chain, reads a retry's sealed state:
// a valid one becomes the resume point (which spares the retry the budget
// and the composite's own approval, both settled by the first call); any
// other sealed state is refused before anything runs.
func (s *Server) resumeMiddleware(info tools.Info, next tools.Func) tools.Func {
	name := info.Name
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		rt, ok := roundTripFrom(ctx)
		if !ok || !strings.HasPrefix(rt.RequestState, resumePrefix) {
			return next(ctx, args)
		}
		p, err := s.resumes.open(ctx, rt.RequestState, bindingFor(ctx, name, args).Session, name, args)
		if storeErr(err) {
			return tools.Result{}, unavailable("the approval answer cannot be checked", err)
		}
		if err != nil {
			msg := fmt.Sprintf("Rejected: the approval answer was refused (%v); the tool did not run", err)
			if errors.Is(err, approval.ErrExpired) {
				msg = fmt.Sprintf("Rejected: the answer came after the %s approval time limit; the tool did not run", s.approvals.policy.Timeout)
			}
			return tools.Result{}, &tools.Error{Kind: tools.KindApprovalDenied, Message: msg}
		}
		// The step's own approval reads its state and the answers.
		ctx = context.WithValue(ctx, roundTripKey{}, mcp.MultiRoundTripParams{RequestState: p.Inner, InputResponses: rt.InputResponses})
		return next(context.WithValue(ctx, resumeKey{}, p), args)
	}
}

// runComposite calls c, or resumes it at the point a retry carries, and
// seals a step's suspension into the composite's own state.
func (s *Server) runComposite(c tools.Composite) tools.Func {
	name := c.Info().Name
	r, resumable := c.(tools.Resumable)
	return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		var res tools.Result
		var err error
		if p, ok := resumeFrom(ctx, name); ok && resumable {
			// The retry's answer is for the step resumed at; the steps
			// after it must each ask (or not) on their own.
			var answered atomic.Bool
			call := func(ctx context.Context, step string, args json.RawMessage) (tools.Result, error) {
				if answered.Swap(true) {
					ctx = withoutRoundTrip(ctx)
				}
				return s.callStep(ctx, step, args)
			}
			res, err = r.Resume(ctx, p.Step, p.SArgs, call)
		} else {
			res, err = c.CallWith(withoutRoundTrip(ctx), args, s.callStep)
		}
		var ss *tools.StepSuspended
		var pending *inputRequired
		if !resumable || !errors.As(err, &ss) || !errors.As(ss.Err, &pending) || pending.state == "" {
			return res, err
		}
		sealed := s.resumes.seal(resumePoint{Who: bindingFor(ctx, name, args).Session, Tool: name, Args: argsHash(args),
			Step: ss.Step, SArgs: ss.Args, Inner: pending.state})
		return tools.Result{}, pending.withState(sealed)
	}
}
