package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// MaxNameLen is the longest tool name a registry accepts: 64, what the
// major model APIs accept.
const MaxNameLen = 64

// NameRule says in words what ValidateName accepts; errors and docs quote it.
const NameRule = "a tool name is 1 to 64 characters of letters, digits, '_' and '-' ([A-Za-z0-9_-])"

// ValidateName reports whether name is a valid tool name: 1 to 64 characters
// of [A-Za-z0-9_-], the names the major model APIs accept (hyphens are common
// in the wild). The error states the rule (NameRule).
func ValidateName(name string) error {
	switch {
	case name == "":
		return errors.New("tool name is empty: " + NameRule)
	case len(name) > MaxNameLen:
		return fmt.Errorf("tool %q: name is %d characters long, more than the %d allowed: %s", name, len(name), MaxNameLen, NameRule)
	case !validNameChars(name):
		return fmt.Errorf("tool %q: name may hold only letters, digits, '_' and '-': %s", name, NameRule)
	}
	return nil
}

// validNameChars reports whether name holds only [A-Za-z0-9_-]. A loop
// rather than a regular expression: one compiled in the initialiser cost
// every process its heap and time before main.
func validNameChars(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Registry is a fixed set of tools with valid, unique names. It is safe for
// concurrent use: nothing changes it after NewRegistry.
type Registry struct {
	tools  []Tool
	infos  []Info
	byName map[string]int
}

// NewRegistry checks every tool's name (ValidateName), its uniqueness across
// all of them, and that its schemas are JSON objects, and returns the
// registry. It reports every problem at once, each naming the tool and the
// rule it breaks.
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]int, len(ts))}
	var errs []error
	for _, t := range ts {
		if t == nil {
			errs = append(errs, errors.New("nil tool"))
			continue
		}
		info := t.Info()
		if err := ValidateName(info.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := r.byName[info.Name]; dup {
			errs = append(errs, fmt.Errorf("tool %q: registered more than once; names must be unique across every source (typed, plain, remote, built-in)", info.Name))
			continue
		}
		if err := checkObjectSchema(info.InputSchema); err != nil {
			errs = append(errs, fmt.Errorf("tool %q: input schema: %w", info.Name, err))
			continue
		}
		switch info.Task {
		case TaskNever, TaskOptional, TaskRequired:
		default:
			errs = append(errs, fmt.Errorf("tool %q: task mode %q: use %q or %q (or leave it empty)", info.Name, info.Task, TaskOptional, TaskRequired))
			continue
		}
		if len(info.OutputSchema) > 0 {
			if err := checkObjectSchema(info.OutputSchema); err != nil {
				errs = append(errs, fmt.Errorf("tool %q: output schema: %w", info.Name, err))
				continue
			}
		}
		r.byName[info.Name] = len(r.tools)
		r.tools = append(r.tools, t)
		r.infos = append(r.infos, info)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

func checkObjectSchema(raw json.RawMessage) error {
	var s struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if s.Type != "object" {
		return fmt.Errorf(`"type" must be "object", got %v`, s.Type)
	}
	return nil
}

// Tools returns the tools in registration order.
func (r *Registry) Tools() []Tool { return append([]Tool(nil), r.tools...) }

// Infos returns the tools' descriptors in registration order.
func (r *Registry) Infos() []Info { return append([]Info(nil), r.infos...) }

// Names returns the tools' names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.infos))
	for _, i := range r.infos {
		names = append(names, i.Name)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the tool called name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	i, ok := r.byName[name]
	if !ok {
		return nil, false
	}
	return r.tools[i], true
}

// Len returns the number of tools.
func (r *Registry) Len() int { return len(r.tools) }
