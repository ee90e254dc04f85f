// Package typed turns a Go function whose input is a struct into a tool.
//
// The input schema is generated once, by reflection, when the tool is made
// (github.com/invopop/jsonschema), and published as the tool's InputSchema;
// the server validates every call against that same schema before the
// function runs, so the function only ever sees input that fits it.
//
// # Mapping
//
// string → string; every int kind → integer; every uint kind → integer with
// minimum 0; int8, int16, int32, uint8, uint16 and uint32 also get the
// minimum and maximum they can hold; float kinds → number;
// bool → boolean; slices and arrays → array with typed items; maps → object;
// nested structs → object; time.Time → string with format date-time;
// time.Duration → integer, a count of nanoseconds (as encoding/json). A named
// string type with a method Enum() []string → string with that enum.
//
// # Tags
//
// `json:"name"` names the field. `jsonschema:"..."` adds keywords:
// description=..., enum=a,enum=b, default=..., minimum=, maximum=,
// minLength=, maxLength=, pattern=, example=... (see invopop/jsonschema).
// `secret:"true"` marks a top-level field (one of an embedded struct
// included) whose value is redacted in logs and approval summaries. Only
// top-level values are redacted: a secret field inside a nested struct
// (or an element or map value) hides the whole top-level field that
// holds it.
//
// # Defaults
//
// A default=... keyword is published in the schema and also applied: when
// a call's arguments leave out a property that has a default (at the top
// level, or inside a nested object, array element or map value the call
// gives, at any depth), Call decodes the default into the field, so the
// function sees what the schema promised the model rather than the zero
// value. A property given as null is not left out. A default that does not
// fit its field's type makes New fail. As the defaults inside elements
// multiply with them, those a call gets may add at most 4 MiB to its
// arguments; past that the call is invalid arguments.
//
// # Embedded structs
//
// The fields of an embedded struct (one without a name in its json tag,
// or a struct field tagged `json:",embed"`, as json v2 allows) are the
// outer object's, by Go's rules (those of encoding/json): of the
// fields that have one JSON name, the one at the shallowest depth wins,
// else the one whose json tag gives the name, and the schema publishes
// that field. When no field wins (two at the same depth, both tagged or
// neither), Go would fill none of them, so New refuses the type with an
// error naming it and the JSON name.
//
// # Required and optional
//
// A field is required unless its json tag says omitempty (or omitzero):
// one rule, everywhere.
//
// # Unknown fields
//
// Unknown extra fields are ignored by default and the published schema does
// not forbid them. Strict() publishes additionalProperties: false on every
// object, and the server then rejects unknown fields.
//
// # Decoding
//
// Call decodes exactly what the schema validated, by the same rules: member
// names match field names exactly, case included (github.com/go-json-experiment/json,
// the encoding/json/v2 API), so {"UNITS": ...} is an unknown field and never
// fills Units the way encoding/json's case-insensitive matching would. A
// member name given twice, at any depth, and arguments that are not a JSON
// object (null included) are refused as invalid arguments.
//
// # Recursive types
//
// The schema is written out in full, without references, so a type that
// contains itself (type Node struct{ Kids []Node }, or through a pointer,
// map or another struct) has no schema: New refuses it with an error that
// names the cycle.
//
// # Output
//
// When Out is a struct (or a pointer to one) its schema is published as the
// tool's OutputSchema, and each result carries the value as structured
// content plus its JSON as text for older clients. Any other Out is rendered
// as text: a string as is, a tools.Result as the function made it (no
// OutputSchema is published for it), anything else as JSON.
package typed

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/invopop/jsonschema"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// Option configures a typed tool.
type Option func(*config)

type config struct {
	annotations tools.Annotations
	strict      bool
}

// WithAnnotations sets the tool's MCP annotations.
func WithAnnotations(a tools.Annotations) Option {
	return func(c *config) { c.annotations = a }
}

// Strict makes unknown argument fields an error: the published schema says
// additionalProperties: false on every object.
func Strict() Option {
	return func(c *config) { c.strict = true }
}

// Tool is a typed tool. It implements tools.Tool.
type Tool[In, Out any] struct {
	info       tools.Info
	fn         func(context.Context, In) (Out, error)
	structured bool
	defaults   defaults
}

var _ tools.Tool = (*Tool[struct{}, struct{}])(nil)

// New returns a tool named name that runs fn. In must be a struct (or a
// pointer to one). The schemas are generated here, once; New fails when In is
// not a struct or its schema cannot be generated.
func New[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...Option) (*Tool[In, Out], error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if fn == nil {
		return nil, fmt.Errorf("typed: tool %q: nil function", name)
	}
	inType := derefType(reflect.TypeFor[In]())
	if inType.Kind() != reflect.Struct {
		return nil, fmt.Errorf("typed: tool %q: input type %s is not a struct", name, inType)
	}
	in, err := Schema(inType, c.strict)
	if err != nil {
		return nil, fmt.Errorf("typed: tool %q: input schema: %w", name, err)
	}
	t := &Tool[In, Out]{fn: fn}
	if t.defaults, err = schemaDefaults(in); err != nil {
		return nil, fmt.Errorf("typed: tool %q: %w", name, err)
	}
	if err := checkDefaults[In](inType, t.defaults); err != nil {
		return nil, fmt.Errorf("typed: tool %q: %w", name, err)
	}
	t.info = tools.Info{
		Name:        name,
		Description: description,
		InputSchema: in,
		Annotations: c.annotations,
		Secret:      secretFields(inType),
	}
	if outType := derefType(reflect.TypeFor[Out]()); outType.Kind() == reflect.Struct && outType != timeType && outType != resultType {
		out, err := Schema(outType, false)
		if err != nil {
			return nil, fmt.Errorf("typed: tool %q: output schema: %w", name, err)
		}
		t.info.OutputSchema = out
		t.structured = true
	}
	return t, nil
}

// MustNew is like New but panics on error. It is meant for package-level
// tools, like regexp.MustCompile.
func MustNew[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...Option) *Tool[In, Out] {
	t, err := New(name, description, fn, opts...)
	if err != nil {
		panic(err)
	}
	return t
}

// Info returns the tool's descriptor.
func (t *Tool[In, Out]) Info() tools.Info { return t.info }

// Call decodes args into In (see Decoding in the package documentation),
// runs the function and renders its output. Arguments that are not a JSON
// object, repeat a member name, or do not fit In are an invalid-arguments
// error and the function does not run.
func (t *Tool[In, Out]) Call(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	var in In
	if len(args) == 0 {
		args = json.RawMessage("{}") // robust to a caller that breaks the contract
	}
	if k := jsontext.Value(args).Kind(); k != '{' {
		return tools.Result{}, tools.InvalidArgs("arguments must be a JSON object, got %s", kindName(k))
	}
	if len(t.defaults) > 0 {
		withDefaults, err := t.defaults.apply(jsontext.Value(args))
		if errors.Is(err, errDefaultsTooLarge) {
			return tools.Result{}, tools.InvalidArgs("%v", err)
		}
		if err != nil {
			return tools.Result{}, t.decodeError(err)
		}
		args = json.RawMessage(withDefaults)
	}
	if err := jsonv2.Unmarshal(args, &in, durationAsNano); err != nil {
		return tools.Result{}, t.decodeError(err)
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return tools.Result{}, err
	}
	return t.render(out)
}

// decodeError is the invalid-arguments error for arguments that do not
// decode into In. The decoder's message can quote the value (a number out
// of range, a time it cannot parse, whole): under a secret field it names
// only the field and the Go type, and any other message is cut as the
// validator's are (schema.Clip).
func (t *Tool[In, Out]) decodeError(err error) error {
	var ptr jsontext.Pointer
	var goType reflect.Type
	var se *jsonv2.SemanticError
	var sy *jsontext.SyntacticError
	switch {
	case errors.As(err, &se):
		ptr, goType = se.JSONPointer, se.GoType
	case errors.As(err, &sy):
		ptr = sy.JSONPointer
	}
	for top := range ptr.Tokens() {
		if tools.IsSecret(top, t.info.Secret) {
			what := "is not valid"
			if goType != nil {
				what = "does not fit Go " + goType.String()
			}
			return tools.InvalidArgs("cannot decode arguments: the value of field %s (secret, not shown) %s", schema.Quote(top), schema.Clip(what, 2*schema.MaxQuoted))
		}
		break // only top-level fields are secret
	}
	return tools.InvalidArgs("cannot decode arguments: %s", schema.Clip(err.Error(), 2*schema.MaxQuoted))
}

func (t *Tool[In, Out]) render(out Out) (tools.Result, error) {
	if s, ok := any(out).(string); ok {
		return tools.Text(s), nil
	}
	if r, ok := any(out).(tools.Result); ok {
		return r, nil
	}
	v := reflect.ValueOf(out)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return tools.Result{}, nil
	}
	text, err := json.Marshal(out)
	if err != nil {
		return tools.Result{}, fmt.Errorf("encode output: %w", err)
	}
	res := tools.Result{Text: string(text)}
	if t.structured {
		res.Structured = json.RawMessage(text)
	}
	return res, nil
}

// durationAsNano decodes a time.Duration from an integer count of
// nanoseconds: the schema generator publishes it as an integer (what
// encoding/json reads and writes), and without this option the decoder
// refuses every value for it.
var durationAsNano = jsonv1.FormatDurationAsNano(true)

// kindName names the kind of JSON value that starts with k, for messages.
func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '[':
		return "an array"
	}
	return "something that is not JSON"
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	resultType = reflect.TypeFor[tools.Result]()
)

func derefType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// Enumer is implemented by named string types that allow only some values.
// Their schema gets "enum" with those values.
type Enumer interface {
	Enum() []string
}

var enumerType = reflect.TypeFor[Enumer]()

// Schema returns the JSON Schema generated for t, a struct type, by the rules
// in the package documentation. With strict, every object forbids unknown
// properties.
//
// A recursive type (one that contains itself, directly or through slices,
// arrays, maps, pointers or other structs) is an error naming the cycle,
// found before any schema is generated. So is a field of a type that has
// no JSON form (chan, func, complex), and a struct with fields of the same
// JSON name of which none wins (see Embedded structs in the package
// documentation).
func Schema(t reflect.Type, strict bool) (json.RawMessage, error) {
	if err := checkRecursion(t, nil, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	var r *jsonschema.Reflector
	var clash error // the first struct type with fields no JSON name can tell apart
	r = &jsonschema.Reflector{
		Anonymous:      true,
		DoNotReference: true,
		// Not ExpandedStruct: it takes the root's schema from the
		// definitions by the type's bare name, which a nested type of the
		// same name from another package overwrites. With DoNotReference
		// the root schema is written out in full anyway.
		AllowAdditionalProperties: !strict,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t.Kind() {
			case reflect.Struct:
				if t == timeType || t.Implements(customSchemaType) {
					return nil
				}
				s, err := flatSchema(r, t)
				if err != nil {
					clash = cmp.Or(clash, err)
					return &jsonschema.Schema{}
				}
				return s
			case reflect.String:
				if t.Implements(enumerType) {
					values := reflect.Zero(t).Interface().(Enumer).Enum()
					s := &jsonschema.Schema{Type: "string"}
					for _, v := range values {
						s.Enum = append(s.Enum, v)
					}
					return s
				}
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				// A negative number would pass an unbounded schema and then
				// fail to decode: publish the bound the type already has.
				s := &jsonschema.Schema{Type: "integer", Minimum: "0"}
				if k := t.Kind(); k == reflect.Uint8 || k == reflect.Uint16 || k == reflect.Uint32 {
					// Not uint: its range, so the schema, varies by platform.
					s.Maximum = json.Number(strconv.FormatUint(1<<t.Bits()-1, 10))
				}
				return s
			case reflect.Int8, reflect.Int16, reflect.Int32:
				// The same for a number past a sized integer's range.
				return &jsonschema.Schema{Type: "integer",
					Minimum: json.Number(strconv.FormatInt(-1<<(t.Bits()-1), 10)),
					Maximum: json.Number(strconv.FormatInt(1<<(t.Bits()-1)-1, 10))}
			}
			return nil
		},
	}
	s, err := reflectSchema(r, t)
	if err != nil {
		return nil, err
	}
	if clash != nil {
		return nil, clash
	}
	s.Version = ""
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// reflectSchema runs the generator, which panics on a type that has no
// JSON form (a chan, func or complex field): that is an error for New.
func reflectSchema(r *jsonschema.Reflector, t reflect.Type) (s *jsonschema.Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return r.ReflectFromType(t), nil
}

// secretFields names the top-level members of struct type t marked
// secret, those promoted from embedded structs included, and those that
// hold a field marked secret at any depth (in a nested struct, an element,
// a map value): only top-level values are redacted, so such a member is
// hidden whole.
func secretFields(t reflect.Type) []string {
	var out []string
	ms, _, _ := members(t)
	seen := map[reflect.Type]bool{t: false}
	for _, m := range ms {
		if m.field.Tag.Get("secret") == "true" || holdsSecret(m.field.Type, seen) {
			out = append(out, m.name)
		}
	}
	return out
}

// holdsSecret reports whether a value of type t can hold a struct field
// marked secret. seen holds what is known of the struct types walked (a
// type being walked is false until its answer is known).
func holdsSecret(t reflect.Type, seen map[reflect.Type]bool) bool {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
			continue
		}
		break
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	if known, ok := seen[t]; ok {
		return known
	}
	seen[t] = false
	ms, _, _ := members(t)
	for _, m := range ms {
		if m.field.Tag.Get("secret") == "true" || holdsSecret(m.field.Type, seen) {
			seen[t] = true
			return true
		}
	}
	return false
}

// customSchema is implemented by types that give their own schema; the
// reflector does not look inside them.
type customSchema interface {
	JSONSchema() *jsonschema.Schema
}

var customSchemaType = reflect.TypeFor[customSchema]()

// checkRecursion walks the types the schema generator would visit from t
// and reports a struct type met again while already inside it. path is how
// t was reached, for the message; open holds the struct types being
// walked.
func checkRecursion(t reflect.Type, path []string, open map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(customSchemaType) || reflect.PointerTo(t).Implements(customSchemaType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return checkRecursion(t.Elem(), append(path, "[]"), open)
	case reflect.Map:
		return checkRecursion(t.Elem(), append(path, "[key]"), open)
	case reflect.Struct:
	default:
		return nil
	}
	if open[t] {
		return fmt.Errorf("type %s is recursive: %s holds a %s again, and a type that contains itself has no finite schema; "+
			"break the cycle (with a json.RawMessage field, say)", t, strings.Join(path, ""), t.Name())
	}
	if len(path) == 0 {
		path = []string{t.Name()}
	}
	open[t] = true
	defer delete(open, t)
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if err := checkRecursion(f.Type, append(path[:len(path):len(path)], "."+name), open); err != nil {
			return err
		}
	}
	return nil
}
