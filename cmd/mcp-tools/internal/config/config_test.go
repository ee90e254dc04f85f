package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) LookupEnv {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestLoadExample(t *testing.T) {
	f, err := Load(filepath.Join("..", "..", "..", "..", "testdata", "tools.yaml"))
	if err != nil {
		t.Fatalf("the shipped example does not load: %v", err)
	}
	if f.Server.CallTimeout.D() != time.Minute {
		t.Errorf("call_timeout = %v", f.Server.CallTimeout.D())
	}
	if got := len(f.Tools); got != 3 {
		t.Errorf("tools = %d, want 3", got)
	}
	if root := f.Builtins["file_read"].Root; !filepath.IsAbs(root) || !strings.HasSuffix(root, filepath.Join("testdata", "data")) {
		t.Errorf("file root = %q, want it resolved against the file's folder", root)
	}
	if f.Tools[0].Process.Env["MOOD_WORDS"] != "good,great,happy" {
		t.Errorf("env = %v", f.Tools[0].Process.Env)
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	src := `server:
  transport: carrier-pigeon
  call_timeout: 3 parsecs
  colour: blue
builtins:
  calculator: {}
  teleporter: {}
  web_fetch: {root: /tmp}
tools:
  - name: bad.name
    description: A tool with a bad name.
    process: {command: [echo]}
  - name: twice
    description: Neither process nor http.
  - name: calculator
    description: Clashes with the built-in.
    http: {url: "ftp://x", headers: {Authorization: "Bearer ${NOPE_TOKEN}"}}
  - name: pipe
    description: Names a missing step.
    pipeline:
      steps:
        - tool: ghost
          adapter: {jsonpath: "$[", template: "x"}
approval:
  require: [nobody]
  fallback: webhook
`
	_, err := Parse("bad.yaml", []byte(src), t.TempDir(), env(nil))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Parse = %v, want a *config.Error", err)
	}
	// The schema problems come first; fix them and the rest show up.
	for _, want := range []string{"server.transport", "server.colour"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
	for _, p := range ce.Problems {
		if p.Line == 0 {
			t.Errorf("problem %+v has no line", p)
		}
	}

	fixed := strings.Replace(strings.Replace(src, "carrier-pigeon", "http", 1), "  colour: blue\n", "", 1)
	_, err = Parse("bad.yaml", []byte(fixed), t.TempDir(), env(nil))
	if !errors.As(err, &ce) {
		t.Fatalf("Parse = %v, want a *config.Error", err)
	}
	wants := []string{
		`server.call_timeout: "3 parsecs" is not a duration`,
		`builtins.teleporter: unknown built-in "teleporter"`,
		`builtins.web_fetch.root: "root" does not apply to web_fetch`,
		`tools[0].name: tool "bad.name": name may hold only`,
		`tools[1]: a tool needs exactly one of process, http or pipeline (this one has 0)`,
		`tools[2].name: tool "calculator" is already declared at builtins.calculator`,
		`tools[2].http.url: "ftp://x" is not an http or https URL`,
		`environment variable NOPE_TOKEN is not set`,
		`tools[3].pipeline.steps[0].tool: unknown tool "ghost"`,
		`tools[3].pipeline.steps[0].adapter: an adapter is exactly one of jsonpath or template`,
		`approval.require[0]: unknown tool "nobody"`,
		`approval: fallback webhook needs a webhook`,
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if len(ce.Problems) < len(wants) {
		t.Errorf("%d problems, want at least %d", len(ce.Problems), len(wants))
	}
	if !strings.Contains(err.Error(), "bad.yaml:3: server.call_timeout") {
		t.Errorf("no line numbers in:\n%v", err)
	}
}

func TestParseExpandsEnv(t *testing.T) {
	src := `tools:
  - name: kb
    description: KB.
    http: {url: "https://kb.example.com/s", method: GET, headers: {Authorization: "Bearer ${KB_TOKEN}"}}
`
	f, err := Parse("t.yaml", []byte(src), t.TempDir(), env(map[string]string{"KB_TOKEN": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Tools[0].HTTP.Headers["Authorization"]; got != "Bearer s3cret" {
		t.Errorf("header = %q", got)
	}
}

func TestParseJSONAndEmpty(t *testing.T) {
	if _, err := Parse("t.json", []byte(`{"server": {"transport": "http"}}`), t.TempDir(), env(nil)); err != nil {
		t.Errorf("JSON file: %v", err)
	}
	if _, err := Parse("empty.yaml", []byte(""), t.TempDir(), env(nil)); err != nil {
		t.Errorf("empty file: %v", err)
	}
	if _, err := Parse("broken.yaml", []byte("server: [unclosed"), t.TempDir(), env(nil)); err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Errorf("broken YAML = %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v", err)
	}
}

// TestOneTimeout: a tool's timeout is one setting; giving it twice,
// differently, is refused.
func TestOneTimeout(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.yaml")
	os.WriteFile(p, []byte("tools:\n  - name: x\n    description: d\n    timeout: 5s\n    process: {command: [\"true\"], timeout: 10s}\n"), 0o644)
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("Load = %v, want the timeout refused as given twice", err)
	}
	os.WriteFile(p, []byte("tools:\n  - name: x\n    description: d\n    timeout: 5s\n    process: {command: [\"true\"], timeout: 5s}\n"), 0o644)
	if _, err := Load(p); err != nil {
		t.Errorf("the same timeout twice: %v", err)
	}
}

func TestParseStateSettings(t *testing.T) {
	dir := t.TempDir()
	src := `server:
  state: redis://:${REDIS_PASS}@10.0.0.5:6379/2
  state_key_file: keys/state.key
  drain_delay: 5s
`
	f, err := Parse("t.yaml", []byte(src), dir, env(map[string]string{"REDIS_PASS": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	// Left as written: serve expands it (percent-encoding a password).
	if got, want := f.Server.State, "redis://:${REDIS_PASS}@10.0.0.5:6379/2"; got != want {
		t.Errorf("state = %q, want %q", got, want)
	}
	if _, err := Parse("t.yaml", []byte(src), dir, env(nil)); err == nil || !strings.Contains(err.Error(), "server.state") || !strings.Contains(err.Error(), "REDIS_PASS is not set") {
		t.Errorf("an unset variable in server.state: got %v, want it named", err)
	}
	if got, want := f.Server.StateKeyFile, filepath.Join(dir, "keys/state.key"); got != want {
		t.Errorf("state_key_file = %q, want %q (relative to the file)", got, want)
	}
	if got := f.Server.DrainDelay.D(); got != 5*time.Second {
		t.Errorf("drain_delay = %v, want 5s", got)
	}
	_, err = Parse("t.yaml", []byte(src), dir, env(nil))
	if err == nil || !strings.Contains(err.Error(), "REDIS_PASS is not set") {
		t.Errorf("unset password variable: %v, want it named", err)
	}
}

// TestParseNumbersOutOfReach: a number the file's field cannot hold (±.inf
// and .nan, which JSON has no form for, or a whole number past the field's
// range) is a problem at its key and line, like any other wrong value.
func TestParseNumbersOutOfReach(t *testing.T) {
	src := `server:
  max_in_flight: 99999999999999999999999
  max_calls_per_session: 18446744073709551615
  call_timeout: 3 parsecs
  colour: .nan
  allowed_origins: [.inf]
tools:
  - name: x
    description: d
    rate: .inf
    process: {command: [sh], max_stdout: -.inf}
`
	_, err := Parse("x.yaml", []byte(src), t.TempDir(), env(nil))
	if err == nil {
		t.Fatal("Parse = nil, want the numbers refused")
	}
	for _, want := range []string{
		`x.yaml:2: server.max_in_flight: want a whole number like 10, got the text "99999999999999999999999"`,
		`x.yaml:3: server.max_calls_per_session: want a whole number like 10, got 18446744073709551615 (too large)`,
		`x.yaml:4: server.call_timeout: "3 parsecs" is not a duration`,
		`x.yaml:5: server.colour: unknown field "server.colour"`,
		`x.yaml:6: server.allowed_origins[0]: want text like "abc", got .inf`,
		`x.yaml:10: tools[0].rate: want a number like 2.5, got .inf`,
		`x.yaml:11: tools[0].process.max_stdout: want a whole number like 10, got -.inf`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if n := strings.Count(err.Error(), "allowed_origins[0]"); n != 1 {
		t.Errorf("allowed_origins reported %d times, want once:\n%v", n, err)
	}
}

// TestJSONNumbersWithExponent checks that a JSON file's numbers are numbers
// however they are written, in the config's own fields and in an input
// schema, while YAML keeps 1e-3 as text, as the loader always has.
func TestJSONNumbersWithExponent(t *testing.T) {
	src := `{"tools": [{"name": "x", "description": "d", "rate": 2.5e-1, "process": {"command": ["true"]},
  "input_schema": {"type": "object", "properties": {"n": {"type": "number", "maximum": 1E6, "minimum": -1e+3}}}}]}`
	f, err := Parse("t.json", []byte(src), t.TempDir(), env(nil))
	if err != nil {
		t.Fatalf("JSON with exponents: %v", err)
	}
	if got := f.Tools[0].Rate; got != 0.25 {
		t.Errorf("rate = %v, want 0.25", got)
	}
	if got, want := string(*f.Tools[0].InputSchema), `"maximum":1000000`; !strings.Contains(got, want) {
		t.Errorf("input_schema = %s, want it to hold %s", got, want)
	}
	if !strings.Contains(string(*f.Tools[0].InputSchema), `"minimum":-1000`) {
		t.Errorf("input_schema = %s, want minimum -1000", *f.Tools[0].InputSchema)
	}
	yml := "tools:\n  - name: x\n    description: d\n    rate: 1e-3\n    process: {command: [\"true\"]}\n"
	if _, err := Parse("t.yaml", []byte(yml), t.TempDir(), env(nil)); err == nil || !strings.Contains(err.Error(), "rate") {
		t.Errorf("YAML rate: 1e-3 = %v, want it refused as text at rate", err)
	}
}
