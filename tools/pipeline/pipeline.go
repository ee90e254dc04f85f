// Package pipeline builds composite tools: one tool made of ordered steps,
// each step's output the next step's input, called by the model once with
// no round trip to the model in between.
//
// A pipeline publishes its first step's input schema (and its last step's
// output schema). Between two steps the result of the first becomes the
// arguments of the second (see Handoff); an Adapter may reshape it first.
// When a step declares an output schema and the next step takes typed
// arguments, their fit is checked when the pipeline is built.
//
// Served by the server package, every step runs through that step's own
// governed call (validation, approval, limits, timeout), with the session
// and cancellation of the pipeline's call: the server hands CallWith a
// tools.Caller that runs them.
//
// A step's progress reports (tools.ReportProgress) become the pipeline's:
// step i's (from 0) within [i, i+1] of a total of as many as there are
// steps, a step's own fraction when it gives a total, and a report that
// would not increase the call's progress is dropped, since each step
// counts from zero and a call's progress must only increase.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/mcp-tools/mcp-tools/tools"
)

// OnError is a pipeline's error strategy.
type OnError int

const (
	// FailFast returns the failing step's result at once and skips the
	// rest. It is the default.
	FailFast OnError = iota
	// Continue hands the failing step's error message to the next step as
	// its input and runs to the end; the last step's result is the result.
	Continue
)

// ParseOnError parses "fail_fast" (or "") and "continue".
func ParseOnError(s string) (OnError, error) {
	switch s {
	case "", "fail_fast":
		return FailFast, nil
	case "continue":
		return Continue, nil
	}
	return 0, fmt.Errorf("unknown on_error %q: use fail_fast or continue", s)
}

// Adapter turns a successful step's result into what the next step gets
// (which Handoff then turns into its arguments). It runs only when the step
// succeeded and a next step exists.
type Adapter func(ctx context.Context, r tools.Result) (tools.Result, error)

// Step is one step: a tool, and optionally an adapter after it.
type Step struct {
	Tool    tools.Tool
	Adapter Adapter
}

// Config describes a pipeline. Name, Description and at least one step are
// required.
type Config struct {
	Name        string
	Description string
	Annotations tools.Annotations
	Steps       []Step
	OnError     OnError
	// Task says whether a call of the pipeline may run as a task
	// (tools.Info.Task): its steps then run in the background, each under
	// its own governance. Zero: never.
	Task tools.TaskMode
	// Logger gets each step's input and output at DEBUG, with secrets
	// hidden: a step's input as tools.ShowArgsN shows it for that step's
	// own tool (its Info.Secret), and a step's output, which is the next
	// step's input, redacted by the next step's secret fields; when an
	// adapter reshapes it first, those fields do not name its secrets, so
	// the whole output is hidden (the next step's input line shows what
	// the adapter made, redacted). Nil: discarded.
	Logger *slog.Logger
	// LogTruncate is the server's (server.Options.LogTruncate): how many
	// characters of a call's input its INFO lines show. A step's input
	// line shows ten times as many, as the server's DEBUG line does for a
	// call's, and reads no further into the input. Zero: 200, the
	// server's default.
	LogTruncate int
}

// defaultLogTruncate is the server's default LogTruncate, and
// debugTruncate how many times it a DEBUG line shows, as the server's.
const (
	defaultLogTruncate = 200
	debugTruncate      = 10
)

// Pipeline is a composite tool. It implements tools.Tool.
type Pipeline struct {
	info    tools.Info
	steps   []step
	onError OnError
	log     *slog.Logger
	shown   int // characters of a step's input its DEBUG line shows
}

type step struct {
	info    tools.Info
	tool    tools.Tool
	adapter Adapter
}

var _ tools.Resumable = (*Pipeline)(nil)

// New builds the pipeline and checks, where it can, that each step's output
// fits the next step's input.
func New(cfg Config) (*Pipeline, error) {
	if len(cfg.Steps) == 0 {
		return nil, fmt.Errorf("pipeline %q: no steps", cfg.Name)
	}
	p := &Pipeline{onError: cfg.OnError, log: cfg.Logger, shown: debugTruncate * cfg.LogTruncate}
	if cfg.LogTruncate <= 0 {
		p.shown = debugTruncate * defaultLogTruncate
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	var errs []error
	for i, s := range cfg.Steps {
		if s.Tool == nil {
			errs = append(errs, fmt.Errorf("pipeline %q: step %d has no tool", cfg.Name, i+1))
			continue
		}
		info := s.Tool.Info()
		p.steps = append(p.steps, step{info: info, tool: s.Tool, adapter: s.Adapter})
		if i > 0 && cfg.Steps[i-1].Adapter == nil && cfg.Steps[i-1].Tool != nil {
			if err := Fits(cfg.Steps[i-1].Tool.Info(), info); err != nil {
				errs = append(errs, fmt.Errorf("pipeline %q: step %d (%s) → step %d (%s): %w", cfg.Name, i, cfg.Steps[i-1].Tool.Info().Name, i+1, info.Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	first, last := p.steps[0].info, p.steps[len(p.steps)-1].info
	p.info = tools.Info{
		Name:         cfg.Name,
		Description:  cfg.Description,
		InputSchema:  first.InputSchema,
		OutputSchema: last.OutputSchema,
		Annotations:  cfg.Annotations,
		Secret:       first.Secret,
		Task:         cfg.Task,
	}
	return p, nil
}

// Info returns the pipeline's descriptor.
func (p *Pipeline) Info() tools.Info { return p.info }

// Steps lists the steps' tool names, in order (tools.Composite).
func (p *Pipeline) Steps() []string {
	names := make([]string, len(p.steps))
	for i, s := range p.steps {
		names[i] = s.info.Name
	}
	return names
}

// Call runs the steps in order, calling each step's tool directly, with no
// governance: that is what CallWith is for.
func (p *Pipeline) Call(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	return p.run(ctx, 0, args, p.direct)
}

// CallWith runs the steps in order, each through call: on a server, the
// step tool's own governed call (validation, approval, limits, timeout),
// so that a step runs under its own tool's rules, not its pipeline's.
func (p *Pipeline) CallWith(ctx context.Context, args json.RawMessage, call tools.Caller) (tools.Result, error) {
	return p.run(ctx, 0, args, call)
}

// Resume continues a call at step (from 0), whose arguments are args, as
// the *tools.StepSuspended of an earlier CallWith said: the steps before it
// do not run again (tools.Resumable).
func (p *Pipeline) Resume(ctx context.Context, step int, args json.RawMessage, call tools.Caller) (tools.Result, error) {
	if step < 0 || step >= len(p.steps) {
		return tools.Result{}, &tools.Error{Kind: tools.KindInvalidArguments, Message: fmt.Sprintf("pipeline %q has no step %d to resume at", p.info.Name, step+1)}
	}
	return p.run(ctx, step, args, call)
}

// direct calls a step's tool itself.
func (p *Pipeline) direct(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
	for _, s := range p.steps {
		if s.info.Name == name {
			return s.tool.Call(ctx, args)
		}
	}
	return tools.Result{}, &tools.Error{Kind: tools.KindInternal, Message: fmt.Sprintf("pipeline %q has no step %q", p.info.Name, name)}
}

// run runs the steps from step from (counted from 0), whose arguments are
// args, calling each through call.
func (p *Pipeline) run(ctx context.Context, from int, args json.RawMessage, call tools.Caller) (tools.Result, error) {
	var res tools.Result
	prog := &progress{ctx: ctx, steps: float64(len(p.steps)), last: -1}
	for i := from; i < len(p.steps); i++ {
		s := p.steps[i]
		if i > from {
			var err error
			args, err = Handoff(s.info, res)
			if err != nil {
				return tools.Result{}, tools.Failed("pipeline %q: step %d (%s) cannot take step %d's output: %v", p.info.Name, i+1, s.info.Name, i, err)
			}
		}
		if err := ctx.Err(); err != nil && i > 0 {
			return tools.Result{}, &tools.Error{Kind: tools.KindCancelled, Message: fmt.Sprintf("pipeline %q stopped before step %d: %v", p.info.Name, i+1, err), Err: err}
		}
		debug := p.log.Enabled(ctx, slog.LevelDebug)
		if debug {
			p.log.DebugContext(ctx, "pipeline step", "pipeline", p.info.Name, "step", i+1, "tool", s.info.Name, "input", tools.ShowArgsN(s.info, args, p.shown))
		}
		r, err := p.runStep(prog.of(ctx, i), i, s, args, call)
		if tools.IsSuspended(err) {
			// The step waits for the client (a person's approval): the
			// question goes back up, saying where to resume.
			return tools.Result{}, &tools.StepSuspended{Step: i, Args: args, Err: err}
		}
		out := tools.Settle(r, err)
		if debug {
			p.log.DebugContext(ctx, "pipeline step done", "pipeline", p.info.Name, "step", i+1, "tool", s.info.Name, "output", p.showOutput(i, out.Text), "error", tools.Truncate(errText(out.Err), p.shown))
		}
		last := i == len(p.steps)-1
		if out.Err != nil {
			if p.onError == FailFast || last || out.Err.Kind == tools.KindCancelled {
				e := *out.Err
				e.Message = fmt.Sprintf("step %d (%s) failed: %s", i+1, s.info.Name, out.Err.Message)
				return tools.Result{}, &e
			}
			res = tools.Result{Text: out.Err.Message}
			continue
		}
		res = out.Result
		if s.adapter != nil && !last {
			adapted, err := s.adapter(ctx, out.Result)
			if err != nil {
				return tools.Result{}, tools.Failed("pipeline %q: the adapter after step %d (%s) failed: %v", p.info.Name, i+1, s.info.Name, err)
			}
			res = adapted
		}
	}
	return res, nil
}

// progress turns the progress its steps report into the pipeline call's.
type progress struct {
	ctx   context.Context // the pipeline call's
	steps float64
	mu    sync.Mutex // held while reporting, so reports go out in order
	last  float64    // the last progress reported; -1: none yet
}

// of returns ctx for step i, whose progress reports are reported within
// [i, i+1]: as the fraction of its total, or, with none, as growing
// toward i+1; one that would not increase the call's progress is dropped.
func (pr *progress) of(ctx context.Context, i int) context.Context {
	return tools.WithProgress(ctx, func(progress, total float64, message string) {
		var frac float64
		switch {
		case total > 0:
			frac = min(max(progress/total, 0), 1)
		case progress > 0:
			frac = progress / (progress + 1)
		}
		v := float64(i) + frac
		pr.mu.Lock()
		defer pr.mu.Unlock()
		if !(v > pr.last) { // NaN too
			return
		}
		pr.last = v
		tools.ReportProgress(pr.ctx, v, pr.steps, message)
	})
}

// showOutput renders step i's output text for the log, bounded as a
// step's input is (p.shown characters, "…(N more bytes)" past them). It
// becomes the next step's input, so that step's secret fields are hidden:
// the whole text when the next step is plain and its "input" is secret,
// or when an adapter reshapes the output first (a secret may then sit
// under any name), the secret fields of a JSON object otherwise, shown as
// tools.ShowArgsN shows arguments (text that is not JSON only up to where
// it stops being JSON).
func (p *Pipeline) showOutput(i int, text string) string {
	var next tools.Info // the last step's output is the pipeline's result
	if i+1 < len(p.steps) {
		next = p.steps[i+1].info
	}
	if len(next.Secret) == 0 || next.Plain && !tools.IsSecret("input", next.Secret) {
		return tools.Truncate(text, p.shown) // cut, as it is
	}
	if p.steps[i].adapter != nil || next.Plain {
		return tools.Hidden
	}
	return tools.ShowArgsN(tools.Info{Secret: next.Secret}, json.RawMessage(text), p.shown)
}

func errText(e *tools.Error) string {
	if e == nil {
		return ""
	}
	return e.Message
}

// Handoff turns a result into the arguments of next: for a plain tool,
// {"input": text} (the structured output as JSON when there is no text);
// for any other tool, the structured output, or the text when it is a JSON
// object.
func Handoff(next tools.Info, r tools.Result) (json.RawMessage, error) {
	if next.Plain {
		text := r.Text
		if text == "" && r.Structured != nil {
			b, err := json.Marshal(r.Structured)
			if err != nil {
				return nil, err
			}
			text = string(b)
		}
		return json.Marshal(map[string]string{"input": text})
	}
	if r.Structured != nil {
		b, err := json.Marshal(r.Structured)
		if err != nil {
			return nil, err
		}
		if isObject(b) {
			return b, nil
		}
	}
	if t := strings.TrimSpace(r.Text); isObject([]byte(t)) {
		return json.RawMessage(t), nil
	}
	return nil, fmt.Errorf("%s takes an object of arguments, and the output is neither structured nor a JSON object (add an adapter)", next.Name)
}

func isObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// Fits checks that what from produces can be handed to to without an
// adapter: always for a plain to; for a typed to, when from declares an
// output schema, every property to requires must be in it with the same
// type. When from declares no output schema nothing can be checked before
// the first call.
func Fits(from, to tools.Info) error {
	if to.Plain || len(from.OutputSchema) == 0 {
		return nil
	}
	var out, in struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(from.OutputSchema, &out); err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	if err := json.Unmarshal(to.InputSchema, &in); err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	var problems []string
	for _, req := range in.Required {
		op, ok := out.Properties[req]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s requires %q, which %s's output does not have", to.Name, req, from.Name))
			continue
		}
		want := in.Properties[req].Type
		if want != nil && op.Type != nil && fmt.Sprint(want) != fmt.Sprint(op.Type) && !(want == "number" && op.Type == "integer") {
			problems = append(problems, fmt.Sprintf("%s's %q is %v, but %s's output gives %v", to.Name, req, want, from.Name, op.Type))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; ") + " (add an adapter)")
	}
	return nil
}
