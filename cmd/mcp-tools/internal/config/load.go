package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/theory/jsonpath"

	"github.com/mcp-tools/mcp-tools/internal/lazyre"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

// Problem is one thing wrong with a file.
type Problem struct {
	Path    string // key path, like tools[0].process.timeout; "" for the whole file
	Line    int    // 1-based; 0 when unknown
	Message string
}

// Error lists every problem found in a file.
type Error struct {
	File     string
	Problems []Problem
}

// Error lists every problem, one per line, as file:line: path: message.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problem", e.File, len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(e.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
		if p.Path != "" {
			b.WriteString(p.Path)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// Builtin names and the settings each accepts.
var builtinSettings = map[string][]string{
	"calculator": {"approval", "timeout", "scopes"},
	"datetime":   {"approval", "timeout", "scopes"},
	"json_query": {"approval", "timeout", "scopes"},
	"echo":       {"approval", "timeout", "scopes"},
	"file_read":  {"root", "max_read_bytes", "approval", "timeout", "scopes"},
	"file_write": {"root", "approval", "timeout", "scopes"},
	"file_list":  {"root", "approval", "timeout", "scopes"},
	"web_fetch":  {"allow_private_network", "approval", "timeout", "scopes"},
	"web_search": {"backend", "url", "api_key", "approval", "timeout", "scopes"},
}

// LookupEnv reads environment variables for ${VAR} references; tests may
// replace it.
type LookupEnv func(string) (string, bool)

var fileSchema = sync.OnceValues(func() (*schema.Validator, error) {
	raw, err := typed.Schema(reflect.TypeFor[File](), true)
	if err != nil {
		return nil, err
	}
	return schema.Compile(raw)
})

// Load reads and checks the file at path. ${VAR} references in process
// commands and env values, HTTP and webhook header values, and api_key are
// expanded from the environment; an unset variable is a problem.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	return Parse(path, data, dir, os.LookupEnv)
}

// Parse checks data, the text of the file called name (for messages),
// whose relative paths are relative to dir.
func Parse(name string, data []byte, dir string, env LookupEnv) (*File, error) {
	fail := func(ps []Problem) error { return &Error{File: name, Problems: ps} }
	doc, root, err := parseYAML(data)
	if err != nil {
		var ye *yamlError
		if !errors.As(err, &ye) {
			return nil, err
		}
		return nil, fail([]Problem{{Line: ye.Line, Message: "not valid YAML: " + firstLine(ye.Message)}})
	}
	if doc == nil {
		doc = map[string]any{}
	}
	// Every problem in one pass: a value the schema refuses is reported
	// and dropped, and the rest of the file is still decoded and checked;
	// so is a number out of the reach of JSON or of its field, first.
	var problems []Problem
	reported := map[string]bool{}
	for _, p := range outOfReach(doc, "") {
		problems = append(problems, p)
		reported[p.Path] = true
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fail([]Problem{{Message: "cannot read the file as data: " + err.Error()}})
	}
	v, err := fileSchema()
	if err != nil {
		return nil, fmt.Errorf("config: schema: %w", err)
	}
	for _, p := range v.Problems(js) {
		if reported[p.Field] {
			continue
		}
		msg := strings.TrimPrefix(p.Message, "field \""+p.Field+"\": ")
		old, dropped := drop(doc, p.Field)
		if want := expected(goType(p.Field)); p.Keyword == "type" && want != "" && dropped {
			msg = fmt.Sprintf("want %s, got %s", want, describe(old))
		}
		problems = append(problems, Problem{Path: p.Field, Message: msg})
		reported[p.Field] = true
	}
	var f File
	if len(problems) > 0 {
		if js, err = json.Marshal(doc); err != nil {
			return nil, fail(problems)
		}
	}
	if err := json.Unmarshal(js, &f); err != nil {
		if len(problems) == 0 {
			problems = append(problems, Problem{Message: err.Error()})
		}
	} else {
		f.Dir = dir
		c := checker{f: &f, env: env}
		c.check()
		for _, p := range c.problems {
			if !reported[p.Path] {
				problems = append(problems, p)
			}
		}
	}
	if len(problems) > 0 {
		for i := range problems {
			problems[i].Line = lineOf(root, problems[i].Path)
		}
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].Line < problems[j].Line })
		return nil, fail(problems)
	}
	return &f, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// checker holds the checks the schema cannot express.
type checker struct {
	f        *File
	env      LookupEnv
	problems []Problem
}

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) duration(path string, d Duration) {
	if _, err := d.Value(); err != nil {
		c.add(path, "%v", err)
	}
}

var envRef = lazyre.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} references in *s.
func (c *checker) expand(path string, s *string) {
	*s = envRef().ReplaceAllStringFunc(*s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := c.env(name)
		if !ok {
			c.add(path, "environment variable %s is not set", name)
		}
		return v
	})
}

// checkSet reports every ${VAR} of s that is not set, leaving s as it is.
func (c *checker) checkSet(path, s string) {
	for _, ref := range envRef().FindAllString(s, -1) {
		if _, ok := c.env(ref[2 : len(ref)-1]); !ok {
			c.add(path, "environment variable %s is not set", ref[2:len(ref)-1])
		}
	}
}

// oneTimeout refuses a tool that gives its timeout twice, differently: the
// tool's timeout and its process or http timeout are one setting (the
// tool's Limits), and the file must not say two things about it.
func (c *checker) oneTimeout(path, kind string, tool, inner Duration) {
	if tool != "" && inner != "" && tool.D() != inner.D() {
		c.add(path+"."+kind+".timeout", "the timeout is given twice (%s here, %s at %s.timeout): keep one", inner, tool, path)
	}
}

func (c *checker) check() {
	f := c.f
	s := f.Server
	c.duration("server.call_timeout", s.CallTimeout)
	c.duration("server.shutdown_grace", s.ShutdownGrace)
	c.duration("server.drain_delay", s.DrainDelay)
	// Left as written: serve expands it, percent-encoding what goes in the
	// URL's user name or password; an unset variable is reported now.
	c.checkSet("server.state", s.State)
	if k := s.StateKeyFile; k != "" && !filepath.IsAbs(k) {
		f.Server.StateKeyFile = filepath.Join(f.Dir, k)
	}

	names := map[string]string{} // tool name -> where it is declared
	var root, rootPath string
	for _, name := range sortedKeys(f.Builtins) {
		b := f.Builtins[name]
		path := "builtins." + name
		allowed, ok := builtinSettings[name]
		if !ok {
			c.add(path, "unknown built-in %q: choose from %s", name, strings.Join(sortedKeys(builtinSettings), ", "))
			continue
		}
		names[name] = path
		for _, key := range setKeys(b) {
			if !contains(allowed, key) {
				c.add(path+"."+key, "%q does not apply to %s (it takes %s)", key, name, strings.Join(allowed, ", "))
			}
		}
		c.duration(path+".timeout", b.Timeout)
		if strings.HasPrefix(name, "file_") {
			if b.Root == "" {
				c.add(path, "the file tools need a root folder: add root: ./some/folder")
			} else {
				r := b.Root
				if !filepath.IsAbs(r) {
					r = filepath.Join(f.Dir, r)
				}
				if root != "" && r != root {
					c.add(path+".root", "all file tools share one root, but %s says %q and %s says %q", rootPath, root, path, r)
				}
				if st, err := os.Stat(r); err != nil || !st.IsDir() {
					c.add(path+".root", "%q is not a folder", r)
				}
				root, rootPath = r, path
				b.Root = r
			}
		}
		if name == "web_search" {
			if b.Backend == "" {
				c.add(path, "web_search needs a backend: searxng (with url) or brave (with api_key)")
			}
			if b.Backend == "searxng" && b.URL == "" {
				c.add(path, "the searxng backend needs the url of the instance")
			}
			if b.Backend == "brave" && b.APIKey == "" {
				c.add(path, "the brave backend needs an api_key (write api_key: ${BRAVE_API_KEY})")
			}
			c.expand(path+".api_key", &b.APIKey)
		}
		f.Builtins[name] = b
	}

	for i := range f.Tools {
		t := &f.Tools[i]
		path := fmt.Sprintf("tools[%d]", i)
		if err := tools.ValidateName(t.Name); err != nil {
			c.add(path+".name", "%v", err)
		} else if prev, dup := names[t.Name]; dup {
			c.add(path+".name", "tool %q is already declared at %s", t.Name, prev)
		} else {
			names[t.Name] = path
		}
		c.duration(path+".timeout", t.Timeout)
		kinds := 0
		if t.Process != nil {
			kinds++
			c.duration(path+".process.timeout", t.Process.Timeout)
			c.oneTimeout(path, "process", t.Timeout, t.Process.Timeout)
			// The ${VAR} references stay in the command: remote expands
			// them when it starts the process, so logs show the argv as
			// written, never a secret it expands to.
			for j := range t.Process.Command {
				c.checkSet(fmt.Sprintf("%s.process.command[%d]", path, j), t.Process.Command[j])
			}
			for k, v := range t.Process.Env {
				c.expand(path+".process.env."+k, &v)
				t.Process.Env[k] = v
			}
			if t.Process.Dir != "" && !filepath.IsAbs(t.Process.Dir) {
				t.Process.Dir = filepath.Join(f.Dir, t.Process.Dir)
			}
			if d := t.Process.Dir; d != "" {
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					c.add(path+".process.dir", "%q is not a folder", d)
				}
			}
			if len(t.Process.Command) == 0 {
				c.add(path+".process.command", "the command is empty: name a program, like [sh, script.sh]")
			} else if _, err := ResolveCommand(*t.Process, f.Dir); err != nil {
				c.add(path+".process.command[0]", "%v", err)
			}
		}
		if t.HTTP != nil {
			kinds++
			c.duration(path+".http.timeout", t.HTTP.Timeout)
			c.oneTimeout(path, "http", t.Timeout, t.HTTP.Timeout)
			for k, v := range t.HTTP.Headers {
				c.expand(path+".http.headers."+k, &v)
				t.HTTP.Headers[k] = v
			}
			if !strings.HasPrefix(t.HTTP.URL, "http://") && !strings.HasPrefix(t.HTTP.URL, "https://") {
				c.add(path+".http.url", "%q is not an http or https URL", t.HTTP.URL)
			}
		}
		if t.Pipeline != nil {
			kinds++
		}
		if kinds != 1 {
			c.add(path, "a tool needs exactly one of process, http or pipeline (this one has %d)", kinds)
		}
		for _, sc := range []struct {
			key string
			raw *json.RawMessage
		}{{"input_schema", t.InputSchema}, {"output_schema", t.OutputSchema}} {
			if sc.raw == nil {
				continue
			}
			if _, err := schema.Compile(*sc.raw); err != nil {
				c.add(path+"."+sc.key, "%v", err)
			}
		}
	}
	// Pipelines may name any tool declared in the file, in any order.
	for i, t := range f.Tools {
		if t.Pipeline == nil {
			continue
		}
		for j, st := range t.Pipeline.Steps {
			path := fmt.Sprintf("tools[%d].pipeline.steps[%d]", i, j)
			if st.Tool == t.Name {
				c.add(path+".tool", "a pipeline cannot call itself")
			} else if _, ok := names[st.Tool]; !ok && !c.servedByDefault(st.Tool) {
				c.add(path+".tool", "unknown tool %q: a step must name a built-in the server serves or a tool declared in this file", st.Tool)
			}
			if a := st.Adapter; a != nil {
				switch {
				case (a.JSONPath == "") == (a.Template == ""):
					c.add(path+".adapter", "an adapter is exactly one of jsonpath or template")
				case a.JSONPath != "":
					if _, err := jsonpath.Parse(a.JSONPath); err != nil {
						c.add(path+".adapter.jsonpath", "%v", err)
					}
				default:
					if _, err := pipeline.Template(a.Template); err != nil {
						// The parse error itself, without the adapter's "template: ".
						if e := errors.Unwrap(err); e != nil {
							err = e
						}
						c.add(path+".adapter.template", "%v", err)
					}
				}
			}
		}
	}

	a := &f.Approval
	c.duration("approval.timeout", a.Timeout)
	for i, n := range a.Require {
		if _, ok := names[n]; !ok && !c.servedByDefault(n) {
			c.add(fmt.Sprintf("approval.require[%d]", i), "unknown tool %q", n)
		}
	}
	if a.Fallback == "webhook" && a.Webhook == nil {
		c.add("approval", "fallback webhook needs a webhook: {url: ...}")
	}
	if a.Webhook != nil {
		c.duration("approval.webhook.timeout", a.Webhook.Timeout)
		for k, v := range a.Webhook.Headers {
			c.expand("approval.webhook.headers."+k, &v)
			a.Webhook.Headers[k] = v
		}
	}
}

// servedByDefault reports whether name is a built-in the server may serve
// although the file does not list it: with no builtins section, the
// defaults (and --builtins) decide, which only the server can tell.
func (c *checker) servedByDefault(name string) bool {
	_, ok := builtinSettings[name]
	return ok && c.f.Builtins == nil
}

// ResolveCommand returns the program a process tool runs, as the server
// would start it: a name without a slash is looked up in PATH; a relative
// path is relative to the tool's dir (fileDir when it has none). ${VAR}
// references are left for the server: such a command resolves to itself.
func ResolveCommand(p Process, fileDir string) (string, error) {
	if len(p.Command) == 0 {
		return "", errors.New("the command is empty")
	}
	prog := p.Command[0]
	if envRef().MatchString(prog) {
		return prog, nil
	}
	dir := p.Dir
	if dir == "" {
		dir = fileDir
	}
	if !strings.ContainsRune(prog, '/') && !strings.ContainsRune(prog, filepath.Separator) {
		found, err := exec.LookPath(prog)
		if err != nil {
			return "", fmt.Errorf("%q is not found in PATH (%s)", prog, os.Getenv("PATH"))
		}
		return found, nil
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	st, err := os.Stat(prog)
	switch {
	case err != nil:
		return "", fmt.Errorf("%q does not exist", prog)
	case st.IsDir():
		return "", fmt.Errorf("%q is a folder, not a program", prog)
	case st.Mode()&0o111 == 0:
		return "", fmt.Errorf("%q is not executable (chmod +x it, or run it through its interpreter, like [sh, %s])", prog, p.Command[0])
	}
	return prog, nil
}

// setKeys lists the settings b gives, by their file names.
func setKeys(b Builtin) []string {
	raw, _ := json.Marshal(b)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return sortedKeys(m)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
