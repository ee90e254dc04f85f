package telemetry

import (
	"strconv"
	"time"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/telemetry/internal/prom"
	"github.com/mcp-tools/mcp-tools/tools"
)

// The Prometheus metrics, by name.
const (
	MetricCalls          = "mcp_tools_calls_total"
	MetricCallDuration   = "mcp_tools_call_duration_seconds"
	MetricInFlight       = "mcp_tools_calls_in_flight"
	MetricSessions       = "mcp_tools_sessions_open"
	MetricApprovals      = "mcp_tools_approvals_total"
	MetricApprovalWait   = "mcp_tools_approval_wait_seconds"
	MetricBudgetRefusals = "mcp_tools_budget_refusals_total"
	MetricExits          = "mcp_tools_subprocess_exits_total"
	MetricHTTPResponses  = "mcp_tools_http_tool_responses_total"
)

// Label values outside the open sets.
const (
	// OtherTool stands for a tool name no Middleware was built for.
	OtherTool = "_other"
	// OutcomeOK is the outcome of a successful call.
	OutcomeOK = "ok"
	// OutcomeInputRequired is the outcome of a call that waits for the
	// client (a person's approval) and will be retried.
	OutcomeInputRequired = "input_required"
	// OutcomeTask is the outcome of a call that became a task: its work
	// goes on in the background and is counted again, with its own
	// outcome, when it ends.
	OutcomeTask = "task"
	// OutcomeOther stands for an error kind this package does not know.
	OutcomeOther = "other"
	// CodeSignal is the exit code label of a subprocess ended by a signal.
	CodeSignal = "signal"
	// CodeOther is the label of an exit code or HTTP status out of range.
	CodeOther = "other"
)

// kinds are the outcome labels besides OutcomeOK and OutcomeInputRequired.
var kinds = []tools.Kind{
	tools.KindInvalidArguments, tools.KindExecutionFailed, tools.KindInternal,
	tools.KindTimeout, tools.KindCancelled, tools.KindApprovalDenied,
	tools.KindBudgetExhausted, tools.KindResultTooLarge, tools.KindUnavailable,
}

func (t *Telemetry) register() error {
	t.calls = prom.NewCounterVec(MetricCalls,
		"Tool calls, by tool and outcome (ok, input_required, or the error kind).", "tool", "outcome")
	t.duration = prom.NewHistogramVec(MetricCallDuration,
		"Time from a call's arrival to its result, by tool, approval waits included.", t.cfg.DurationBuckets, "tool")
	t.inFlight = prom.NewGaugeVec(MetricInFlight,
		"Calls running now, by tool.", "tool")
	sessions := prom.NewGaugeVec(MetricSessions,
		"MCP sessions open now, every transport.")
	t.sessions = sessions.With()
	t.approvals = prom.NewCounterVec(MetricApprovals,
		"Approval decisions, by tool and decision (approve, edit, reject).", "tool", "decision")
	t.approvalWait = prom.NewHistogramVec(MetricApprovalWait,
		"Time from asking for an approval to the decision, by tool.", t.cfg.DurationBuckets, "tool")
	t.budget = prom.NewCounterVec(MetricBudgetRefusals,
		"Calls refused because the session's call budget was spent, by tool.", "tool")
	t.exits = prom.NewCounterVec(MetricExits,
		"Subprocess tool exits, by tool and exit code (0-255, or signal).", "tool", "code")
	t.httpResponses = prom.NewCounterVec(MetricHTTPResponses,
		"HTTP tool responses, by tool and status code.", "tool", "code")
	for _, c := range []prom.Collector{t.calls, t.duration, t.inFlight, sessions, t.approvals, t.approvalWait, t.budget, t.exits, t.httpResponses} {
		if err := t.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// toolMetrics are one tool's series, resolved once when its Middleware is
// built so that a call looks up no label.
type toolMetrics struct {
	outcomes            map[tools.Kind]*prom.Counter
	ok, suspended, task *prom.Counter
	other               *prom.Counter
	duration            *prom.Histogram
	inFlight            *prom.Gauge
	budget              *prom.Counter
}

func (t *Telemetry) forTool(name string) *toolMetrics {
	t.known.Store(name, struct{}{})
	m := &toolMetrics{
		outcomes:  make(map[tools.Kind]*prom.Counter, len(kinds)),
		ok:        t.calls.With(name, OutcomeOK),
		suspended: t.calls.With(name, OutcomeInputRequired),
		task:      t.calls.With(name, OutcomeTask),
		other:     t.calls.With(name, OutcomeOther),
		duration:  t.duration.With(name),
		inFlight:  t.inFlight.With(name),
		budget:    t.budget.With(name),
	}
	for _, k := range kinds {
		m.outcomes[k] = t.calls.With(name, string(k))
	}
	return m
}

// tool is name when a Middleware was built for it, OtherTool otherwise.
func (t *Telemetry) tool(name string) string {
	if _, ok := t.known.Load(name); ok {
		return name
	}
	return OtherTool
}

// SessionOpened counts a session that opened; call SessionClosed when it
// ends.
func (t *Telemetry) SessionOpened() {
	if t != nil {
		t.sessions.Inc()
	}
}

// SessionClosed counts a session that ended.
func (t *Telemetry) SessionClosed() {
	if t != nil {
		t.sessions.Dec()
	}
}

// Decided records a decision on a call of tool that needed approval, and
// how long it took to make (zero for a remembered one).
func (t *Telemetry) Decided(tool string, d approval.Decision, waited time.Duration) {
	if t == nil {
		return
	}
	decision := d.String()
	switch d {
	case approval.Approve, approval.Edit, approval.Reject:
	default:
		decision = OutcomeOther
	}
	name := t.tool(tool)
	t.approvals.With(name, decision).Inc()
	t.approvalWait.With(name).Observe(waited.Seconds())
}

// Exited records that a subprocess of tool ended with code, or was ended
// by a signal (code < 0). It makes *Telemetry a remote.Observer.
func (t *Telemetry) Exited(tool string, code int) {
	if t == nil {
		return
	}
	label := CodeOther
	switch {
	case code < 0:
		label = CodeSignal
	case code <= 255:
		label = strconv.Itoa(code)
	}
	t.exits.With(t.tool(tool), label).Inc()
}

// Responded records the HTTP status an HTTP tool's endpoint answered. It
// makes *Telemetry a remote.Observer.
func (t *Telemetry) Responded(tool string, status int) {
	if t == nil {
		return
	}
	label := CodeOther
	if status >= 100 && status <= 599 {
		label = strconv.Itoa(status)
	}
	t.httpResponses.With(t.tool(tool), label).Inc()
}
