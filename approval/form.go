package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// Form is what a person sees: a message in plain words and a flat
// requested schema (elicitation allows only strings, numbers, integers,
// booleans and string enums), one field per top-level argument with the
// model's value as its default, and a "remember for this session" box.
type Form struct {
	Message string
	Schema  json.RawMessage

	// RememberKey is the field of the remember box.
	RememberKey string

	fields    map[string]field
	validator *schema.Validator
	secret    map[string]bool
}

// field is how one argument is shown.
type field struct {
	asJSON bool // a nested value shown as JSON text
}

// shortLen is how much of a value the message shows.
const shortLen = 80

// NewForm builds the form for a call of info's tool with args, a JSON
// object.
func NewForm(info tools.Info, args json.RawMessage) (Form, error) {
	var values map[string]json.RawMessage
	if err := json.Unmarshal(args, &values); err != nil {
		return Form{}, fmt.Errorf("approval: arguments are not an object: %w", err)
	}
	var in struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	_ = json.Unmarshal(info.InputSchema, &in)

	f := Form{fields: map[string]field{}, secret: map[string]bool{}}
	for _, s := range info.Secret {
		f.secret[s] = true
	}
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	for k := range in.Properties {
		if _, ok := values[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)

	props := map[string]any{}
	for _, name := range names {
		p, asJSON := flatProperty(in.Properties[name])
		raw, given := values[name]
		if given && !f.secret[name] {
			var v any
			_ = json.Unmarshal(raw, &v)
			if asJSON || !fits(p, v) {
				p, asJSON = map[string]any{"type": "string", "description": jsonDescription(in.Properties[name])}, true
				p["default"] = string(raw)
			} else {
				p["default"] = v
			}
		}
		if f.secret[name] {
			p = map[string]any{"type": "string", "description": "Secret value, not shown; leave empty to keep the model's value"}
			asJSON = false
		}
		if t, _ := in.Properties[name]["title"].(string); t != "" {
			p["title"] = t
		}
		f.fields[name] = field{asJSON: asJSON}
		props[name] = p
	}
	// The box must not take the name of an argument.
	f.RememberKey = "remember"
	for i := 0; props[f.RememberKey] != nil; i++ {
		f.RememberKey = "remember_for_session" + strings.Repeat("_", i)
	}
	props[f.RememberKey] = map[string]any{"type": "boolean", "title": "Remember for this session",
		"description": "Do not ask again about this tool for the rest of this session", "default": false}
	sch, err := json.Marshal(map[string]any{"type": "object", "properties": props})
	if err != nil {
		return Form{}, err
	}
	f.Schema = sch
	f.validator, err = schema.Compile(sch)
	if err != nil {
		return Form{}, fmt.Errorf("approval: form schema: %w", err)
	}
	f.Message = fmt.Sprintf("Allow %q to run with %s?", info.Name, Summary(info, args, shortLen))
	return f, nil
}

// flatProperty keeps the parts of a property schema elicitation allows, or
// reports that the value must be shown as JSON text.
func flatProperty(p map[string]any) (map[string]any, bool) {
	out := map[string]any{}
	t, _ := p["type"].(string)
	switch t {
	case "string", "number", "integer", "boolean":
		out["type"] = t
	default:
		return map[string]any{"type": "string", "description": jsonDescription(p)}, true
	}
	if d, ok := p["description"].(string); ok {
		out["description"] = d
	}
	if e, ok := p["enum"].([]any); ok && t == "string" {
		out["enum"] = e
	}
	for _, k := range []string{"minimum", "maximum", "minLength", "maxLength", "format"} {
		if v, ok := p[k]; ok {
			out[k] = v
		}
	}
	return out, false
}

func jsonDescription(p map[string]any) string {
	d, _ := p["description"].(string)
	if d == "" {
		return "JSON value"
	}
	return d + " (JSON value)"
}

// fits reports whether v can be the default of the flat property p.
func fits(p map[string]any, v any) bool {
	switch p["type"] {
	case "string":
		_, ok := v.(string)
		return ok
	case "number", "integer":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return false
}

// Summary renders args for people: k = v, values shortened to n
// characters (saying how much was cut), secrets hidden.
func Summary(info tools.Info, args json.RawMessage, n int) string {
	var values map[string]json.RawMessage
	if err := json.Unmarshal(args, &values); err != nil || len(values) == 0 {
		return "no arguments"
	}
	secret := map[string]bool{}
	for _, s := range info.Secret {
		secret[s] = true
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := string(values[k])
		if secret[k] {
			v = "[hidden]"
		} else {
			var c bytes.Buffer
			if json.Compact(&c, values[k]) == nil {
				v = c.String()
			}
			v = shorten(v, n)
		}
		parts = append(parts, k+" = "+v)
	}
	return strings.Join(parts, ", ")
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return fmt.Sprintf("%s… (%d more characters)", string(r[:n]), len(r)-n)
}

// Answer is a person's reply: action "accept", "decline" or "cancel", and
// the form's content on accept.
type Answer struct {
	Action  string
	Content map[string]any
}

// Decide turns an answer into an outcome for the call (args are the
// model's arguments). An answer that does not fit the form is a rejection.
// Edited arguments are validated against the tool's schema (v); invalid
// ones are an invalid-arguments error and never run.
func (f Form) Decide(args json.RawMessage, a Answer, v *schema.Validator) (Outcome, error) {
	switch a.Action {
	case "decline":
		return Outcome{Decision: Reject, By: "elicitation", Reason: "Rejected by reviewer: " + f.summaryOf(args)}, nil
	case "cancel":
		return Outcome{Decision: Reject, By: "elicitation", Reason: "Rejected by reviewer: cancelled by the user"}, nil
	case "accept":
	default:
		return Outcome{Decision: Reject, By: "elicitation", Reason: fmt.Sprintf("Rejected: the reviewer's answer %q is not accept, decline or cancel", a.Action)}, nil
	}
	content := a.Content
	if content == nil {
		content = map[string]any{}
	}
	raw, _ := json.Marshal(content)
	if err := f.validator.Validate(raw); err != nil {
		return Outcome{Decision: Reject, By: "elicitation", Reason: "Rejected: the reviewer's answer did not fit the form: " + strings.TrimPrefix(err.Error(), "invalid arguments: ")}, nil
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(args, &values); err != nil {
		return Outcome{}, fmt.Errorf("approval: arguments are not an object: %w", err)
	}
	merged := map[string]json.RawMessage{}
	for k, v := range values {
		merged[k] = v
	}
	remember := false
	changed := false
	for k, val := range content {
		if k == f.RememberKey {
			remember, _ = val.(bool)
			continue
		}
		fd, ok := f.fields[k]
		if !ok {
			continue
		}
		if f.secret[k] {
			if s, _ := val.(string); s == "" {
				continue // left empty: keep the model's value
			}
		}
		var nv json.RawMessage
		if s, isString := val.(string); fd.asJSON && isString {
			if !json.Valid([]byte(s)) {
				return Outcome{Decision: Reject, By: "elicitation", Reason: fmt.Sprintf("Rejected: the reviewer's answer did not fit the form: field %q is not valid JSON", k)}, nil
			}
			nv = json.RawMessage(s)
		} else {
			nv, _ = json.Marshal(val)
		}
		if old, ok := merged[k]; !ok || !sameJSON(old, nv) {
			changed = true
		}
		merged[k] = nv
	}
	if !changed {
		return Outcome{Decision: Approve, Args: args, Remember: remember, By: "elicitation"}, nil
	}
	edited, err := json.Marshal(merged)
	if err != nil {
		return Outcome{}, err
	}
	if v != nil {
		if err := v.Validate(edited); err != nil {
			msg := strings.TrimPrefix(tools.AsError(err).Message, "invalid arguments: ")
			return Outcome{}, &tools.Error{Kind: tools.KindInvalidArguments, Message: "the reviewer's edit is invalid: " + msg, Err: err}
		}
	}
	return Outcome{Decision: Edit, Args: edited, Remember: remember, By: "elicitation"}, nil
}

func (f Form) summaryOf(args json.RawMessage) string {
	var secret []string
	for k := range f.secret {
		secret = append(secret, k)
	}
	return Summary(tools.Info{Secret: secret}, args, 60)
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return bytes.Equal(ca, cb)
}
