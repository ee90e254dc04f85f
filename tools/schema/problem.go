package schema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one way the arguments break the schema.
type Problem struct {
	// Field is the path of the offending value: "" for the arguments as a
	// whole, "query", "opts.limit", "tags[2]". For a missing or unknown
	// field it is the path of that field.
	Field string
	// Keyword is the JSON Schema keyword that failed ("required", "type",
	// "maxLength", "additionalProperties"...), "json" when the arguments
	// are not JSON at all, or "number" for a number beyond MaxNumberLength
	// or MaxExponent.
	Keyword string
	// Message is the problem as it appears in the error message, such as
	// `field "n": expected integer, got string`.
	Message string
}

// ArgumentError holds every problem found in one call's arguments. The
// *tools.Error that Validate returns wraps it, so callers can errors.As it.
type ArgumentError struct {
	Problems []Problem
}

// MaxListed is the most problems, and the most missing fields, that
// ArgumentError's message lists; it counts the rest. Together with
// MaxQuoted it bounds how much of the arguments an error carries back to
// the model, however many problems they have.
const MaxListed = 10

// MaxQuoted is the most bytes of a name or value from the arguments (or of
// a message from the underlying validator) that a problem's message
// quotes; a longer one is cut, marked with "…" and followed by its whole
// length. Problem.Field keeps the whole path.
const MaxQuoted = 100

// Error returns "invalid arguments: " followed by the problems, separated
// by "; ", with all missing required fields named in one clause. It lists
// at most MaxListed problems and MaxListed missing fields, and says how
// many more there are.
func (e *ArgumentError) Error() string {
	var missing, clauses []string
	for _, p := range e.Problems {
		if p.Keyword == "required" {
			missing = append(missing, Quote(p.Field))
			continue
		}
		clauses = append(clauses, p.Message)
	}
	if len(missing) > MaxListed {
		missing = append(missing[:MaxListed:MaxListed], fmt.Sprintf("and %d more", len(missing)-MaxListed))
	}
	switch len(missing) {
	case 0:
	case 1:
		clauses = slices.Insert(clauses, 0, "missing required field "+missing[0])
	default:
		clauses = slices.Insert(clauses, 0, "missing required fields "+strings.Join(missing, ", "))
	}
	if len(clauses) > MaxListed {
		more := len(clauses) - MaxListed
		clauses = append(clauses[:MaxListed:MaxListed], fmt.Sprintf("and %d more %s", more, plural(more, "problem")))
	}
	return "invalid arguments: " + strings.Join(clauses, "; ")
}

// Quote returns s Go-quoted for a message to the model, cut to at most
// MaxQuoted bytes of quoted text (escapes included): a longer s ends in "…"
// and is followed by its whole length, as in "aaaa…" (1048576 bytes in
// all). Tools use it for every name or value of their input that an error
// message repeats.
func Quote(s string) string {
	if q := strconv.Quote(s); len(q) <= MaxQuoted+2 {
		return q
	}
	b := []byte{'"'}
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		q := strconv.Quote(s[i : i+size])
		q = q[1 : len(q)-1]
		if len(b)-1+len(q) > MaxQuoted {
			break
		}
		b = append(b, q...)
		i += size
	}
	return fmt.Sprintf("%s…\" (%d bytes in all)", b, len(s))
}

// Clip cuts text that may hold input, such as a library's error message, to
// about n bytes: its first two thirds and its last third, joined by "…",
// so that a position or cause at the end survives. Characters are not
// split.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n*2/3, len(s)-n/3
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "…" + s[tail:]
}

// clip is Clip to twice MaxQuoted.
func clip(s string) string { return Clip(s, 2*MaxQuoted) }

// explainer turns a tree of validation errors into problems.
type explainer struct {
	v     *Validator
	doc   any
	items []item
}

type item struct {
	loc []string // instance location, for ordering
	p   Problem
}

var printer = message.NewPrinter(language.English)

// add records a problem with the value at loc. Unless the message already
// names the field (missing and unknown fields do), it is prefixed with
// `field "path": `, or "the arguments: " for the arguments as a whole.
func (e *explainer) add(loc []string, keyword, msg string) {
	field := e.path(loc)
	switch {
	case keyword == "required" || keyword == "additionalProperties":
	case field == "":
		msg = "the arguments: " + msg
	default:
		msg = fmt.Sprintf("field %s: %s", Quote(field), msg)
	}
	e.items = append(e.items, item{loc: loc, p: Problem{Field: field, Keyword: keyword, Message: msg}})
}

// path renders an instance location as "a.b[2].c", looking at the decoded
// arguments to tell array indexes from object keys.
func (e *explainer) path(loc []string) string {
	var b strings.Builder
	cur := e.doc
	for _, seg := range loc {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + seg + "]")
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
			if m, ok := c.(map[string]any); ok {
				cur = m[seg]
			} else {
				cur = nil
			}
		}
	}
	return b.String()
}

// value returns the decoded argument at loc.
func (e *explainer) value(loc []string) any {
	cur := e.doc
	for _, seg := range loc {
		switch c := cur.(type) {
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		case map[string]any:
			cur = c[seg]
		default:
			return nil
		}
	}
	return cur
}

// sorted returns the problems: missing fields first, then by location and
// keyword.
func (e *explainer) sorted() []Problem {
	slices.SortStableFunc(e.items, func(a, b item) int {
		ar, br := a.p.Keyword == "required", b.p.Keyword == "required"
		if ar != br {
			if ar {
				return -1
			}
			return 1
		}
		if c := compareLoc(a.loc, b.loc); c != 0 {
			return c
		}
		return cmp.Compare(a.p.Keyword, b.p.Keyword)
	})
	out := make([]Problem, 0, len(e.items))
	for _, it := range e.items {
		if len(out) > 0 && out[len(out)-1] == it.p {
			continue // the same problem reached through two branches
		}
		out = append(out, it.p)
	}
	return out
}

// compareLoc orders locations segment by segment, numbers numerically.
func compareLoc(a, b []string) int {
	for i := range min(len(a), len(b)) {
		ai, aerr := strconv.Atoi(a[i])
		bi, berr := strconv.Atoi(b[i])
		if aerr == nil && berr == nil {
			if c := cmp.Compare(ai, bi); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// hugeNumbers adds a problem for each number in x, at loc, beyond
// MaxNumberLength or MaxExponent, the first MaxListed of them in order
// (object members by name).
func (e *explainer) hugeNumbers(x any, loc []string) {
	if len(e.items) >= MaxListed {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e.hugeNumbers(x[k], append(slices.Clip(loc), k))
		}
	case []any:
		for i, v := range x {
			e.hugeNumbers(v, append(slices.Clip(loc), strconv.Itoa(i)))
		}
	case json.Number:
		if hugeNumber(x) {
			e.add(loc, "number", fmt.Sprintf("the number is too long or too large to check; send at most %d characters and an exponent within ±%d", MaxNumberLength, MaxExponent))
		}
	}
}

// explain adds the problems of ve and of all its causes.
func (e *explainer) explain(ve *jsonschema.ValidationError) {
	loc := ve.InstanceLocation
	switch k := ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range ve.Causes {
			e.explain(c)
		}
		if len(ve.Causes) == 0 {
			e.add(loc, keyword(k), clip(k.LocalizedString(printer)))
		}
	case *kind.AnyOf, *kind.OneOf:
		e.alternatives(ve)
	case *kind.Required:
		for _, name := range k.Missing {
			e.add(append(slices.Clip(loc), name), "required", "missing required field "+Quote(e.path(append(slices.Clip(loc), name))))
		}
	case *kind.AdditionalProperties:
		e.unknown(ve, k)
	case *kind.Type:
		e.add(loc, "type", fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), jsonType(e.value(loc))))
	case *kind.Minimum:
		e.add(loc, "minimum", fmt.Sprintf("must be at least %s (minimum %[1]s)", num(k.Want)))
	case *kind.Maximum:
		e.add(loc, "maximum", fmt.Sprintf("must be at most %s (maximum %[1]s)", num(k.Want)))
	case *kind.ExclusiveMinimum:
		e.add(loc, "exclusiveMinimum", fmt.Sprintf("must be greater than %s (exclusiveMinimum %[1]s)", num(k.Want)))
	case *kind.ExclusiveMaximum:
		e.add(loc, "exclusiveMaximum", fmt.Sprintf("must be less than %s (exclusiveMaximum %[1]s)", num(k.Want)))
	case *kind.MultipleOf:
		e.add(loc, "multipleOf", fmt.Sprintf("must be a multiple of %s (multipleOf %[1]s)", num(k.Want)))
	case *kind.MinLength:
		e.add(loc, "minLength", fmt.Sprintf("must be at least %d %s long (minLength %[1]d)", k.Want, plural(k.Want, "character")))
	case *kind.MaxLength:
		e.add(loc, "maxLength", fmt.Sprintf("must be at most %d %s long (maxLength %[1]d)", k.Want, plural(k.Want, "character")))
	case *kind.Pattern:
		e.add(loc, "pattern", fmt.Sprintf("must match the regular expression %s (pattern)", Quote(k.Want)))
	case *kind.Enum:
		e.add(loc, "enum", fmt.Sprintf("must be one of %s (enum)", values(k.Want)))
	case *kind.Const:
		e.add(loc, "const", fmt.Sprintf("must be %s (const)", display(k.Want)))
	case *kind.MinItems:
		e.add(loc, "minItems", fmt.Sprintf("must have at least %d %s (minItems %[1]d)", k.Want, plural(k.Want, "item")))
	case *kind.MaxItems:
		e.add(loc, "maxItems", fmt.Sprintf("must have at most %d %s (maxItems %[1]d)", k.Want, plural(k.Want, "item")))
	case *kind.UniqueItems:
		e.add(loc, "uniqueItems", fmt.Sprintf("items %d and %d are equal; every item must be different (uniqueItems)", k.Duplicates[0], k.Duplicates[1]))
	case *kind.MinProperties:
		e.add(loc, "minProperties", fmt.Sprintf("must have at least %d %s (minProperties %[1]d)", k.Want, plural(k.Want, "field")))
	case *kind.MaxProperties:
		e.add(loc, "maxProperties", fmt.Sprintf("must have at most %d %s (maxProperties %[1]d)", k.Want, plural(k.Want, "field")))
	case *kind.Format:
		e.add(loc, "format", formatMessage(k, e.value(loc)))
	case *kind.Not:
		e.add(loc, "not", "must not match the schema under \"not\" (not)")
	case *kind.FalseSchema:
		e.add(loc, "false", "no value is allowed here (false schema)")
	default:
		e.add(loc, keyword(k), clip(k.LocalizedString(printer))+" ("+keyword(k)+")")
		for _, c := range ve.Causes {
			e.explain(c)
		}
	}
}

// alternatives explains a failed anyOf or oneOf in one problem, listing what
// each alternative wanted.
func (e *explainer) alternatives(ve *jsonschema.ValidationError) {
	kw := keyword(ve.ErrorKind)
	if o, ok := ve.ErrorKind.(*kind.OneOf); ok && len(o.Subschemas) > 0 {
		e.add(ve.InstanceLocation, kw, fmt.Sprintf("matches more than one of the allowed forms (alternatives %d and %d); it must match exactly one (oneOf)", o.Subschemas[0], o.Subschemas[1]))
		return
	}
	var alts []string
	for _, c := range ve.Causes {
		sub := explainer{v: e.v, doc: e.doc}
		sub.explain(c)
		var msgs []string
		for _, p := range sub.sorted() {
			msgs = append(msgs, p.Message)
		}
		alts = append(alts, strings.Join(msgs, ", "))
	}
	e.add(ve.InstanceLocation, kw, fmt.Sprintf("does not match any of the allowed forms (%s): %s", kw, strings.Join(alts, " or ")))
}

// unknown explains fields that the schema does not accept, suggesting the
// closest accepted name.
func (e *explainer) unknown(ve *jsonschema.ValidationError, k *kind.AdditionalProperties) {
	loc := ve.InstanceLocation
	accepted := e.v.closed[ve.SchemaURL]
	obj, _ := e.value(loc).(map[string]any)
	for _, name := range k.Properties {
		field := append(slices.Clip(loc), name)
		msg := "unknown field " + Quote(e.path(field))
		var free []string // accepted names not already given
		for _, a := range accepted {
			if _, given := obj[a]; !given {
				free = append(free, a)
			}
		}
		switch s, ok := suggest(name, free); {
		case ok:
			msg += fmt.Sprintf(" (did you mean %s?)", Quote(e.path(append(slices.Clip(loc), s))))
		case len(accepted) == 0 && len(loc) == 0:
			msg += " (this tool takes no arguments)"
		case len(accepted) == 0:
			msg += " (this object accepts no fields)"
		default:
			msg += " (accepted fields: " + quoteAll(accepted) + ")"
		}
		e.add(field, "additionalProperties", msg)
	}
}

// formatMessage explains a failed format. The format's own error, which
// can quote the value whole (url.Parse's does), is given with the value
// left out: the validator does not know which fields are secret.
func formatMessage(k *kind.Format, value any) string {
	if k.Want == "date-time" {
		return `must be an RFC 3339 date-time such as "2006-01-02T15:04:05Z" (format date-time)`
	}
	msg := fmt.Sprintf("must be a valid %s (format %[1]s)", k.Want)
	if k.Err != nil {
		reason := k.Err.Error()
		if s, ok := value.(string); ok && s != "" {
			q := strconv.Quote(s)
			reason = strings.ReplaceAll(reason, q, "the value")
			reason = strings.ReplaceAll(reason, q[1:len(q)-1], "the value")
			reason = strings.ReplaceAll(reason, s, "the value")
		}
		msg += ": " + clip(reason)
	}
	return msg
}

// keyword names the keyword that failed.
func keyword(k jsonschema.ErrorKind) string {
	if p := k.KeywordPath(); len(p) > 0 {
		return p[0]
	}
	return "schema"
}

// num renders a schema number: an integer as is, anything else in the
// shortest decimal form.
func num(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// display renders a JSON value as JSON, clipped.
func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return clip(fmt.Sprint(v))
	}
	return clip(string(b))
}

// values renders an enum's values, at most MaxListed of them.
func values(vs []any) string {
	out := make([]string, 0, min(len(vs), MaxListed+1))
	for i, v := range vs {
		if i == MaxListed {
			out = append(out, fmt.Sprintf("and %d more", len(vs)-MaxListed))
			break
		}
		out = append(out, display(v))
	}
	return strings.Join(out, ", ")
}

func quoteAll(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Quote(s)
	}
	return strings.Join(out, ", ")
}
