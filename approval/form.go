package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// Form is what a person sees: a message in plain words and a flat
// requested schema (elicitation allows only strings, numbers, integers,
// booleans and string enums), one field per top-level argument with the
// model's value as its default, and a "remember for this session" box.
//
// A Form is made by NewForm and read by Decide; it is not changed after
// it is made, so it may be used by several goroutines at once.
type Form struct {
	// Message asks the question: which tool wants to run, and with what.
	Message string
	// Schema is the requested schema: a JSON Schema object whose
	// properties are all flat, with no required list.
	Schema json.RawMessage
	// RememberKey is the name of the "remember for this session" box in
	// Schema: "remember", or "remember_for_session" (then
	// "_remember_for_session"...) when the tool has an argument called so.
	RememberKey string

	fields    map[string]field // by argument name
	validator *schema.Validator
}

// field is how one argument is shown on the form.
type field struct {
	asJSON bool // shown as JSON text, read back as JSON
	secret bool // shown without its value; left empty, the model's value stays
	// def is the tool's default, shown for an argument the model left out;
	// left as shown, the argument stays out and the tool applies it.
	def json.RawMessage
}

// The lengths of what the form and the reasons show. They only bound text
// written for people; arguments themselves are never cut.
const (
	// MessageValueLen is how many characters of each value the form's
	// message shows; the rest is cut and counted ("(142 more characters)").
	MessageValueLen = 80
	// SummaryValueLen is how many characters of each value a Summary shows.
	SummaryValueLen = 60
	// SummaryLen is the most characters a Summary has, when the caller
	// gives no limit.
	SummaryLen = 200
)

// hidden stands for a secret argument's value wherever people could see it.
const hidden = tools.Hidden

// formatsAllowed are the string formats an elicitation schema may carry.
var formatsAllowed = map[string]bool{"email": true, "uri": true, "date": true, "date-time": true}

// NewForm builds the form for a call of the tool described by info with
// args, a JSON object. Each top-level argument becomes a property whose
// default is the model's value; its type, enum and description come from
// info.InputSchema when they are flat, and otherwise the value is shown as
// JSON text. So is a number that a client holding numbers as float64 could
// not show or edit exactly: one of 2^53 or more in magnitude, or one with
// more digits than a float64 holds. Secret arguments (info.Secret) get a
// property without a default. Properties of the input schema that the model left out are on
// the form too, so the reviewer can add them: with the schema's default as
// their default, when the schema declares one (the tool runs with it, so
// the message names it too), and otherwise without one.
//
// NewForm fails only when args is not a JSON object.
func NewForm(info tools.Info, args json.RawMessage) (Form, error) {
	given, err := objectFields(args)
	if err != nil {
		return Form{}, fmt.Errorf("approval: form for %q: %w", info.Name, err)
	}
	var in struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	_ = json.Unmarshal(info.InputSchema, &in) // a schema that is not an object gives no hints
	var declared struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(info.InputSchema, &declared) // the defaults as written
	secret := secretSet(info.Secret)
	var defaults []kv // the tool's defaults of the arguments the model left out

	f := Form{fields: map[string]field{}}
	props := map[string]any{}
	add := func(name string, raw json.RawMessage, present bool) {
		decl := in.Properties[name]
		var p map[string]any
		var fd field
		switch {
		case secret(name):
			fd.secret = true
			p = map[string]any{"type": "string", "description": withNote(decl, "secret: not shown; leave empty to keep the model's value")}
		default:
			note := ""
			if d := declared.Properties[name].Default; !present && len(d) > 0 && json.Valid(d) {
				// The tool runs with its default: the form shows it.
				raw, present, fd.def = d, true, d
				defaults = append(defaults, kv{name, d})
				note = "the model left it out: the tool's default"
			}
			var v any
			if present {
				_ = json.Unmarshal(raw, &v) // raw came from a valid object
			}
			var ok bool
			p, ok = flatProperty(decl, v, present)
			// A number a float64 would round, or one past 2^53 that a
			// client might round as it is edited, is shown as text.
			if !ok || (present && !floatSafe(raw)) {
				fd.asJSON = true
				note = strings.TrimPrefix(note+"; JSON value", "; ")
				p = map[string]any{"type": "string", "description": withNote(decl, note)}
				if present {
					p["default"] = compact(raw)
				}
			} else if present {
				p["default"] = v
				if note != "" {
					p["description"] = withNote(decl, note)
				}
			}
		}
		if t, _ := decl["title"].(string); t != "" {
			p["title"] = t
		}
		f.fields[name] = fd
		props[name] = p
	}
	for _, kv := range given {
		add(kv.name, kv.raw, true)
	}
	for name := range in.Properties {
		if _, done := props[name]; !done {
			add(name, nil, false)
		}
	}

	f.RememberKey = "remember"
	for i := 0; props[f.RememberKey] != nil; i++ {
		f.RememberKey = strings.Repeat("_", i) + "remember_for_session"
	}
	props[f.RememberKey] = map[string]any{
		"type":        "boolean",
		"title":       "Remember for this session",
		"description": fmt.Sprintf("Do not ask again about %q for the rest of this session", info.Name),
		"default":     false,
	}
	f.Schema, err = json.Marshal(map[string]any{"type": "object", "properties": props})
	if err != nil {
		return Form{}, fmt.Errorf("approval: form for %q: %w", info.Name, err)
	}
	// The answer is checked against the form as published, and must not
	// carry fields the form did not ask for.
	closed, err := json.Marshal(map[string]any{"type": "object", "properties": props, "additionalProperties": false})
	if err != nil {
		return Form{}, fmt.Errorf("approval: form for %q: %w", info.Name, err)
	}
	f.validator, err = schema.Compile(closed)
	if err != nil {
		return Form{}, fmt.Errorf("approval: form for %q: %w", info.Name, err)
	}
	with := describe(given, secret, " = ", MessageValueLen, 0)
	if len(defaults) > 0 {
		slices.SortFunc(defaults, func(a, b kv) int { return strings.Compare(a.name, b.name) })
		with += " (and the tool's defaults: " + describe(defaults, secret, " = ", MessageValueLen, 0) + ")"
	}
	f.Message = fmt.Sprintf("Allow %q to run with %s?", info.Name, with)
	return f, nil
}

// flatProperty returns the elicitation property for an argument declared as
// decl whose value is v (present says whether the model sent one), or false
// when it must be shown as JSON text.
func flatProperty(decl map[string]any, v any, present bool) (map[string]any, bool) {
	typ := flatType(decl, v)
	if typ == "" {
		return nil, false
	}
	p := map[string]any{"type": typ}
	if present && !fits(typ, v) {
		return nil, false
	}
	if d, ok := decl["description"].(string); ok && d != "" {
		p["description"] = d
	}
	switch typ {
	case "string":
		if e, ok := stringEnum(decl["enum"]); ok {
			p["enum"] = e
		}
		for _, k := range []string{"minLength", "maxLength"} {
			if n, ok := decl[k].(float64); ok {
				p[k] = n
			}
		}
		if fm, _ := decl["format"].(string); formatsAllowed[fm] {
			p["format"] = fm
		}
	case "number", "integer":
		for _, k := range []string{"minimum", "maximum"} {
			if n, ok := decl[k].(float64); ok {
				p[k] = n
			}
		}
	}
	return p, true
}

// flatType is the flat type of an argument: its declared type when that is
// one elicitation allows ("string", "number", "integer", "boolean"; a
// string enum without a type is a string), the type of its value when it
// is not declared, or "" when neither works.
func flatType(decl map[string]any, v any) string {
	if decl == nil {
		switch v.(type) {
		case string:
			return "string"
		case float64:
			return "number"
		case bool:
			return "boolean"
		}
		return ""
	}
	switch t := decl["type"].(type) {
	case string:
		switch t {
		case "string", "number", "integer", "boolean":
			return t
		}
		return ""
	case nil:
		if _, ok := stringEnum(decl["enum"]); ok {
			return "string"
		}
	}
	return ""
}

// stringEnum returns e as a list of strings, if it is one.
func stringEnum(e any) ([]any, bool) {
	list, ok := e.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	for _, x := range list {
		if _, ok := x.(string); !ok {
			return nil, false
		}
	}
	return list, true
}

// fits reports whether v can be the default of a property of type typ.
func fits(typ string, v any) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == float64(int64(n))
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return false
}

// withNote returns decl's description followed by note in brackets, or
// note alone.
func withNote(decl map[string]any, note string) string {
	if d, _ := decl["description"].(string); d != "" {
		return d + " (" + note + ")"
	}
	return strings.ToUpper(note[:1]) + note[1:]
}

// Answer is a person's reply: action "accept", "decline" or "cancel", and
// the form's content on accept. Numbers in Content are best decoded as
// json.Number (encoding/json's UseNumber), which keeps them as the client
// wrote them; a float64 cannot hold every integer past 2^53.
type Answer struct {
	Action  string
	Content map[string]any
}

// Decide turns an answer into an outcome for the call; args are the
// model's arguments, those the form was made with.
//
// On accept, the content is first checked against the form: content that
// does not fit it (a wrong type, a field the form did not ask for, JSON
// text that does not parse) is a rejection, and so is a number of 2^53 or
// more in magnitude, other than the model's, that may have been rounded on
// its way from the person: any float64, or a json.Number that a float64
// holds exactly (what a client holding numbers as float64 rounds to).
// Fields left out keep the model's values, and so do secret fields, and
// fields the model did not send, left empty or at the tool's default the
// form showed (the tool applies it itself; emptied, such a field is an
// edit to the empty string). Values are compared number
// for number as written. When every value is the model's the outcome is
// Approve with args exactly; otherwise it is Edit with the merged
// arguments, which are validated again with v, the tool's input schema
// (nil: not checked): an edit that breaks it is a *tools.Error of kind
// invalid_arguments whose message starts "the reviewer's edit is invalid: ",
// and must never run.
//
// Decline, cancel and any other action are rejections; their Reason is
// written for the model.
func (f Form) Decide(args json.RawMessage, a Answer, v *schema.Validator) (Outcome, error) {
	reject := func(reason string) (Outcome, error) {
		return Outcome{Decision: Reject, By: "elicitation", Reason: reason}, nil
	}
	switch a.Action {
	case "accept":
	case "decline":
		return reject("Rejected by reviewer: " + Summary(tools.Info{Secret: f.secretNames()}, args, 0))
	case "cancel":
		return reject("Rejected by reviewer: cancelled by the user")
	default:
		return reject(fmt.Sprintf("Rejected: the reviewer's answer %q is not accept, decline or cancel; the tool did not run", a.Action))
	}
	if f.validator == nil {
		return Outcome{}, errors.New("approval: Decide on a form not made by NewForm")
	}
	given, err := objectFields(args)
	if err != nil {
		return Outcome{}, fmt.Errorf("approval: %w", err)
	}
	content, err := json.Marshal(a.Content)
	if err != nil {
		return reject(fmt.Sprintf("Rejected: the reviewer's answer did not fit the form: %v", err))
	}
	if err := f.validator.Validate(content); err != nil {
		return reject("Rejected: the reviewer's answer did not fit the form: " + strings.TrimPrefix(err.Error(), "invalid arguments: "))
	}
	merged := make(map[string]json.RawMessage, len(given))
	for _, kv := range given {
		merged[kv.name] = kv.raw
	}
	remember, changed := false, false
	for k, val := range a.Content {
		if k == f.RememberKey {
			remember, _ = val.(bool)
			continue
		}
		fd := f.fields[k]
		old, present := merged[k]
		if s, ok := val.(string); ok && s == "" && (fd.secret || (!present && fd.def == nil)) {
			continue // left empty: the model's value (or its absence) stays
		}
		var nv json.RawMessage
		if s, ok := val.(string); ok && fd.asJSON {
			if !json.Valid([]byte(s)) {
				return reject(fmt.Sprintf("Rejected: the reviewer's answer did not fit the form: field %q must hold JSON text, got %q", k, shorten(s, SummaryValueLen)))
			}
			nv = json.RawMessage(s)
		} else if nv, err = json.Marshal(val); err != nil {
			return reject(fmt.Sprintf("Rejected: the reviewer's answer did not fit the form: field %q: %v", k, err))
		}
		if present && sameValue(old, nv) {
			continue
		}
		if !present && fd.def != nil && sameValue(fd.def, nv) {
			continue // the tool's default, as shown: the tool applies it itself
		}
		if mayBeRounded(val, nv) {
			return reject(fmt.Sprintf("Rejected: the reviewer's value for field %q, %s, may not be the number they gave: from 2^53 on, a number can be rounded on its way from the reviewer (float64 turns 9007199254740993 into 9007199254740992); the tool did not run", k, shorten(string(nv), SummaryValueLen)))
		}
		changed = true
		merged[k] = nv
	}
	if !changed {
		return Outcome{Decision: Approve, Args: args, Remember: remember, By: "elicitation"}, nil
	}
	edited, err := json.Marshal(merged)
	if err != nil {
		return Outcome{}, fmt.Errorf("approval: encode the edited arguments: %w", err)
	}
	if err := validateEdit(v, edited); err != nil {
		return Outcome{}, err
	}
	return Outcome{Decision: Edit, Args: edited, Remember: remember, By: "elicitation"}, nil
}

// validateEdit checks a reviewer's edited arguments against the tool's
// schema.
func validateEdit(v *schema.Validator, edited json.RawMessage) error {
	if v == nil {
		return nil
	}
	err := v.Validate(edited)
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(tools.AsError(err).Message, "invalid arguments: ")
	return &tools.Error{Kind: tools.KindInvalidArguments, Message: "the reviewer's edit is invalid: " + msg, Err: err}
}

func (f Form) secretNames() []string {
	var out []string
	for k, fd := range f.fields {
		if fd.secret {
			out = append(out, k)
		}
	}
	return out
}

// Summary renders args, the arguments of a call of info's tool, in one line
// for people and logs: name=value pairs in the order the model sent them,
// each value cut to SummaryValueLen characters, the values of secret
// arguments (info.Secret) as [hidden], and the whole cut to max characters
// (0: SummaryLen).
func Summary(info tools.Info, args json.RawMessage, max int) string {
	if max <= 0 {
		max = SummaryLen
	}
	given, err := objectFields(args)
	if err != nil {
		return "arguments that are not a JSON object"
	}
	return describe(given, secretSet(info.Secret), "=", SummaryValueLen, max)
}

// describe renders fields as name<sep>value pairs, each name (see
// showName) and value cut to n characters, the whole cut to max (0: no
// limit).
func describe(given []kv, secret func(name string) bool, sep string, n, max int) string {
	if len(given) == 0 {
		return "no arguments"
	}
	parts := make([]string, 0, len(given))
	for _, kv := range given {
		parts = append(parts, showName(kv.name, n)+sep+showValue(kv.raw, secret(kv.name), n))
	}
	s := strings.Join(parts, ", ")
	if max > 0 {
		if r := []rune(s); len(r) > max {
			s = string(r[:max]) + "…"
		}
	}
	return s
}

// showName renders an argument's name for people: as it is when it is
// plain (letters, digits, _ - . $) and at most n characters, otherwise
// quoted and cut as a string value is. A name is the model's text too: one
// that holds a line break, a quote or " = " could pass for more of the
// message.
func showName(name string, n int) string {
	plain := name != ""
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("_-.$", r) {
			plain = false
			break
		}
	}
	r := []rune(name)
	switch {
	case plain && len(r) <= n:
		return name
	case len(r) <= n:
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q (%d more characters)", string(r[:n])+"…", len(r)-n)
}

// showValue renders one value for people: a string quoted and cut to n
// characters, anything else as compact JSON cut to n characters, saying
// how much was cut.
func showValue(raw json.RawMessage, secret bool, n int) string {
	if secret {
		return hidden
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		r := []rune(s)
		if len(r) <= n {
			return fmt.Sprintf("%q", s)
		}
		return fmt.Sprintf("%q (%d more characters)", string(r[:n])+"…", len(r)-n)
	}
	return shorten(compact(raw), n)
}

// shorten cuts s to n characters, saying how many were cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return fmt.Sprintf("%s… (%d more characters)", string(r[:n]), len(r)-n)
}

// compact returns raw as compact JSON text.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// kv is one field of a JSON object.
type kv struct {
	name string
	raw  json.RawMessage
}

// objectFields returns the fields of a JSON object in the order they were
// written (a later duplicate replaces an earlier one, as encoding/json
// does). Empty or null input is the empty object.
func objectFields(args json.RawMessage) ([]kv, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("the arguments are not a JSON object")
	}
	var out []kv
	at := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("the arguments are not a valid JSON object: %w", err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("the arguments are not a valid JSON object: %w", err)
		}
		if i, dup := at[name]; dup {
			out[i].raw = raw
			continue
		}
		at[name] = len(out)
		out = append(out, kv{name, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("the arguments are not a valid JSON object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the arguments are not a valid JSON object: data after the object")
	}
	return out, nil
}

// secretSet reports which argument names are secret: those in names, in
// any case (tools.IsSecret), so a case variant the model sent is hidden too.
func secretSet(names []string) func(name string) bool {
	return func(name string) bool { return tools.IsSecret(name, names) }
}
