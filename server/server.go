// Package server serves a tools.Registry over MCP, on
// github.com/mark3labs/mcp-go: stdio, legacy HTTP+SSE and streamable HTTP.
//
// It is the only package (with cmd/) that knows the SDK. It knows nothing
// about any single tool: it publishes each tool's descriptor, validates
// every call against the published input schema, runs the call through one
// documented middleware chain, and turns the outcome into an MCP result in
// exactly one place (render).
//
// The chain around every tool, outermost first, built once per tool from its
// descriptor (tools.Info: gated, limits, scopes, secrets) and the Options:
//
//	telemetry → recover → log → outcome → session limit → validate → budget →
//	approval → [task] → server-wide limit → tool limit and rate → timeout →
//	Options.Middleware... → tool
//
// A call that becomes a task (tools.Info.Task; see tasks.go) is answered at
// [task] with its handle, and the rest runs in the background under its own
// telemetry, recovery, log line, session limit and the layers after it.
//
// A panic anywhere inside is recovered; a call refused by validation never
// reaches the budget or anything after it. A call waiting for a person holds
// one of its session's places but no server-wide or per-tool place, and the
// wait is not charged to the call's timeout. The outcome layer settles what
// the log, the metrics and the client all see (cancelled, result_too_large).
//
// A composite (tools.Composite, a pipeline) has no limits or timeout of its
// own: it is handed a caller that runs each step through that step's own
// chain (validate, approval, limits, timeout). On a 2026-07-28 client, a step
// that asks for approval makes the composite answer input_required with a
// sealed, single-use state, and the retry resumes at that step (see
// resume.go).
//
// Every message is read strictly before mcp-go sees it (frame.go). A plain
// tools/call is then answered from that one read, on stdio (fastpath.go) and
// streamable HTTP (fasthttp.go); mcp-go is the protocol engine for everything
// else. State that replicas share lives in Options.State (shared.go,
// fleet.go).
//
// Sessions: the per-session limit, budget and approval memory key on the
// MCP session id. Requests of protocol 2026-07-28 over HTTP carry no session:
// without bearer tokens they all share one limit and one budget; with
// tokens, the budget belongs to the token.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// Defaults for Options' zero values.
const (
	DefaultMaxInFlight     = 64
	DefaultMaxMessageBytes = 4 << 20
	DefaultLogTruncate     = 200
	DefaultShutdownGrace   = 10 * time.Second
	// DefaultSessionIdleTimeout ends idle streamable HTTP sessions.
	DefaultSessionIdleTimeout = 10 * time.Minute
	// DefaultMaxSessions bounds the open streamable HTTP and SSE sessions.
	DefaultMaxSessions = 10000
	// DefaultMaxResultBytes bounds one result: its text plus its
	// structured content, as JSON.
	DefaultMaxResultBytes = 4 << 20
	// DefaultHTTPIdleTimeout closes a keep-alive connection idle this long.
	DefaultHTTPIdleTimeout = 30 * time.Second
	// DefaultHTTPReadTimeout bounds reading one request, body included.
	DefaultHTTPReadTimeout = 30 * time.Second
	// DefaultProgressInterval is the least time between two progress
	// notifications of one call; reports in between are coalesced, and
	// the last one is always sent before the result.
	DefaultProgressInterval = 250 * time.Millisecond
)

// Meta keys added to every error result's _meta.
const (
	MetaErrorKind = "mcp-tools/errorKind"
	MetaErrorCode = "mcp-tools/errorCode"
)

// Options configure a Server. The zero value works: it names the server
// "mcp-tools", logs nothing, and uses the defaults above.
type Options struct {
	// Name and Version are reported to clients in the initialize reply.
	// Zero: "mcp-tools" and "dev".
	Name, Version string
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// MaxInFlight bounds how many calls of one session run at once; more
	// wait their turn. Zero: DefaultMaxInFlight.
	MaxInFlight int
	// MaxMessageBytes bounds one incoming message: a stdio line or an HTTP
	// body. Zero: DefaultMaxMessageBytes (4 MiB).
	MaxMessageBytes int64
	// LogTruncate is how many characters of a call's input and output the
	// INFO and WARN lines show. Zero: DefaultLogTruncate.
	LogTruncate int
	// Strict rejects unknown argument fields for every tool and publishes
	// additionalProperties: false at the top of every input schema.
	// False: unknown fields are ignored, unless a tool's own schema forbids
	// them.
	Strict bool
	// Middleware is applied innermost, just around the tool, outermost
	// first (see the package documentation).
	Middleware []tools.Middleware

	// MaxCallsPerSession is the call budget of a session (of a bearer
	// token, when tokens are in use). Every call that passes validation
	// counts; a call that resumes after a person's answer counts once.
	// Zero: no budget.
	MaxCallsPerSession int
	// CallTimeout bounds each call (a person's approval time excluded).
	// Zero: DefaultCallTimeout; negative: no bound.
	CallTimeout time.Duration
	// MaxInFlightTotal bounds the calls running at once across all
	// sessions; more wait. Zero: no bound.
	MaxInFlightTotal int
	// Tools holds per-tool settings, by tool name.
	Tools map[string]ToolOptions

	// Approval says which tools a person must approve, and what happens
	// when no person can be asked. Tools gated in Go (approval.Gate) are
	// gated whatever it says, unless it exempts them. The zero value gates
	// only those, with a 5-minute wait and the deny fallback.
	Approval approval.Policy
	// ApprovalHeartbeat is how often a call waiting for a person reports
	// progress (when the client sent a progressToken). Zero:
	// DefaultHeartbeat.
	ApprovalHeartbeat time.Duration

	// AllowedOrigins lists the browser origins (scheme://host[:port]) that
	// may call the HTTP transports, besides loopback origins, which are
	// always allowed. A request with any other Origin header gets 403.
	AllowedOrigins []string
	// BearerTokens, when not empty, makes every HTTP request carry one of
	// them as "Authorization: Bearer <token>" (401 otherwise), and a
	// streamable HTTP session can be used only with the token that opened
	// it. Take them from the environment, never from a command-line flag.
	BearerTokens []string
	// Telemetry, when set, measures and traces every call (see package
	// telemetry), and the HTTP transports serve its metrics at /metrics.
	// Nil: none, at no cost.
	Telemetry *telemetry.Telemetry
	// OAuth, when set, makes the HTTP transports an OAuth 2.1 resource
	// server (see OAuth); BearerTokens are then not used. Nil: no OAuth.
	OAuth *OAuth
	// ShutdownGrace is how long in-flight calls may run after a shutdown
	// begins before they are cancelled. Zero: DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// SessionIdleTimeout ends a streamable HTTP session, and frees what the
	// server keeps for it, after this long without a request. Zero:
	// DefaultSessionIdleTimeout; negative: never.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the HTTP sessions open at once (streamable HTTP
	// and legacy SSE, each transport on its own); past it, a new session
	// is refused with HTTP 503 and a JSON-RPC error. Zero:
	// DefaultMaxSessions; negative: no bound.
	MaxSessions int
	// HTTPIdleTimeout closes keep-alive connections idle this long. Zero:
	// DefaultHTTPIdleTimeout.
	HTTPIdleTimeout time.Duration
	// HTTPReadTimeout bounds the reading of one request, headers and body
	// (a client that trickles its body is cut off). It never limits how
	// long a call runs or an SSE stream lives. Zero:
	// DefaultHTTPReadTimeout.
	HTTPReadTimeout time.Duration
	// MaxResultBytes bounds one result (text plus structured content);
	// a larger one is replaced by a result_too_large error, and an error
	// result's text past it is cut. Zero: DefaultMaxResultBytes;
	// negative: no bound.
	MaxResultBytes int
	// MaxQueuedCalls bounds the tools/call requests a stdio client may
	// have outstanding; past it a call gets a "server busy" JSON-RPC error
	// at once. Zero: DefaultMaxQueuedCalls.
	MaxQueuedCalls int
	// ProgressInterval is the least time between two progress
	// notifications of one call. Zero: DefaultProgressInterval.
	ProgressInterval time.Duration

	// State holds what the replicas of a fleet share: call budgets,
	// single-use marks on approval states, remembered approvals, streamable
	// HTTP session records and, with a shared store, per-tool rate limits
	// (which then limit the whole fleet). See package state. Nil: a new
	// in-memory store, so this process is the whole fleet. The server does
	// not close a store it was given.
	State state.Store
	// StateKeys sign approval states and seal pipeline resume states; give
	// every replica the same. Zero: a random key per process.
	StateKeys StateKeys
	// TaskTTL is how long a task and its result are kept after the task
	// starts, and the most a client may ask for. A task still running then
	// is kept while it runs, and its result for its TTL (at least 8 s)
	// after it ends. Zero: DefaultTaskTTL.
	TaskTTL time.Duration
	// TaskPollInterval is how often clients are told to poll a task.
	// Zero: DefaultTaskPollInterval.
	TaskPollInterval time.Duration
	// DrainDelay is how long, once a shutdown begins, the server keeps
	// serving as usual while /readyz already reports it not ready, so that
	// a balancer that polls readiness stops sending it requests before it
	// drains. Zero: it drains at once.
	DrainDelay time.Duration
}

// positive sets *p to def when it is zero or negative.
func positive[T int | int64 | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// unset sets *p to def when it is zero (a negative value means "none").
func unset[T int | int64 | time.Duration](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "mcp-tools"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = discardLogger()
	}
	positive(&o.MaxInFlight, DefaultMaxInFlight)
	positive(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	positive(&o.LogTruncate, DefaultLogTruncate)
	positive(&o.ShutdownGrace, DefaultShutdownGrace)
	unset(&o.SessionIdleTimeout, DefaultSessionIdleTimeout)
	unset(&o.MaxSessions, DefaultMaxSessions)
	positive(&o.HTTPIdleTimeout, DefaultHTTPIdleTimeout)
	positive(&o.HTTPReadTimeout, DefaultHTTPReadTimeout)
	unset(&o.MaxResultBytes, DefaultMaxResultBytes)
	positive(&o.MaxQueuedCalls, DefaultMaxQueuedCalls)
	positive(&o.ProgressInterval, DefaultProgressInterval)
	unset(&o.CallTimeout, DefaultCallTimeout)
	positive(&o.ApprovalHeartbeat, DefaultHeartbeat)
	positive(&o.Approval.Timeout, approval.DefaultTimeout)
	positive(&o.TaskTTL, DefaultTaskTTL)
	positive(&o.TaskPollInterval, DefaultTaskPollInterval)
	return o
}

// Server serves one registry of tools. Build it with New; it is safe for
// concurrent use.
type Server struct {
	opts  Options
	log   *slog.Logger
	mcp   *mcpserver.MCPServer
	reg   *tools.Registry
	descs []mcp.Tool

	// tables hold the open sessions of each HTTP transport made.
	tables    []*sessionTable
	limits    sessionLimits
	approvals approvals
	resumes   *sealer // seals a composite's state on 2026-07-28 retries
	// store holds what replicas share (Options.State, or a memory store);
	// shared says it is not this process's alone; health watches a shared
	// store for /readyz; gatedNames are the gated tools, whose remembered
	// approvals a session's end forgets.
	store      state.Store
	shared     bool
	health     *storeHealth
	gatedNames []string
	// relay carries elicitation answers and session ends between replicas
	// (nil without a shared store).
	relay *relay
	// asks counts, per session, the legacy approval questions this
	// replica waits on (so that it takes forwarded answers).
	asksMu sync.Mutex
	asks   map[string]int
	// fastHTTP answers plain streamable HTTP calls from the frame;
	// talksBack are the tools whose calls may send the client something
	// while they run (an approval question: gated tools and composites;
	// a task), which mcp-go's handler must carry.
	fastHTTP  *httpFast
	talksBack map[string]bool
	// tasks runs the calls that become tasks (nil when no tool has a task
	// mode); taskModes are the tools' modes; taskReplies counts marked
	// replies not yet written (see taskproto.go).
	tasks       *taskEngine
	taskModes   map[string]tools.TaskMode
	taskReplies atomic.Int64
	// notReady is set when a shutdown begins, before the drain delay.
	notReady atomic.Bool
	global   chan struct{} // server-wide in-flight places; nil: no bound
	// handlers holds each tool's whole governed call as an mcp-go handler,
	// by name (the stdio fast path calls it); stdioSession is the stdio
	// session mcp-go registered, once it has.
	handlers     map[string]mcpserver.ToolHandlerFunc
	stdioSession stdioSessionRef
	// stdioOut is the running ServeStdio's output, for progress
	// notifications (see notifyProgress).
	stdioOut atomic.Pointer[lockedWriter]
	// steps holds each tool's governed call as a step of a composite,
	// by name; made by New and never changed after.
	steps map[string]tools.Func

	// calls tracks the calls in flight, so a shutdown can refuse new ones
	// and wait for the rest.
	calls callTracker
	// hardStop is cancelled when the shutdown grace is over; every call is
	// linked to it, on every transport, and ends with a cancelled result
	// that is still sent to the client.
	hardStop       context.Context
	cancelHardStop context.CancelFunc
	// shutdownOnce starts the one shutdown; shutdownDone is closed when it
	// is over, for every caller of Shutdown to wait on.
	shutdownOnce sync.Once
	shutdownDone chan struct{}
	// draining is closed when the server stops taking new calls (after
	// the drain delay): Serve then stops accepting connections.
	draining chan struct{}
	// stopEarly, closed by stopNow, ends the grace period at once.
	stopEarly     chan struct{}
	stopEarlyOnce sync.Once
	// closers end what the HTTP transports started (session sweepers,
	// streams), run once at the end of a shutdown. closersMu also guards
	// tables.
	closersMu sync.Mutex
	closers   []func(context.Context)
	closed    bool
}

// New builds the server: every descriptor is built, and every input schema
// compiled, here, once. It fails if a schema does not compile, or if a
// composite's steps, by name, call it again.
func New(reg *tools.Registry, opts Options) (_ *Server, err error) {
	opts = opts.withDefaults()
	s := &Server{opts: opts, log: opts.Logger, reg: reg, shutdownDone: make(chan struct{}), stopEarly: make(chan struct{}), draining: make(chan struct{}),
		handlers: map[string]mcpserver.ToolHandlerFunc{}}
	s.hardStop, s.cancelHardStop = context.WithCancel(context.Background())
	s.limits.max = opts.MaxInFlight
	if opts.MaxInFlightTotal > 0 {
		s.global = make(chan struct{}, opts.MaxInFlightTotal)
	}
	for name := range opts.Tools {
		if _, ok := reg.Lookup(name); !ok {
			return nil, fmt.Errorf("server: settings for unknown tool %q", name)
		}
	}
	if opts.OAuth != nil {
		if err := opts.OAuth.check(); err != nil {
			return nil, err
		}
		// A tool's own scopes (Info.Scopes) apply unless the operator's
		// ToolScopes name it; the caller's OAuth value is not changed.
		o := *opts.OAuth
		o.ToolScopes = map[string][]string{}
		for _, info := range reg.Infos() {
			if info.Scopes != nil {
				o.ToolScopes[info.Name] = info.Scopes
			}
		}
		for name, sc := range opts.OAuth.ToolScopes {
			o.ToolScopes[name] = sc
		}
		// A composite runs its steps: it needs its own scopes and those
		// of every step, at any depth, so that a token cannot call a tool
		// through a pipeline that it may not call (or see) directly.
		own := o
		own.ToolScopes = maps.Clone(o.ToolScopes)
		for _, t := range reg.Tools() {
			if c, ok := t.(tools.Composite); ok {
				name := c.Info().Name
				scopes := stepScopes(reg, &own, c, map[string]bool{name: true}, slices.Clone(own.scopesFor(name)))
				slices.Sort(scopes)
				o.ToolScopes[name] = slices.Compact(scopes)
			}
		}
		opts.OAuth = &o
		s.opts.OAuth = &o
	}
	if err := opts.Approval.Validate(); err != nil {
		return nil, fmt.Errorf("server: approval: %w", err)
	}
	for _, name := range append(append([]string(nil), opts.Approval.Require...), opts.Approval.Exempt...) {
		if _, ok := reg.Lookup(name); !ok {
			return nil, fmt.Errorf("server: approval settings name unknown tool %q", name)
		}
	}
	s.store = opts.State
	if s.store == nil {
		s.store = state.NewMemory()
	}
	defer func() {
		if err != nil {
			// Stop what was started (the store's watcher, the task
			// engine's subscription) for a server that will never run.
			for _, c := range s.closers {
				c(context.Background())
			}
		}
	}()
	s.shared = state.Shared(s.store)
	if err := s.setupKeys(opts); err != nil {
		return nil, err
	}
	if s.shared {
		s.health = watchStore(s.store, func(up bool) {
			if up {
				s.log.Info("state store reachable again")
			} else {
				s.log.Warn("state store unreachable: calls that need shared state fail, and /readyz reports not ready")
			}
		})
		s.onShutdown(func(context.Context) { s.health.close() })
	}

	hooks := &mcpserver.Hooks{}
	if opts.Telemetry != nil {
		hooks.AddBeforeCallTool(recordRequestID)
		hooks.AddOnRegisterSession(func(context.Context, mcpserver.ClientSession) { opts.Telemetry.SessionOpened() })
	}
	s.fastHTTP = newHTTPFast(s, len(opts.BearerTokens) > 0 || opts.OAuth != nil)
	s.talksBack = map[string]bool{}
	hooks.AddOnRegisterSession(func(_ context.Context, cs mcpserver.ClientSession) {
		if cs.SessionID() == stdioSessionID {
			s.stdioSession.Store(&cs)
			return
		}
		s.fastHTTP.registered(cs)
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, cs mcpserver.ClientSession) {
		s.fastHTTP.unregistered(cs.SessionID())
		s.opts.Telemetry.SessionClosed()
		s.limits.forget(cs.SessionID())
		if !s.shared {
			// This process is the whole fleet: the session is over.
			// (In a fleet it may live on elsewhere; it ends on a DELETE, or
			// when its record expires.)
			s.forgetSession(context.Background(), cs.SessionID())
		}
		s.closersMu.Lock()
		tables := s.tables
		s.closersMu.Unlock()
		for _, t := range tables {
			t.remove(cs.SessionID())
		}
	})
	s.taskModes = map[string]tools.TaskMode{}
	for _, info := range reg.Infos() {
		if info.Task != tools.TaskNever {
			s.taskModes[info.Name] = info.Task
		}
	}
	if len(s.taskModes) > 0 {
		s.taskHooks(hooks, s.taskModes)
		s.tasks = newTaskEngine(s)
		s.onShutdown(func(context.Context) { s.tasks.close() })
	}
	mcpOpts := []mcpserver.ServerOption{
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithHooks(hooks),
		// No mcpserver.WithLogger: it adds a second INFO line per request
		// and per call; logMiddleware writes the one line per call.
	}
	if opts.OAuth != nil {
		// A tool the token may not call is left out of its tools/list.
		mcpOpts = append(mcpOpts, mcpserver.WithToolFilter(opts.OAuth.toolFilter))
	}
	s.mcp = mcpserver.NewMCPServer(opts.Name, opts.Version, mcpOpts...)

	// Governance is read here, once, from each tool's descriptor (and the
	// operator's settings): nothing is detected from a tool's Go type but
	// whether it is a Composite, which is what it says it is.
	var serverTools []mcpserver.ServerTool
	steps := map[string]tools.Func{} // each tool's governed call as a step; fixed after New
	var composites []tools.Composite
	for _, t := range reg.Tools() {
		info := t.Info()
		if opts.Strict {
			strict, err := forbidAdditional(info.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("server: tool %q: %w", info.Name, err)
			}
			info.InputSchema = strict
		}
		v, err := schema.Compile(info.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("server: tool %q: input schema: %w", info.Name, err)
		}
		gated := opts.Approval.Gated(info.Name, info.Gated)
		if gated {
			s.gatedNames = append(s.gatedNames, info.Name)
		}
		if _, composite := t.(tools.Composite); gated || composite || info.Task != tools.TaskNever {
			s.talksBack[info.Name] = true
		}
		if gated && !info.Annotations.ReadOnly {
			// Clients can warn too: a gated tool is published as destructive.
			info.Annotations.Destructive = true
		}
		c, isComposite := t.(tools.Composite)
		call := t.Call
		limit := s.toolLimitMiddleware(info) // one limiter, shared by both chains
		own := []tools.Middleware{s.globalLimitMiddleware, limit, s.timeoutMiddleware}
		if isComposite {
			if l := opts.Tools[info.Name]; l != (tools.Limits{}) || info.Limits != (tools.Limits{}) {
				return nil, fmt.Errorf("server: tool %q is a composite: it runs under its steps' own limits and timeouts; set those on the steps", info.Name)
			}
			composites = append(composites, c)
			// A composite holds no server-wide or per-tool place and has no
			// timeout of its own: its steps do, each under its own rules,
			// so a person's approval of a step is never charged to them.
			own = []tools.Middleware{}
			call = s.runComposite(c)
		}
		// A step of a composite runs this chain: the composite's call
		// already holds the session's place, was counted against the
		// budget once, and logs as one line. The step runs under its own
		// tool's approval, limits and timeout, never its parent's; a
		// composite as a step runs its own steps governed too.
		resume := func(_ tools.Info, next tools.Func) tools.Func { return next }
		if isComposite {
			resume = s.resumeMiddleware
		}
		steps[info.Name] = tools.Chain(info, call, append(append([]tools.Middleware{
			validateMiddleware(v),
			resume,
			s.approvalMiddleware(info, gated, v),
		}, own...), opts.Middleware...)...)
		// A call that becomes a task runs the rest of its chain in the
		// background, logged and measured as a call of its own.
		task := func(_ tools.Info, next tools.Func) tools.Func { return next }
		if info.Task != tools.TaskNever {
			work := tools.Chain(info, call, append(append([]tools.Middleware{
				opts.Telemetry.Middleware,
				s.recoverMiddleware,
				s.logMiddleware,
				s.outcomeMiddleware,
				s.limitMiddleware, // a session's running tasks hold its places too
			}, own...), opts.Middleware...)...)
			task = s.taskMiddleware(info, work)
		}
		fn := tools.Chain(info, call, append(append([]tools.Middleware{
			opts.Telemetry.Middleware, // outermost: it sees every outcome (nil: a no-op)
			s.recoverMiddleware,
			s.logMiddleware,
			s.outcomeMiddleware,
			s.limitMiddleware,
			validateMiddleware(v),
			resume,
			s.budgetMiddleware(gated),
			s.approvalMiddleware(info, gated, v),
			task,
		}, own...), opts.Middleware...)...)
		desc := descriptor(info)
		s.descs = append(s.descs, desc)
		if s.log.Enabled(context.Background(), LevelTrace) {
			b, _ := json.Marshal(desc)
			s.log.Log(context.Background(), LevelTrace, "tool descriptor", "tool", info.Name, "json", string(b))
		}
		h := s.handler(fn, info.Task)
		s.handlers[info.Name] = h
		serverTools = append(serverTools, mcpserver.ServerTool{Tool: desc, Handler: h})
	}
	for _, c := range composites {
		for i, name := range c.Steps() {
			if _, ok := steps[name]; !ok {
				return nil, fmt.Errorf("server: pipeline %q: step %d: tool %q is not registered", c.Info().Name, i+1, name)
			}
		}
	}
	acyclic := map[string]bool{}
	for _, c := range composites {
		if path := stepCycle(reg, c, []string{c.Info().Name}, acyclic); path != nil {
			return nil, fmt.Errorf("server: pipeline %q calls itself through its steps (%s): a call would recurse until the stack overflows", c.Info().Name, strings.Join(path, " → "))
		}
	}
	gatedSet := map[string]bool{}
	for _, name := range s.gatedNames {
		gatedSet[name] = true
	}
	for _, c := range composites {
		if c.Info().Task == tools.TaskNever {
			continue
		}
		if step := gatedStep(reg, c, gatedSet, map[string]bool{}); step != "" {
			return nil, fmt.Errorf("server: pipeline %q runs as a task, but its step %q needs a person's approval, which a task running in the background cannot ask for; gate the pipeline itself (it is asked before the task starts) or drop its task mode", c.Info().Name, step)
		}
	}
	s.steps = steps
	s.mcp.AddTools(serverTools...)
	return s, nil
}

// stepScopes appends to scopes those every step of c (at any depth) needs
// by o.
func stepScopes(reg *tools.Registry, o *OAuth, c tools.Composite, seen map[string]bool, scopes []string) []string {
	for _, name := range c.Steps() {
		if seen[name] {
			continue
		}
		seen[name] = true
		scopes = append(scopes, o.scopesFor(name)...)
		if t, ok := reg.Lookup(name); ok {
			if inner, ok := t.(tools.Composite); ok {
				scopes = stepScopes(reg, o, inner, seen, scopes)
			}
		}
	}
	return scopes
}

// stepCycle returns the names from path[0] (c, the last of path) down
// through the steps of the registry's composites back to one already on
// path, or nil if there is no cycle among the composites c reaches, which
// it then adds to acyclic (and does not walk again: shared steps would make
// the walk exponential).
func stepCycle(reg *tools.Registry, c tools.Composite, path []string, acyclic map[string]bool) []string {
	for _, name := range c.Steps() {
		if slices.Contains(path, name) {
			return append(slices.Clone(path), name)
		}
		if acyclic[name] {
			continue
		}
		if t, ok := reg.Lookup(name); ok {
			if inner, ok := t.(tools.Composite); ok {
				if cycle := stepCycle(reg, inner, append(path, name), acyclic); cycle != nil {
					return cycle
				}
			}
		}
	}
	acyclic[path[len(path)-1]] = true
	return nil
}

// gatedStep returns a step of c (at any depth) that is gated, or "".
func gatedStep(reg *tools.Registry, c tools.Composite, gated, seen map[string]bool) string {
	for _, name := range c.Steps() {
		if gated[name] {
			return name
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		if t, ok := reg.Lookup(name); ok {
			if inner, ok := t.(tools.Composite); ok {
				if g := gatedStep(reg, inner, gated, seen); g != "" {
					return g
				}
			}
		}
	}
	return ""
}

// callStep is the tools.Caller every composite is handed: a step's
// governed call, by name. s.steps is fixed when New returns.
func (s *Server) callStep(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
	fn, ok := s.steps[name]
	if !ok {
		return tools.Result{}, &tools.Error{Kind: tools.KindInternal, Message: fmt.Sprintf("internal error: no tool %q to run as a step", name)}
	}
	return fn(ctx, args)
}

// Tools returns the tool descriptors exactly as tools/list publishes them
// (to a client whose token may call every tool), in the registry's order.
// The slice and its schemas are the caller's.
func (s *Server) Tools() []Descriptor {
	out := make([]Descriptor, len(s.descs))
	for i, t := range s.descs {
		d := descriptorOf(t)
		d.InputSchema = append(json.RawMessage(nil), d.InputSchema...)
		if d.OutputSchema != nil {
			d.OutputSchema = append(json.RawMessage(nil), d.OutputSchema...)
		}
		out[i] = d
	}
	return out
}

// descriptor is the MCP tool that publishes info.
func descriptor(info tools.Info) mcp.Tool {
	return Descriptor{Name: info.Name, Description: info.Description, InputSchema: info.InputSchema,
		OutputSchema: info.OutputSchema, Annotations: info.Annotations}.mcpTool()
}

// handler adapts a composed call to an mcp-go tool handler. It never
// returns a Go error: mcp-go would turn one into a JSON-RPC error that the
// model never reads.
func (s *Server) handler(fn tools.Func, mode tools.TaskMode) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if mode != tools.TaskNever || (req.Params.Task != nil && s.tasks != nil) || ctx.Value(localTaskKey{}) != nil {
			want, refusal := decideTask(ctx, mode, req)
			if refusal != nil {
				return s.markReply(refusal), nil
			}
			if want != nil {
				ctx = context.WithValue(ctx, taskWantKey{}, want)
			}
		}
		tracked := ctx.Value(trackedKey{}) != nil
		if !tracked { // the stdio fast path counts its calls when it reads them
			if !s.calls.start() {
				return shuttingDown(), nil
			}
			defer s.calls.done()
		}
		// The request's own context outlives the shutdown grace, so that
		// mcp-go still writes the response; the call itself is cancelled
		// when the grace is over.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.hardStop, cancel)()

		ctx, flush := s.callContext(ctx, req)
		ctx = observeRequest(ctx, s.opts.Telemetry, req)
		if req.Params.RequestState != "" {
			ctx = context.WithValue(ctx, roundTripKey{}, req.Params.MultiRoundTripParams)
		}
		args := rawArguments(req)
		var res tools.Result
		var err error
		if tracked || !onStdio(ctx) {
			res, err = fn(ctx, args)
		} else {
			res, err = callApart(ctx, fn, args, req.Params.Name)
		}
		flush()
		var pending *inputRequired
		if errors.As(err, &pending) {
			return pending.result, nil
		}
		var created *taskCreated
		if errors.As(err, &created) {
			return s.markReply(created.reply()), nil
		}
		return render(tools.Settle(res, err), s.opts.MaxResultBytes), nil
	}
}

// trackedKey marks a call the server already counts among those in
// flight (see fastPath.start).
type trackedKey struct{}

// onStdio reports whether ctx is a call of mcp-go's stdio session.
func onStdio(ctx context.Context) bool {
	cs := mcpserver.ClientSessionFromContext(ctx)
	return cs != nil && cs.SessionID() == stdioSessionID
}

// callApart runs fn on a goroutine of its own, for a call mcp-go's stdio
// server runs on one of its fixed pool of workers: a tool's
// runtime.Goexit, which cannot be stopped, would end that worker for good
// (after as many as the pool holds, 64 by default, no call left to mcp-go
// on the session would run again) and leave the call unanswered, holding
// its place. It is answered with an internal error instead. A panic that
// escapes fn is raised again on the worker, whose recovery answers it as
// before. (The calls left to mcp-go on stdio are few: a goroutine per call
// costs them little.)
func callApart(ctx context.Context, fn tools.Func, args json.RawMessage, name string) (res tools.Result, err error) {
	returned, panicked := apart(func() { res, err = fn(ctx, args) })
	switch {
	case panicked != nil:
		panic(panicked)
	case !returned:
		return tools.Result{}, internalError(name)
	}
	return res, err
}

// apart runs f on a goroutine of its own and waits for it, so that a
// runtime.Goexit in f ends that goroutine only. It reports how f ended:
// returned, or with the value of a panic (for the caller to raise again or
// answer), or neither: f called runtime.Goexit.
func apart(f func()) (returned bool, panicked any) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if !returned {
				panicked = recover()
			}
		}()
		f()
		returned = true
	}()
	<-done
	return returned, panicked
}

// shuttingDown is the result of a call that arrives during a shutdown.
func shuttingDown() *mcp.CallToolResult {
	return render(tools.Outcome{Err: &tools.Error{Kind: tools.KindCancelled, Message: "the server is shutting down; the call was not run"}}, 0)
}

// callContext puts the session and, when the client asked for it, a
// progress reporter into ctx. flush sends the last coalesced progress
// report, if one is held back; call it before the result is returned.
func (s *Server) callContext(ctx context.Context, req mcp.CallToolRequest) (_ context.Context, flush func()) {
	sess := tools.Session{Principal: principalFrom(ctx)}
	if cs := mcpserver.ClientSessionFromContext(ctx); cs != nil {
		sess.ID = cs.SessionID()
		if ci, ok := cs.(mcpserver.SessionWithClientInfo); ok {
			sess.ClientName = ci.GetClientInfo().Name
		}
	}
	ctx = tools.WithSession(ctx, sess)
	if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
		token := req.Params.Meta.ProgressToken
		p := &progressSender{ctx: ctx, every: s.opts.ProgressInterval, writesBefore: -1, notify: func(params map[string]any) {
			params["progressToken"] = token
			if err := s.notifyProgress(ctx, params); err != nil {
				s.log.Debug("progress notification not sent", "err", err)
			}
		}}
		return tools.WithProgress(ctx, p.report), p.flush
	}
	return ctx, func() {}
}

// notifyProgress sends a progress notification to the call's client. On
// stdio it is written at once, before the call can end: through mcp-go's
// session queue, which a goroutine of its own writes, it mostly came out
// after the call's result.
func (s *Server) notifyProgress(ctx context.Context, params map[string]any) error {
	const method = "notifications/progress"
	cs := mcpserver.ClientSessionFromContext(ctx)
	w := s.stdioOut.Load()
	if cs == nil || w == nil || cs.SessionID() != stdioSessionID {
		return s.mcp.SendNotificationToClient(ctx, method, params)
	}
	if !cs.Initialized() {
		return mcpserver.ErrNotificationNotInitialized // as mcp-go
	}
	b, err := json.Marshal(mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}}})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// progressSender sends one call's progress notifications, at most one per
// interval: a report that comes sooner is held, replacing any held before
// it, and sent when the interval is over or when the call ends (flush),
// whichever comes first. So a flood of reports costs the client a few
// notifications a second, and the last report always arrives, before the
// result.
type progressSender struct {
	ctx    context.Context
	every  time.Duration
	notify func(params map[string]any) // sends one notification's params

	mu      sync.Mutex
	last    time.Time // when the last notification was sent
	held    *progressReport
	timer   *time.Timer
	flushed bool
	// writesBefore is how many writes the HTTP response had before the
	// last notification was sent (-1: not streamable HTTP, nothing sent).
	writesBefore int64
}

type progressReport struct {
	progress, total float64
	message         string
}

func (p *progressSender) report(progress, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flushed {
		return // the result is on its way: no progress after it
	}
	r := &progressReport{progress, total, message}
	if wait := p.every - time.Since(p.last); wait > 0 {
		p.held = r
		if p.timer == nil {
			p.timer = time.AfterFunc(wait, p.sendHeld)
		}
		return
	}
	p.send(r)
}

func (p *progressSender) sendHeld() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	if p.held != nil && !p.flushed {
		p.send(p.held)
	}
}

func (p *progressSender) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.held != nil {
		p.send(p.held)
	}
	p.flushed = true
	if p.writesBefore >= 0 {
		awaitWrite(p.ctx, p.writesBefore, lastProgressWait)
	}
}

// lastProgressWait bounds how long a call's result waits for its last
// progress notification to be written (streamable HTTP only).
const lastProgressWait = 100 * time.Millisecond

// send sends r; p.mu is held.
func (p *progressSender) send(r *progressReport) {
	p.held = nil
	p.last = time.Now()
	p.writesBefore = writesSoFar(p.ctx)
	params := map[string]any{"progress": r.progress}
	if r.total > 0 {
		params["total"] = r.total
	}
	if r.message != "" {
		params["message"] = r.message
	}
	p.notify(params)
}

// rawArguments returns the call's arguments as JSON. Absent or null
// arguments are an empty object: a tool never sees null.
func rawArguments(req mcp.CallToolRequest) json.RawMessage {
	if raw := req.Params.RawArguments; len(raw) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		return raw
	}
	if req.Params.Arguments == nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// render turns a call's outcome into the MCP result. It is the one place
// where that happens. A result whose text and structured content together
// are over limit bytes (limit > 0) is replaced by a result_too_large error;
// an error whose text is over it is cut, its kind and code kept.
// Structured content is encoded here, once, and handed on as JSON.
func render(r tools.Outcome, limit int) *mcp.CallToolResult {
	var structured any
	if raw, ok := r.Structured.(json.RawMessage); ok && r.Err == nil {
		structured = raw // encoded by outcomeMiddleware, and within the limit
	} else if r.Err == nil && r.Structured != nil {
		b, err := json.Marshal(r.Structured)
		if err != nil {
			r = tools.Outcome{Err: &tools.Error{Kind: tools.KindInternal, Message: "internal error: the structured result cannot be encoded as JSON", Err: err}}
		} else {
			structured = json.RawMessage(b)
			if limit > 0 && len(b)+len(r.Text) > limit {
				r = tools.Outcome{Err: tooLarge(len(b)+len(r.Text), limit)}
			}
		}
	}
	if r.Err == nil && limit > 0 && len(r.Text) > limit {
		r = tools.Outcome{Err: tooLarge(len(r.Text), limit)}
	}
	var annotated mcp.Annotated
	if r.Audience == tools.ForUser {
		annotated.Annotations = &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}}
	}
	if r.Err != nil {
		if limit > 0 && len(errorPrefix)+len(r.Err.Message) > limit {
			e := *r.Err // the tool's own error stays as it was
			e.Message = clipMessage(e.Message, limit-len(errorPrefix))
			r.Err = &e
		}
		meta := map[string]any{MetaErrorKind: string(r.Err.Kind)}
		if r.Err.Code != 0 {
			meta[MetaErrorCode] = r.Err.Code
		}
		return &mcp.CallToolResult{
			Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: meta}},
			Content: []mcp.Content{mcp.TextContent{Annotated: annotated, Type: "text", Text: errorPrefix + r.Err.Message}},
			IsError: true,
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.TextContent{Annotated: annotated, Type: "text", Text: r.Text}},
		StructuredContent: structured,
	}
}

// errorPrefix begins the text of every error result.
const errorPrefix = "Error: "

// clipMessage cuts msg, on a character boundary, to at most n bytes, the
// mark of the cut included (when n leaves room for it).
func clipMessage(msg string, n int) string {
	mark := fmt.Sprintf("…(cut: %d bytes, over the server's limit; --max-result-bytes)", len(msg))
	keep := max(n-len(mark), 0)
	for keep > 0 && !utf8.RuneStart(msg[keep]) {
		keep--
	}
	return msg[:keep] + mark
}

func tooLarge(size, limit int) *tools.Error {
	return &tools.Error{Kind: tools.KindResultTooLarge,
		Message: fmt.Sprintf("the result is too large: %d bytes, over the server's limit of %d bytes (--max-result-bytes); ask for less, for example a narrower query or a smaller range", size, limit)}
}

// Shutdown stops taking new calls, waits for in-flight calls to finish for
// at most the grace period (or until ctx is done), then cancels the rest,
// waits for them to return (each still sends its response, a cancelled
// result), and ends what the HTTP transports started. It may be called
// more than once and from many goroutines: every caller returns when the
// one shutdown is over, or with ctx's error when ctx is done first.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() { go s.shutdown(ctx.Done()) })
	select {
	case <-s.shutdownDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopNow shuts down without a grace period: for a session whose client is
// gone, nothing is left to deliver.
// It cuts short a shutdown already under way, too.
func (s *Server) stopNow() {
	s.stopEarlyOnce.Do(func() { close(s.stopEarly) })
	s.shutdownOnce.Do(func() { go s.shutdown(nil) })
	<-s.shutdownDone
}

func (s *Server) shutdown(early <-chan struct{}) {
	defer close(s.shutdownDone)
	s.notReady.Store(true)
	if d := s.opts.DrainDelay; d > 0 {
		// /readyz says not ready; requests are still served, until the
		// balancer has noticed.
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-early:
		case <-s.stopEarly:
		}
		t.Stop()
	}
	done := s.calls.drain()
	close(s.draining)
	timer := time.NewTimer(s.opts.ShutdownGrace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-early:
	case <-s.stopEarly:
	}
	select {
	case <-done:
	default:
		s.log.Warn("shutdown grace period over; cancelling in-flight calls")
		s.cancelHardStop()
		select {
		case <-done:
		case <-time.After(stragglerWait):
			s.log.Error("calls still running after cancellation; leaving them behind")
		}
	}
	s.cancelHardStop()
	s.closersMu.Lock()
	closers := s.closers
	s.closers, s.closed = nil, true
	s.closersMu.Unlock()
	for _, c := range closers {
		c(context.Background())
	}
}

// onShutdown registers fn to run at the end of the shutdown (at once, if
// it is over).
func (s *Server) onShutdown(fn func(context.Context)) {
	s.closersMu.Lock()
	if !s.closed {
		s.closers = append(s.closers, fn)
		s.closersMu.Unlock()
		return
	}
	s.closersMu.Unlock()
	fn(context.Background())
}

// stragglerWait is how long Shutdown waits for cancelled calls to return.
const stragglerWait = 5 * time.Second

// forbidAdditional returns raw with additionalProperties: false at its top
// level, unless the schema already says something about additional
// properties.
func forbidAdditional(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if _, ok := m["additionalProperties"]; ok {
		return raw, nil
	}
	m["additionalProperties"] = json.RawMessage("false")
	return json.Marshal(m)
}

// callTracker counts calls in flight and, once draining, refuses new ones.
type callTracker struct {
	mu       sync.Mutex
	n        int
	draining bool
	idle     chan struct{} // made by drain; closed when n reaches 0
}

// start records a new call, or reports false when draining.
func (c *callTracker) start() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return false
	}
	c.n++
	return true
}

func (c *callTracker) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.n == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// drain refuses new calls from now on and returns a channel closed when
// none is left in flight.
func (c *callTracker) drain() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draining = true
	ch := make(chan struct{})
	if c.n == 0 {
		close(ch)
	} else {
		c.idle = ch
	}
	return ch
}
