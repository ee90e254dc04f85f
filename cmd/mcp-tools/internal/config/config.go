// Package config reads the mcp-tools configuration file: server settings,
// which built-ins are on, subprocess, HTTP and pipeline tools, and approval
// settings, in YAML (or JSON, which is YAML too).
//
// Load reports every problem in a file at once, each with its key path and,
// where the YAML parser knows it, its line. The shape of the file is the
// File struct: its JSON Schema, generated from the struct by the same
// reflection typed tools use, is what unknown keys and wrong types are
// checked against, so the struct and the checks cannot drift apart.
package config

import (
	"encoding/json"
	"fmt"
	"time"
)

// File is the whole configuration file. Every section is optional.
type File struct {
	Server   Server             `json:"server,omitempty" jsonschema:"description=How the server runs"`
	Builtins map[string]Builtin `json:"builtins,omitempty" jsonschema:"description=The built-ins to serve and their settings; when present only these are on"`
	Approval Approval           `json:"approval,omitempty" jsonschema:"description=Approval gates"`
	Tools    []Tool             `json:"tools,omitempty" jsonschema:"description=Subprocess, HTTP and pipeline tools"`
	Auth     *Auth              `json:"auth,omitempty" jsonschema:"description=OAuth 2.1 resource-server authentication of the HTTP transports"`

	// Dir is the folder of the file; relative paths in it are relative to
	// Dir. Load sets it.
	Dir string `json:"-"`
}

// Server holds the server settings; each has a command-line flag too, and
// a flag given on the command line wins.
type Server struct {
	Transport          string   `json:"transport,omitempty" jsonschema:"enum=stdio,enum=sse,enum=http"`
	Addr               string   `json:"addr,omitempty"`
	LogLevel           string   `json:"log_level,omitempty" jsonschema:"enum=trace,enum=debug,enum=info,enum=warn,enum=error"`
	LogFormat          string   `json:"log_format,omitempty" jsonschema:"enum=text,enum=json"`
	LogTruncate        int      `json:"log_truncate,omitempty" jsonschema:"minimum=1"`
	MaxMessageBytes    int64    `json:"max_message_bytes,omitempty" jsonschema:"minimum=1"`
	MaxInFlight        int      `json:"max_in_flight,omitempty" jsonschema:"minimum=1"`
	MaxInFlightTotal   int      `json:"max_in_flight_total,omitempty" jsonschema:"minimum=1"`
	MaxCallsPerSession int      `json:"max_calls_per_session,omitempty" jsonschema:"minimum=1"`
	CallTimeout        Duration `json:"call_timeout,omitempty"`
	ShutdownGrace      Duration `json:"shutdown_grace,omitempty"`
	Strict             bool     `json:"strict,omitempty"`
	AllowedOrigins     []string `json:"allowed_origins,omitempty"`
	State              string   `json:"state,omitempty" jsonschema:"description=Where replicas share state: redis://[user:pass@]host:port/db (rediss:// for TLS; use ${ENV_VAR} for the password: percent-encoded for you); default: in memory"`
	StateKeyFile       string   `json:"state_key_file,omitempty" jsonschema:"description=File holding the state key (first line) and optionally the previous key (second line); relative to the config file"`
	DrainDelay         Duration `json:"drain_delay,omitempty" jsonschema:"description=On SIGTERM, how long to keep serving while /readyz reports not ready"`
}

// Builtin holds one built-in's settings. Which settings apply depends on
// the built-in (root to the file tools, backend to web_search...); Load
// refuses the others.
type Builtin struct {
	Root                string   `json:"root,omitempty" jsonschema:"description=File tools: the folder they work in (relative to the config file)"`
	MaxReadBytes        int64    `json:"max_read_bytes,omitempty" jsonschema:"minimum=1"`
	AllowPrivateNetwork bool     `json:"allow_private_network,omitempty" jsonschema:"description=web_fetch: allow loopback and private addresses"`
	Backend             string   `json:"backend,omitempty" jsonschema:"enum=searxng,enum=brave"`
	URL                 string   `json:"url,omitempty"`
	APIKey              string   `json:"api_key,omitempty" jsonschema:"description=web_search: the API key; use ${ENV_VAR} to keep it out of the file"`
	Approval            *bool    `json:"approval,omitempty" jsonschema:"description=Require (true) or waive (false) approval for this built-in"`
	Timeout             Duration `json:"timeout,omitempty"`
	Scopes              []string `json:"scopes,omitempty" jsonschema:"description=OAuth scopes needed to see and call this built-in"`
}

// Auth makes the HTTP transports an OAuth 2.1 resource server; each
// setting has a command-line flag too, and a flag given wins.
type Auth struct {
	Issuer         string   `json:"issuer,omitempty" jsonschema:"description=The authorization server's issuer identifier (the tokens' iss); --auth-issuer wins"`
	Audience       string   `json:"audience,omitempty" jsonschema:"description=This server's MCP URL as clients reach it; tokens must carry it in aud (default: http://ADDR/mcp)"`
	RequiredScopes []string `json:"required_scopes,omitempty" jsonschema:"description=Scopes every request needs"`
	ToolScopes     []string `json:"tool_scopes,omitempty" jsonschema:"description=Scopes needed to see and call a tool that declares none (e.g. tools:call)"`
	JWKSRefresh    Duration `json:"jwks_refresh,omitempty" jsonschema:"description=How long fetched keys are used before they are fetched again (default 1h)"`
}

// Approval holds the approval settings.
type Approval struct {
	Require   []string `json:"require,omitempty" jsonschema:"description=Tools a person must approve"`
	Fallback  string   `json:"fallback,omitempty" jsonschema:"enum=deny,enum=allow,enum=webhook"`
	Timeout   Duration `json:"timeout,omitempty"`
	OnTimeout string   `json:"on_timeout,omitempty" jsonschema:"enum=reject,enum=approve"`
	Webhook   *Webhook `json:"webhook,omitempty"`
}

// Webhook is the approval webhook.
type Webhook struct {
	URL     string            `json:"url" jsonschema:"minLength=1"`
	Timeout Duration          `json:"timeout,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Tool declares one tool: exactly one of Process, HTTP and Pipeline.
type Tool struct {
	Name           string           `json:"name" jsonschema:"minLength=1"`
	Description    string           `json:"description" jsonschema:"minLength=1"`
	Approval       *bool            `json:"approval,omitempty"`
	MaxConcurrency int              `json:"max_concurrency,omitempty" jsonschema:"minimum=1"`
	Rate           float64          `json:"rate,omitempty" jsonschema:"description=Calls per second,exclusiveMinimum=0"`
	Burst          int              `json:"burst,omitempty" jsonschema:"minimum=1"`
	Timeout        Duration         `json:"timeout,omitempty" jsonschema:"description=Per-call timeout for any kind of tool"`
	Scopes         []string         `json:"scopes,omitempty" jsonschema:"description=OAuth scopes needed to see and call this tool (with auth)"`
	Task           string           `json:"task,omitempty" jsonschema:"enum=optional,enum=required,description=Run calls as MCP tasks that clients poll: optional (when the client asks) or required (always)"`
	Annotations    *Annotations     `json:"annotations,omitempty"`
	InputSchema    *json.RawMessage `json:"input_schema,omitempty" jsonschema:"type=object"`
	OutputSchema   *json.RawMessage `json:"output_schema,omitempty" jsonschema:"type=object"`
	Process        *Process         `json:"process,omitempty"`
	HTTP           *HTTP            `json:"http,omitempty"`
	Pipeline       *Pipeline        `json:"pipeline,omitempty"`
}

// Annotations are the tool's MCP hints.
type Annotations struct {
	Title       string `json:"title,omitempty"`
	ReadOnly    bool   `json:"read_only,omitempty"`
	Destructive bool   `json:"destructive,omitempty"`
	Idempotent  bool   `json:"idempotent,omitempty"`
	OpenWorld   bool   `json:"open_world,omitempty"`
}

// Process is a subprocess tool.
type Process struct {
	Command   []string          `json:"command" jsonschema:"minItems=1"`
	Dir       string            `json:"dir,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Timeout   Duration          `json:"timeout,omitempty"`
	MaxStdout int64             `json:"max_stdout,omitempty" jsonschema:"minimum=1"`
	MaxStderr int64             `json:"max_stderr,omitempty" jsonschema:"minimum=1"`
}

// HTTP is an HTTP endpoint tool.
type HTTP struct {
	URL              string            `json:"url" jsonschema:"minLength=1"`
	Method           string            `json:"method,omitempty" jsonschema:"enum=GET,enum=POST,enum=PUT,enum=PATCH,enum=DELETE"`
	Headers          map[string]string `json:"headers,omitempty"`
	Timeout          Duration          `json:"timeout,omitempty"`
	MaxResponseBytes int64             `json:"max_response_bytes,omitempty" jsonschema:"minimum=1"`
}

// Pipeline is a composite tool: steps run in order, each one's output the
// next one's input.
type Pipeline struct {
	OnError string `json:"on_error,omitempty" jsonschema:"enum=fail_fast,enum=continue"`
	Steps   []Step `json:"steps" jsonschema:"minItems=1"`
}

// Step is one step of a pipeline.
type Step struct {
	Tool    string   `json:"tool" jsonschema:"minLength=1"`
	Adapter *Adapter `json:"adapter,omitempty"`
}

// Adapter turns a step's result into the next step's input: a JSONPath into
// its structured output, or a text/template over {{.Text}} and
// {{.Structured}}. Exactly one.
type Adapter struct {
	JSONPath string `json:"jsonpath,omitempty"`
	Template string `json:"template,omitempty"`
}

// Duration is a time.Duration written as in Go: "30s", "5m", "1h30m".
type Duration string

// Value parses d; the empty duration is 0.
func (d Duration) Value() (time.Duration, error) {
	if d == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write it like 30s, 5m or 1h30m)", string(d))
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q must be positive", string(d))
	}
	return v, nil
}

// D returns d's value, assuming Load checked it.
func (d Duration) D() time.Duration { v, _ := d.Value(); return v }
