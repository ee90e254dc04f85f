package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/auth"
	"github.com/mcp-tools/mcp-tools/cmd/mcp-tools/internal/config"
	"github.com/mcp-tools/mcp-tools/cmd/mcp-tools/internal/logging"
	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin"
	"github.com/mcp-tools/mcp-tools/tools/builtin/web"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// setup holds the flags that decide what is served and how, and builds the
// server from them and the config file. A flag given on the command line
// wins over the file.
type setup struct {
	configPath          string
	builtins            string
	root                string
	maxReadBytes        int64
	allowPrivateNetwork bool
	strict              bool
	logLevel            string
	logFormat           string
	logTruncate         int
	requireApproval     listFlag
	noApproval          listFlag
	approvalFallback    string
	approvalTimeout     time.Duration
	maxCalls            int
	callTimeout         time.Duration

	// serve only
	transport       string
	addr            string
	maxInFlight     int
	maxInFlightAll  int
	maxMessageBytes int64
	grace           time.Duration
	origins         listFlag
	maxSessions     int
	sessionIdle     time.Duration
	httpIdle        time.Duration
	httpRead        time.Duration
	maxResultBytes  int
	maxQueuedCalls  int
	authIssuer      string
	authAudience    string
	authScopes      listFlag
	metricsAddr     string
	traceArguments  bool
	serving         bool // the serve command (list and call share no state)
	stateURL        string
	stateKeyFile    string
	drainDelay      time.Duration

	// tel measures and traces the served calls (serve only; nil otherwise).
	tel *telemetry.Telemetry
	// store is the state store the server was given; its owner closes it
	// after the server is shut down.
	store state.Store
	// skipped says, for each default built-in left off, why and which
	// flag turns it on (set by build).
	skipped map[string]string
	// file is the loaded config file, if any (set by server).
	file *config.File
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func (c *setup) register(fs *flag.FlagSet, serving bool) {
	c.serving = serving
	fs.StringVar(&c.configPath, "config", "", "configuration file (YAML or JSON) declaring tools and settings")
	fs.StringVar(&c.builtins, "builtins", "", "comma-separated built-ins to serve (default: every built-in that needs no setup)\n(choose from "+strings.Join(builtin.All(), ", ")+")")
	fs.StringVar(&c.root, "root", "", "folder the file tools work in; without it file_read, file_write and file_list are off")
	fs.Int64Var(&c.maxReadBytes, "max-read-bytes", 0, "cap on what file_read returns (default 1 MiB)")
	fs.BoolVar(&c.allowPrivateNetwork, "allow-private-network", false, "let web_fetch reach loopback and private addresses (intranet use)")
	fs.BoolVar(&c.strict, "strict", false, "reject unknown argument fields for every tool")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: trace, debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json (logs always go to stderr)")
	fs.IntVar(&c.logTruncate, "log-truncate", server.DefaultLogTruncate, "characters of input and output shown per call at INFO")
	fs.Var(&c.requireApproval, "require-approval", "tool a person must approve before it runs (repeatable)")
	fs.Var(&c.noApproval, "no-approval", "tool gated by default (file_write) to open up (repeatable)")
	fs.StringVar(&c.approvalFallback, "approval-fallback", "deny", "when the client cannot ask a person: deny or allow (webhook: config file)")
	fs.DurationVar(&c.approvalTimeout, "approval-timeout", approval.DefaultTimeout, "how long a pending approval waits before it is rejected")
	fs.IntVar(&c.maxCalls, "max-calls-per-session", 0, "call budget of a session (of a bearer token); 0: no budget")
	fs.DurationVar(&c.callTimeout, "call-timeout", server.DefaultCallTimeout, "default per-call timeout")
	fs.IntVar(&c.maxResultBytes, "max-result-bytes", server.DefaultMaxResultBytes, "largest result a call may return (text plus structured); -1: no bound")
	if serving {
		fs.StringVar(&c.transport, "transport", server.TransportStdio, "stdio, sse or http (streamable HTTP)")
		fs.StringVar(&c.addr, "addr", server.DefaultAddr, "address the HTTP transports listen on")
		fs.IntVar(&c.maxInFlight, "max-in-flight", server.DefaultMaxInFlight, "calls of one session that run at once; more wait")
		fs.IntVar(&c.maxInFlightAll, "max-in-flight-total", 0, "calls that run at once across sessions; 0: no bound")
		fs.Int64Var(&c.maxMessageBytes, "max-message-bytes", server.DefaultMaxMessageBytes, "largest incoming message (stdio line or HTTP body)")
		fs.DurationVar(&c.grace, "shutdown-grace", server.DefaultShutdownGrace, "on SIGINT/SIGTERM, how long in-flight calls may finish")
		fs.Var(&c.origins, "allowed-origin", "browser origin allowed on HTTP besides loopback ones (repeatable)")
		fs.IntVar(&c.maxSessions, "max-sessions", server.DefaultMaxSessions, "HTTP sessions open at once; past it a new one gets 503; -1: no bound")
		fs.DurationVar(&c.sessionIdle, "session-idle-timeout", server.DefaultSessionIdleTimeout, "end an HTTP session idle this long; -1s: never")
		fs.DurationVar(&c.httpIdle, "http-idle-timeout", server.DefaultHTTPIdleTimeout, "close a keep-alive HTTP connection idle this long")
		fs.DurationVar(&c.httpRead, "http-read-timeout", server.DefaultHTTPReadTimeout, "time to read one HTTP request, body included (never limits calls or streams)")
		fs.IntVar(&c.maxQueuedCalls, "max-queued-calls", server.DefaultMaxQueuedCalls, "stdio calls outstanding at once; past it a call gets \"server busy\"")
		fs.StringVar(&c.authIssuer, "auth-issuer", "", "OAuth authorization server (issuer URL): HTTP requests need its access tokens")
		fs.StringVar(&c.authAudience, "auth-audience", "", "this server's MCP URL as clients reach it, required in tokens' aud (default http://ADDR/mcp)")
		fs.Var(&c.authScopes, "auth-scope", "OAuth scope every request needs (repeatable)")
		fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics, /healthz and /readyz on this address too (for a stdio server)")
		fs.BoolVar(&c.traceArguments, "trace-arguments", false, "put call arguments and results on trace spans (secret fields hidden)")
		fs.StringVar(&c.stateURL, "state", "", "share state with other replicas in Redis (the service build only: -tags service):\nredis://[user:pass@]host:port/db (rediss:// for TLS; ${VAR} is read from the environment);\ndefault: in memory")
		fs.StringVar(&c.stateKeyFile, "state-key-file", "", "file with the key that signs approval states (first line) and the previous key (second line);\ndefault: $"+stateKeyEnv+" and $"+previousStateKeyEnv+", else a random key per process")
		fs.DurationVar(&c.drainDelay, "drain-delay", 0, "on SIGTERM, keep serving this long while /readyz reports not ready, then drain")
	}
}

// server loads the config file, applies it under the flags, and builds the
// server. quietLevel, when not empty, replaces the default log level (list
// and call print results, not logs).
func (c *setup) server(fs *flag.FlagSet, stderr io.Writer, quietLevel string) (*server.Server, *slog.Logger, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var file *config.File
	if c.configPath != "" {
		f, err := config.Load(c.configPath)
		if err != nil {
			return nil, nil, badConfig(err)
		}
		file, c.file = f, f
		c.applyFile(f, set)
	}
	if quietLevel != "" && !set["log-level"] && (file == nil || file.Server.LogLevel == "") {
		c.logLevel = quietLevel
	}
	logOut := stderr
	if os.Getenv("NO_COLOR") != "" {
		// The text logger colours only a terminal: hide that it is one.
		logOut = struct{ io.Writer }{stderr}
	}
	log, err := logging.New(logging.Config{Level: c.logLevel, Format: c.logFormat, Output: logOut})
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	if c.observed() {
		tel, err := telemetry.New(telemetry.Config{RecordArguments: c.traceArguments, OTLP: otlpExport})
		if err != nil {
			return nil, log, err // it says "telemetry: "
		}
		c.tel = tel
	}
	reg, toolOpts, policy, err := c.build(file, log)
	if err != nil {
		return nil, log, badConfig(err)
	}
	oauth, err := c.oauth(file, reg)
	if err != nil {
		return nil, log, err
	}
	keys, err := c.stateKeys()
	if err != nil {
		return nil, log, err
	}
	if c.store, err = c.openState(log); err != nil {
		return nil, log, err
	}
	opts := server.Options{
		Name:               "mcp-tools",
		Version:            moduleVersion(),
		Logger:             log,
		Strict:             c.strict,
		LogTruncate:        c.logTruncate,
		MaxInFlight:        c.maxInFlight,
		MaxInFlightTotal:   c.maxInFlightAll,
		MaxMessageBytes:    c.maxMessageBytes,
		ShutdownGrace:      c.grace,
		AllowedOrigins:     c.origins,
		BearerTokens:       tokensFromEnv(),
		MaxCallsPerSession: c.maxCalls,
		MaxSessions:        c.maxSessions,
		SessionIdleTimeout: c.sessionIdle,
		HTTPIdleTimeout:    c.httpIdle,
		HTTPReadTimeout:    c.httpRead,
		MaxResultBytes:     c.maxResultBytes,
		MaxQueuedCalls:     c.maxQueuedCalls,
		CallTimeout:        c.callTimeout,
		Tools:              toolOpts,
		Approval:           policy,
		OAuth:              oauth,
		Telemetry:          c.tel,
		State:              c.store,
		StateKeys:          keys,
		DrainDelay:         c.drainDelay,
	}
	srv, err := server.New(reg, opts)
	if err != nil {
		c.store.Close()
		return nil, log, badConfig(err)
	}
	return srv, log, nil
}

// applyFile copies the file's server settings into the flags not given on
// the command line.
func (c *setup) applyFile(f *config.File, set map[string]bool) {
	s := f.Server
	str := func(name string, dst *string, v string) {
		if v != "" && !set[name] {
			*dst = v
		}
	}
	num := func(name string, dst *int, v int) {
		if v != 0 && !set[name] {
			*dst = v
		}
	}
	dur := func(name string, dst *time.Duration, v config.Duration) {
		if v != "" && !set[name] {
			*dst = v.D()
		}
	}
	str("transport", &c.transport, s.Transport)
	str("state", &c.stateURL, s.State)
	str("state-key-file", &c.stateKeyFile, s.StateKeyFile)
	dur("drain-delay", &c.drainDelay, s.DrainDelay)
	str("addr", &c.addr, s.Addr)
	str("log-level", &c.logLevel, s.LogLevel)
	str("log-format", &c.logFormat, s.LogFormat)
	num("log-truncate", &c.logTruncate, s.LogTruncate)
	num("max-in-flight", &c.maxInFlight, s.MaxInFlight)
	num("max-in-flight-total", &c.maxInFlightAll, s.MaxInFlightTotal)
	num("max-calls-per-session", &c.maxCalls, s.MaxCallsPerSession)
	if s.MaxMessageBytes != 0 && !set["max-message-bytes"] {
		c.maxMessageBytes = s.MaxMessageBytes
	}
	dur("call-timeout", &c.callTimeout, s.CallTimeout)
	dur("shutdown-grace", &c.grace, s.ShutdownGrace)
	dur("approval-timeout", &c.approvalTimeout, f.Approval.Timeout)
	str("approval-fallback", &c.approvalFallback, f.Approval.Fallback)
	if s.Strict && !set["strict"] {
		c.strict = true
	}
	if !set["allowed-origin"] {
		c.origins = append(c.origins, s.AllowedOrigins...)
	}
}

// build makes the tools, their per-tool settings and the approval policy.
func (c *setup) build(file *config.File, log *slog.Logger) (*tools.Registry, map[string]server.ToolOptions, approval.Policy, error) {
	toolOpts := map[string]server.ToolOptions{}
	policy := approval.Policy{Require: c.requireApproval, Exempt: c.noApproval, Timeout: c.approvalTimeout}
	fb, err := approval.ParseFallback(c.approvalFallback)
	if err != nil {
		return nil, nil, policy, err
	}
	policy.Fallback = fb

	bcfg := builtin.Config{Root: c.root, MaxReadBytes: c.maxReadBytes, AllowPrivateNetwork: c.allowPrivateNetwork, Version: moduleVersion(), Logger: log}
	var names []string
	if file != nil {
		for name, b := range file.Builtins {
			if b.Root != "" && bcfg.Root == "" {
				bcfg.Root = b.Root
			}
			if b.MaxReadBytes != 0 && bcfg.MaxReadBytes == 0 {
				bcfg.MaxReadBytes = b.MaxReadBytes
			}
			if b.AllowPrivateNetwork {
				bcfg.AllowPrivateNetwork = true
			}
			if name == "web_search" {
				bcfg.Search = web.SearchConfig{Backend: b.Backend, URL: b.URL, APIKey: b.APIKey, Logger: log}
			}
			if b.Timeout != "" {
				toolOpts[name] = server.ToolOptions{Timeout: b.Timeout.D()}
			}
			approvalSetting(&policy, name, b.Approval)
		}
		if file.Builtins != nil && c.builtins == "" {
			for name := range file.Builtins {
				names = append(names, name)
			}
			names = orderedBuiltins(names)
		}
		if file.Approval.OnTimeout == "approve" {
			policy.OnTimeout = approval.Approve
		}
		policy.Require = append(policy.Require, file.Approval.Require...)
		if w := file.Approval.Webhook; w != nil {
			policy.Webhook = &approval.Webhook{URL: w.URL, Timeout: w.Timeout.D(), Headers: w.Headers}
		}
	}
	if c.builtins != "" {
		for _, n := range strings.Split(c.builtins, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	} else if names == nil {
		names, c.skipped = builtin.Default(bcfg)
		for _, name := range builtin.All() {
			if why, ok := c.skipped[name]; ok {
				log.Info("built-in not enabled", "tool", name, "why", why)
			}
		}
	}
	all, err := builtin.Build(bcfg, names)
	if err != nil {
		return nil, nil, policy, err
	}
	if file != nil {
		declared, err := fileTools(file, all, toolOpts, &policy, log, c.tel, c.logTruncate)
		if err != nil {
			return nil, nil, policy, err
		}
		all = append(all, declared...)
	}
	reg, err := tools.NewRegistry(all...)
	if err != nil {
		return nil, nil, policy, err
	}
	return reg, toolOpts, policy, nil
}

func approvalSetting(p *approval.Policy, name string, v *bool) {
	switch {
	case v == nil:
	case *v:
		p.Require = append(p.Require, name)
	default:
		p.Exempt = append(p.Exempt, name)
	}
}

// orderedBuiltins sorts built-in names in the order builtin.All() lists
// them, so that the served order does not depend on map order.
func orderedBuiltins(names []string) []string {
	var out []string
	for _, n := range builtin.All() {
		for _, m := range names {
			if m == n {
				out = append(out, n)
			}
		}
	}
	for _, m := range names {
		found := false
		for _, n := range builtin.All() {
			found = found || m == n
		}
		if !found {
			out = append(out, m)
		}
	}
	return out
}

// fileTools builds the tools the file declares: subprocess and HTTP tools
// first, then pipelines (which may name any of them, or a built-in, or
// another pipeline). logTruncate is the server's LogTruncate, which
// bounds a pipeline step's input at DEBUG too.
func fileTools(f *config.File, builtins []tools.Tool, toolOpts map[string]server.ToolOptions, policy *approval.Policy, log *slog.Logger, tel *telemetry.Telemetry, logTruncate int) ([]tools.Tool, error) {
	byName := map[string]tools.Tool{}
	for _, t := range builtins {
		byName[t.Info().Name] = t
	}
	var out []tools.Tool
	var errs []error
	var pipes []config.Tool
	for _, ct := range f.Tools {
		if ct.Timeout != "" || ct.MaxConcurrency > 0 || ct.Rate > 0 {
			toolOpts[ct.Name] = server.ToolOptions{Timeout: ct.Timeout.D(), MaxConcurrency: ct.MaxConcurrency, Rate: ct.Rate, Burst: ct.Burst}
		}
		approvalSetting(policy, ct.Name, ct.Approval)
		if ct.Pipeline != nil {
			pipes = append(pipes, ct)
			continue
		}
		t, err := remoteTool(ct, f.Dir, log, tel)
		if err != nil {
			errs = append(errs, fmt.Errorf("tool %q: %w", ct.Name, err))
			continue
		}
		byName[ct.Name] = t
		out = append(out, t)
	}
	// A step that names a built-in which is not served can never be
	// built: say so, rather than call it a cycle.
	var buildable []config.Tool
	for _, ct := range pipes {
		ok := true
		for j, st := range ct.Pipeline.Steps {
			if _, served := byName[st.Tool]; served || declared(f, st.Tool) {
				continue
			}
			ok = false
			if slices.Contains(builtin.All(), st.Tool) {
				errs = append(errs, fmt.Errorf("tool %q: step %d: built-in %q is not served; add it to --builtins (or to builtins: in the file)", ct.Name, j+1, st.Tool))
			} else {
				errs = append(errs, fmt.Errorf("tool %q: step %d: unknown tool %q", ct.Name, j+1, st.Tool))
			}
		}
		if ok {
			buildable = append(buildable, ct)
		} else {
			byName[ct.Name] = nil
		}
	}
	pipes = buildable
	// Pipelines may name each other: build those whose steps exist until
	// none is left (or none can be built: a cycle, or a step whose
	// pipeline failed).
	for len(pipes) > 0 {
		var left []config.Tool
		for _, ct := range pipes {
			ready, broken := true, false
			for _, st := range ct.Pipeline.Steps {
				t, ok := byName[st.Tool]
				if !ok {
					ready = false
				} else if t == nil {
					broken = true
				}
			}
			if broken {
				errs = append(errs, fmt.Errorf("tool %q: a step names a tool that could not be built", ct.Name))
				byName[ct.Name] = nil
				continue
			}
			if !ready {
				left = append(left, ct)
				continue
			}
			t, err := pipelineTool(ct, byName, log, logTruncate)
			if err != nil {
				errs = append(errs, fmt.Errorf("tool %q: %w", ct.Name, err))
				byName[ct.Name] = nil
				continue
			}
			byName[ct.Name] = t
			out = append(out, t)
		}
		if len(left) == len(pipes) {
			for _, ct := range left {
				errs = append(errs, fmt.Errorf("tool %q: its steps name each other in a cycle", ct.Name))
			}
			break
		}
		pipes = left
	}
	return out, errors.Join(errs...)
}

// declared reports whether the file declares a tool called name.
func declared(f *config.File, name string) bool {
	for _, t := range f.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func annotations(a *config.Annotations) tools.Annotations {
	if a == nil {
		return tools.Annotations{}
	}
	return tools.Annotations{Title: a.Title, ReadOnly: a.ReadOnly, Destructive: a.Destructive, Idempotent: a.Idempotent, OpenWorld: a.OpenWorld}
}

func common(ct config.Tool, in, out []byte, timeout config.Duration, log *slog.Logger) remote.Common {
	return remote.Common{Name: ct.Name, Description: ct.Description, InputSchema: in, OutputSchema: out,
		Annotations: annotations(ct.Annotations), Timeout: timeout.D(), Task: tools.TaskMode(ct.Task), Logger: log}
}

func remoteTool(ct config.Tool, dir string, log *slog.Logger, tel *telemetry.Telemetry) (tools.Tool, error) {
	var obs remote.Observer
	if tel != nil {
		obs = tel // a nil *Telemetry in the interface would not be nil
	}
	var in, out []byte
	if ct.InputSchema != nil {
		in = *ct.InputSchema
	}
	if ct.OutputSchema != nil {
		out = *ct.OutputSchema
	}
	if p := ct.Process; p != nil {
		wd := p.Dir
		if wd == "" {
			wd = dir
		}
		return remote.NewCommand(remote.CommandConfig{
			Common:  common(ct, in, out, p.Timeout, log),
			Command: p.Command, Dir: wd, Env: p.Env, MaxStdout: p.MaxStdout, MaxStderr: p.MaxStderr,
			Observer: obs,
		})
	}
	h := ct.HTTP
	return remote.NewHTTP(remote.HTTPConfig{
		Common: common(ct, in, out, h.Timeout, log),
		URL:    h.URL, Method: h.Method, Headers: h.Headers, MaxResponseBytes: h.MaxResponseBytes,
		// The config loader expanded ${VAR} already: what a value holds
		// now (a password may hold "${x}") is sent as it is.
		LookupEnv: func(name string) (string, bool) { return "${" + name + "}", true },
		Observer:  obs,
	})
}

func pipelineTool(ct config.Tool, byName map[string]tools.Tool, log *slog.Logger, logTruncate int) (tools.Tool, error) {
	onError, err := pipeline.ParseOnError(ct.Pipeline.OnError)
	if err != nil {
		return nil, err
	}
	var steps []pipeline.Step
	for _, st := range ct.Pipeline.Steps {
		step := pipeline.Step{Tool: byName[st.Tool]}
		if a := st.Adapter; a != nil {
			if a.JSONPath != "" {
				step.Adapter, err = pipeline.JSONPath(a.JSONPath)
			} else {
				step.Adapter, err = pipeline.Template(a.Template)
			}
			if err != nil {
				return nil, err
			}
		}
		steps = append(steps, step)
	}
	return pipeline.New(pipeline.Config{Name: ct.Name, Description: ct.Description, Annotations: annotations(ct.Annotations), Steps: steps, OnError: onError,
		Task: tools.TaskMode(ct.Task), Logger: log, LogTruncate: logTruncate})
}

// tokensFromEnv reads the bearer tokens from the environment: one, or
// several separated by commas.
func tokensFromEnv() []string {
	var out []string
	for _, t := range strings.Split(os.Getenv(tokenEnv), ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// observed reports whether the served calls are measured: always over
// HTTP (metrics at /metrics), for stdio with --metrics-addr, and whenever
// the OpenTelemetry variables ask for an OTLP export. Only serve's are:
// list, call and validate export nothing (call would end before its span
// is flushed), so the embedded build must not refuse them for an OTLP
// endpoint in the environment.
func (c *setup) observed() bool {
	if !c.serving {
		return false
	}
	if c.transport == server.TransportHTTP || c.transport == server.TransportSSE || c.metricsAddr != "" {
		return true
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_EXPORTER_OTLP_") {
			return true
		}
	}
	return false
}

// oauth builds the OAuth resource-server settings from the flags and the
// config file's auth section, or returns nil when neither names an issuer.
// The issuer's discovery document is fetched now: a wrong issuer stops the
// server from starting, not the first client.
func (c *setup) oauth(file *config.File, reg *tools.Registry) (*server.OAuth, error) {
	cfg := auth.Config{Issuer: c.authIssuer, Audience: c.authAudience, RequiredScopes: c.authScopes}
	var toolScopes []string
	if file != nil && file.Auth != nil {
		a := file.Auth
		if cfg.Issuer == "" {
			cfg.Issuer = a.Issuer
		}
		if cfg.Audience == "" {
			cfg.Audience = a.Audience
		}
		if len(cfg.RequiredScopes) == 0 {
			cfg.RequiredScopes = a.RequiredScopes
		}
		cfg.JWKSRefresh = a.JWKSRefresh.D()
		toolScopes = a.ToolScopes
	}
	if cfg.Issuer == "" {
		if file != nil && file.Auth != nil {
			return nil, usagef("the config file's auth section names no issuer: set auth.issuer or --auth-issuer")
		}
		return nil, nil
	}
	if c.transport != server.TransportHTTP && c.transport != server.TransportSSE {
		return nil, usagef("--auth-issuer protects the HTTP transports; serve with --transport http (stdio needs no token)")
	}
	if cfg.Audience == "" {
		host, port, _ := strings.Cut(c.addr, ":")
		if host == "" || host == "0.0.0.0" || host == "::" || strings.HasPrefix(host, "[") {
			return nil, usagef("--auth-audience is needed when listening on %s: give the URL clients reach the MCP endpoint at (e.g. https://tools.example.com/mcp)", c.addr)
		}
		cfg.Audience = "http://" + host + ":" + port + server.PathMCP
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := auth.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	perTool := map[string][]string{}
	if file != nil {
		for name, b := range file.Builtins {
			if b.Scopes != nil {
				perTool[name] = b.Scopes
			}
		}
		for _, t := range file.Tools {
			if t.Scopes != nil {
				perTool[t.Name] = t.Scopes
			}
		}
	}
	for name := range perTool {
		if _, ok := reg.Lookup(name); !ok {
			return nil, badConfig(fmt.Errorf("scopes are set for %q, which is not served", name))
		}
	}
	return &server.OAuth{Verifier: v, DefaultScopes: toolScopes, ToolScopes: perTool}, nil
}
