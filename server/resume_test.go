package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
	"github.com/mcp-tools/mcp-tools/typed"
)

// journal records what each step of a test pipeline did.
type journal struct {
	mu    sync.Mutex
	lines []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, s)
}

func (j *journal) String() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.lines, ",")
}

type noteIn struct {
	Text string `json:"text"`
}

type noteOut struct {
	Text string `json:"text"`
}

// varyingPipeline is stamp → gated send_a → gated send_b: the first step's
// output differs on every run (a clock, say), and two steps are gated.
func varyingPipeline(t *testing.T, j *journal) *tools.Registry {
	t.Helper()
	var n atomic.Int64
	stamp := typed.MustNew("stamp", "Stamp the text.", func(_ context.Context, in noteIn) (noteOut, error) {
		v := n.Add(1)
		j.add(fmt.Sprintf("stamp#%d", v))
		return noteOut{Text: fmt.Sprintf("%s@%d", in.Text, v)}, nil
	})
	send := func(name string) tools.Tool {
		return approval.Gate(typed.MustNew(name, "Send the text.", func(_ context.Context, in noteIn) (noteOut, error) {
			j.add(name + ":" + in.Text)
			return noteOut{Text: in.Text}, nil
		}))
	}
	a, b := send("send_a"), send("send_b")
	p, err := pipeline.New(pipeline.Config{Name: "stamp_and_send", Description: "Stamp, then send twice.",
		Steps: []pipeline.Step{{Tool: stamp}, {Tool: a}, {Tool: b}}})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(stamp, a, b, p)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// retryWith answers res's approval question (accept) with the same call.
func retryWith(t *testing.T, url string, args map[string]any, res map[string]any) map[string]any {
	t.Helper()
	state, _ := res["requestState"].(string)
	if state == "" {
		t.Fatalf("no requestState in %v", res)
	}
	return modernPost(t, url, map[string]any{"name": "stamp_and_send", "arguments": args,
		"requestState": state, "inputResponses": acceptResponse(t)})
}

// TestPipelineResumesOnModernRetries: on a 2026-07-28 client, a pipeline
// whose two steps are gated asks for each in turn; each retry continues at
// the step that asked, so the first step, whose output varies, runs once;
// the pipeline is charged once; a replayed state is refused.
func TestPipelineResumesOnModernRetries(t *testing.T) {
	var j journal
	reg := varyingPipeline(t, &j)
	url := startRegistry(t, reg, server.Options{MaxCallsPerSession: 1})
	args := map[string]any{"text": "hi"}

	first := modernPost(t, url, map[string]any{"name": "stamp_and_send", "arguments": args})
	if first["resultType"] != "input_required" {
		t.Fatalf("first call = %v, want input_required", first)
	}
	second := retryWith(t, url, args, first)
	if second["resultType"] != "input_required" {
		t.Fatalf("after the first answer = %v, want the second step's question", second)
	}
	third := retryWith(t, url, args, second)
	if third["isError"] == true {
		t.Fatalf("after the second answer = %v, want the result", third)
	}
	if got, want := j.String(), "stamp#1,send_a:hi@1,send_b:hi@1"; got != want {
		t.Errorf("steps ran %s, want %s (the varying first step once)", got, want)
	}
	// A replayed state is refused, whatever it resumes.
	replay := retryWith(t, url, args, second)
	if replay["isError"] != true || !strings.Contains(fmt.Sprint(replay), "approval") {
		t.Errorf("replayed state = %v, want an approval refusal", replay)
	}
	if got := j.String(); strings.Count(got, "send_b") != 1 {
		t.Errorf("after a replay the steps ran %s: send_b ran again", got)
	}
	// A state for other arguments is refused before anything runs.
	other := retryWith(t, url, map[string]any{"text": "other"}, second)
	if other["isError"] != true {
		t.Errorf("state with other arguments = %v, want refused", other)
	}
}

// TestTwoServersShareARegistry: one registry backs two servers with
// different rules; each serves the same pipeline under its own (a step
// gated on one server only is asked for there and runs freely on the other).
func TestTwoServersShareARegistry(t *testing.T) {
	var j journal
	reg := varyingPipeline(t, &j)
	strict := startRegistry(t, reg, server.Options{})
	open := startRegistry(t, reg, server.Options{Approval: approval.Policy{Exempt: []string{"send_a", "send_b"}}})
	args := map[string]any{"text": "x"}
	if res := modernPost(t, open, map[string]any{"name": "stamp_and_send", "arguments": args}); res["isError"] == true || res["resultType"] == "input_required" {
		t.Fatalf("on the open server = %v, want the result", res)
	}
	if res := modernPost(t, strict, map[string]any{"name": "stamp_and_send", "arguments": args}); res["resultType"] != "input_required" {
		t.Fatalf("on the strict server = %v, want the approval question", res)
	}
	if res := modernPost(t, open, map[string]any{"name": "stamp_and_send", "arguments": args}); res["resultType"] == "input_required" {
		t.Errorf("the open server asked after the strict one was built: its rules moved")
	}
}

// TestGatedStepUnderShortTimeout: a person's time to decide is not charged
// to the step's timeout: the step's tool has 300ms, the reviewer takes
// 800ms, and the step runs (legacy elicitation, from inside the call).
func TestGatedStepUnderShortTimeout(t *testing.T) {
	var j journal
	gated := approval.Gate(typed.MustNew("send_quick", "Send.", func(_ context.Context, in noteIn) (noteOut, error) {
		j.add("sent:" + in.Text)
		return noteOut{Text: in.Text}, nil
	}))
	info := gated.Info()
	info.Limits.Timeout = 300 * time.Millisecond
	send := tools.WithInfo(gated, info)
	p, err := pipeline.New(pipeline.Config{Name: "relay", Description: "Relay.", Steps: []pipeline.Step{{Tool: send}}})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := tools.NewRegistry(send, p)
	url := startRegistry(t, reg, server.Options{})
	rv := &reviewer{decide: func(mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		time.Sleep(800 * time.Millisecond)
		return answer(mcp.ElicitationResponseActionAccept, nil), nil
	}}
	c := gatedClient(t, url, rv, false)
	res := mustCall(t, c, "relay", map[string]any{"text": "late"})
	if res.IsError || j.String() != "sent:late" {
		t.Errorf("relay = %q (%s), ran %q; want the step to run after the slow approval", resultText(res), errorKind(res), j.String())
	}
}

// TestCompositeLimitsRefused: a pipeline has no limits of its own (its
// steps do): one given to it is a configuration error, not silently dropped.
func TestCompositeLimitsRefused(t *testing.T) {
	var j journal
	reg := varyingPipeline(t, &j)
	_, err := server.New(reg, server.Options{Tools: map[string]server.ToolOptions{"stamp_and_send": {Timeout: time.Second}}})
	if err == nil || !strings.Contains(err.Error(), "steps") {
		t.Errorf("New with a pipeline timeout = %v, want an error pointing to the steps", err)
	}
}

// TestNestedPipelineStepsGoverned: a pipeline used as a step of another
// runs its own steps governed: a gated step inside is asked for (here:
// refused, the client cannot be asked) whichever pipeline called it.
func TestNestedPipelineStepsGoverned(t *testing.T) {
	var j journal
	send := approval.Gate(typed.MustNew("send_n", "Send.", func(_ context.Context, in noteIn) (noteOut, error) {
		j.add("sent:" + in.Text)
		return noteOut{Text: in.Text}, nil
	}))
	inner, err := pipeline.New(pipeline.Config{Name: "inner", Description: "Send.", Steps: []pipeline.Step{{Tool: send}}})
	if err != nil {
		t.Fatal(err)
	}
	outer, err := pipeline.New(pipeline.Config{Name: "outer", Description: "Send, nested.", Steps: []pipeline.Step{{Tool: inner}}})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := tools.NewRegistry(send, inner, outer)
	c := httpClient(t, startRegistry(t, reg, server.Options{}), nil) // no elicitation: the deny fallback
	for _, name := range []string{"send_n", "inner", "outer"} {
		if res := mustCall(t, c, name, map[string]any{"text": "x"}); errorKind(res) != "approval_denied" {
			t.Errorf("%s = %q (%s), want approval_denied", name, resultText(res), errorKind(res))
		}
	}
	if j.String() != "" {
		t.Errorf("the gated step ran: %s", j.String())
	}
}

// TestResumeStateSingleUse: a pipeline's sealed state resumes once; a
// replay is refused before anything runs, also when the pipeline goes on
// after a failed step, and when the resumed step was remembered.
func TestResumeStateSingleUse(t *testing.T) {
	var j journal
	send := approval.Gate(typed.MustNew("send_c", "Send.", func(_ context.Context, in noteIn) (noteOut, error) {
		j.add("sent")
		return noteOut{Text: in.Text}, nil
	}))
	publish := typed.MustNew("publish", "Publish.", func(_ context.Context, in noteIn) (noteOut, error) {
		j.add("published")
		return noteOut{Text: in.Text}, nil
	})
	p, err := pipeline.New(pipeline.Config{Name: "stamp_and_send", Description: "Send, then publish.", OnError: pipeline.Continue,
		Steps: []pipeline.Step{{Tool: send}, {Tool: publish}}})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := tools.NewRegistry(send, publish, p)
	url := startRegistry(t, reg, server.Options{MaxCallsPerSession: 1})
	args := map[string]any{"text": "hi"}
	first := modernPost(t, url, map[string]any{"name": "stamp_and_send", "arguments": args})
	if done := retryWith(t, url, args, first); done["isError"] == true {
		t.Fatalf("accepted retry = %v", done)
	}
	for range 3 {
		if replay := retryWith(t, url, args, first); replay["isError"] != true {
			t.Errorf("replay = %v, want refused", replay)
		}
	}
	if got := j.String(); got != "sent,published" {
		t.Errorf("steps ran %s, want sent,published once", got)
	}
}

// TestWrappedPipelineResumes: a pipeline wrapped with tools.Wrap (or
// approval.Gate, tools.WithInfo) stays resumable.
func TestWrappedPipelineResumes(t *testing.T) {
	var j journal
	reg := varyingPipeline(t, &j)
	p, _ := reg.Lookup("stamp_and_send")
	wrapped := tools.Wrap(p, func(_ tools.Info, next tools.Func) tools.Func { return next })
	if _, ok := wrapped.(tools.Resumable); !ok {
		t.Fatal("tools.Wrap hid Resumable")
	}
	var all []tools.Tool
	for _, tl := range reg.Tools() {
		if tl.Info().Name != "stamp_and_send" {
			all = append(all, tl)
		}
	}
	reg2, _ := tools.NewRegistry(append(all, wrapped)...)
	url := startRegistry(t, reg2, server.Options{})
	args := map[string]any{"text": "w"}
	res := modernPost(t, url, map[string]any{"name": "stamp_and_send", "arguments": args})
	res = retryWith(t, url, args, res)
	res = retryWith(t, url, args, res)
	if res["isError"] == true || res["resultType"] == "input_required" {
		t.Fatalf("after two answers = %v, want the result", res)
	}
	if got := j.String(); got != "stamp#1,send_a:w@1,send_b:w@1" {
		t.Errorf("steps ran %s", got)
	}
}

// TestResumeStateBoundToExactArguments: a pipeline's state is bound to the
// call's exact arguments; two integers past 2^53 that share one float64
// are two calls, and a state for one does not resume the other.
func TestResumeStateBoundToExactArguments(t *testing.T) {
	type chargeIn struct {
		Account int64 `json:"account"`
	}
	var j journal
	charge := approval.Gate(typed.MustNew("charge", "Charge.", func(_ context.Context, in chargeIn) (string, error) {
		j.add(fmt.Sprint(in.Account))
		return "charged", nil
	}))
	p, err := pipeline.New(pipeline.Config{Name: "stamp_and_send", Description: "Charge.", Steps: []pipeline.Step{{Tool: charge}}})
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := tools.NewRegistry(charge, p)
	url := startRegistry(t, reg, server.Options{})
	first := modernPost(t, url, map[string]any{"name": "stamp_and_send", "arguments": map[string]any{"account": json.Number("9007199254740992")}})
	if first["resultType"] != "input_required" {
		t.Fatalf("first call = %v, want input_required", first)
	}
	if other := retryWith(t, url, map[string]any{"account": json.Number("9007199254740993")}, first); other["isError"] != true {
		t.Errorf("the state for account 9007199254740992 resumed a call for 9007199254740993: %v", other)
	}
	if done := retryWith(t, url, map[string]any{"account": json.Number("9007199254740992")}, first); done["isError"] == true {
		t.Errorf("the genuine retry = %v", done)
	}
	if got := j.String(); got != "9007199254740992" {
		t.Errorf("charged %s, want 9007199254740992 once", got)
	}
}
