package typed

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// defaults holds the default values of a schema's properties, and what
// applies inside them, by property name.
type defaults map[string]defaultNode

type defaultNode struct {
	value jsontext.Value // nil: no default of its own
	inside
}

// inside is what applies inside a value: the defaults of an object's
// properties (kids), and what applies inside the values of its members
// that match a pattern (patternProperties), of the other members
// (additionalProperties) and of an array's elements (items). The zero
// inside applies nothing.
type inside struct {
	kids     defaults
	props    map[string]bool // every property's name, when others or patterns is set
	patterns []patternNode
	others   *inside
	items    *inside
}

type patternNode struct {
	re     *regexp.Regexp
	inside *inside // nil: nothing
}

func (in *inside) empty() bool {
	return in == nil || (in.kids == nil && in.patterns == nil && in.others == nil && in.items == nil)
}

// maxDefaultBytes bounds what applying defaults adds to one call's
// arguments: the defaults of elements and map values multiply with them.
const maxDefaultBytes = 4 << 20

var errDefaultsTooLarge = errors.New("the defaults of what the arguments leave out would add more than 4 MiB to them")

// propSchema is the part of a schema that defaults reads. A schema that
// is not an object (true, false) has none of it.
type propSchema struct {
	Default              json.RawMessage
	Properties           map[string]json.RawMessage
	PatternProperties    map[string]json.RawMessage
	AdditionalProperties json.RawMessage
	Items                json.RawMessage
}

func readSchema(raw json.RawMessage) propSchema {
	var s propSchema
	var m map[string]json.RawMessage
	if jsontext.Value(raw).Kind() != '{' || json.Unmarshal(raw, &m) != nil {
		return s
	}
	// A keyword that is not what it should be (a property map that is not
	// an object of schemas, say) has no defaults to read.
	_ = json.Unmarshal(m["properties"], &s.Properties)
	_ = json.Unmarshal(m["patternProperties"], &s.PatternProperties)
	s.Default, s.AdditionalProperties, s.Items = m["default"], m["additionalProperties"], m["items"]
	return s
}

// schemaDefaults collects the defaults of the object schema raw.
func schemaDefaults(raw json.RawMessage) (defaults, error) {
	if jsontext.Value(raw).Kind() != '{' {
		return nil, fmt.Errorf("read defaults: the schema is not an object")
	}
	return collect(readSchema(raw).Properties)
}

func collect(props map[string]json.RawMessage) (defaults, error) {
	var d defaults
	for name, raw := range props {
		p := readSchema(raw)
		in, err := readInside(p)
		if err != nil {
			return nil, err
		}
		n := defaultNode{inside: in}
		if len(p.Default) > 0 {
			n.value = jsontext.Value(p.Default)
		}
		if n.value == nil && n.empty() {
			continue
		}
		if d == nil {
			d = defaults{}
		}
		d[name] = n
	}
	return d, nil
}

// readInside collects what applies inside a value of schema s.
func readInside(s propSchema) (inside, error) {
	var in inside
	var err error
	if in.kids, err = collect(s.Properties); err != nil {
		return in, err
	}
	if in.items, err = readInsidePtr(s.Items); err != nil {
		return in, err
	}
	if in.others, err = readInsidePtr(s.AdditionalProperties); err != nil {
		return in, err
	}
	var patterns []patternNode
	var withDefaults bool
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range s.PatternProperties {
			if !yield(p) {
				return
			}
		}
	}) {
		pin, err := readInsidePtr(s.PatternProperties[p])
		if err != nil {
			return in, err
		}
		patterns = append(patterns, patternNode{inside: pin})
		patterns[len(patterns)-1].re, err = regexp.Compile(p)
		if err != nil && (pin != nil || in.others != nil) {
			return in, fmt.Errorf("read defaults: pattern %q: %v", p, err)
		}
		withDefaults = withDefaults || pin != nil
	}
	if withDefaults || (in.others != nil && patterns != nil) {
		in.patterns = patterns
	}
	if in.patterns != nil || in.others != nil {
		in.props = map[string]bool{}
		for name := range s.Properties {
			in.props[name] = true
		}
	}
	return in, nil
}

func readInsidePtr(raw json.RawMessage) (*inside, error) {
	if jsontext.Value(raw).Kind() != '{' { // absent, true or false
		return nil, nil
	}
	in, err := readInside(readSchema(raw))
	if err != nil || in.empty() {
		return nil, err
	}
	return &in, nil
}

// apply returns args, a JSON object, with each absent property that has a
// default set to it, and the same inside the objects and arrays args gives
// (see inside.apply). A repeated member name is an error, as when decoding,
// and so are defaults that would add more than maxDefaultBytes.
func (d defaults) apply(args jsontext.Value) (jsontext.Value, error) {
	budget := maxDefaultBytes
	return (&inside{kids: d}).apply(args, &budget)
}

// apply returns v with what in says applied: when v is an object, each
// absent property that has a default is set to it, and the same applies
// inside the members it gives; when v is an array, inside each element.
// Any other value (null included) is left as it is. budget is how many
// more bytes defaults may add.
func (in *inside) apply(v jsontext.Value, budget *int) (jsontext.Value, error) {
	switch v.Kind() {
	case '{':
		if in.kids == nil && in.patterns == nil && in.others == nil {
			return v, nil
		}
		var m map[string]jsontext.Value
		if err := jsonv2.Unmarshal(v, &m); err != nil {
			return nil, err
		}
		for name, n := range in.kids {
			cur, ok := m[name]
			switch {
			case !ok && n.value != nil:
				if *budget -= len(name) + len(n.value) + 4; *budget < 0 {
					return nil, errDefaultsTooLarge
				}
				m[name] = n.value
			case ok && !n.empty():
				nv, err := n.apply(cur, budget)
				if err != nil {
					return nil, err
				}
				m[name] = nv
			}
		}
		if in.patterns != nil || in.others != nil {
			for name, cur := range m {
				matched := false
				for _, p := range in.patterns {
					if p.re == nil || !p.re.MatchString(name) {
						continue
					}
					matched = true
					if p.inside != nil {
						nv, err := p.inside.apply(cur, budget)
						if err != nil {
							return nil, err
						}
						m[name], cur = nv, nv
					}
				}
				if !matched && !in.props[name] && in.others != nil {
					nv, err := in.others.apply(cur, budget)
					if err != nil {
						return nil, err
					}
					m[name] = nv
				}
			}
		}
		return jsonv2.Marshal(m, jsonv2.Deterministic(true))
	case '[':
		if in.items == nil {
			return v, nil
		}
		var a []jsontext.Value
		if err := jsonv2.Unmarshal(v, &a); err != nil {
			return nil, err
		}
		for i := range a {
			var err error
			if a[i], err = in.items.apply(a[i], budget); err != nil {
				return nil, err
			}
		}
		return jsonv2.Marshal(a)
	}
	return v, nil
}

// checkDefaults makes sure every default fits its field: the whole tree of
// defaults must decode into In, and those of each struct inside an array
// or map into that struct. It also catches a default= tag the schema
// generator dropped because it could not read it as the field's type.
func checkDefaults[In any](t reflect.Type, d defaults) error {
	all, err := d.all()
	if err != nil {
		return err
	}
	var in In
	if err := jsonv2.Unmarshal(all, &in, durationAsNano); err != nil {
		return fmt.Errorf("a default does not fit its field: %v", err)
	}
	var missing []string
	if err := checkInside(t, &inside{kids: d}, "", false, &missing); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("default of %s does not fit the field's type", strings.Join(missing, ", "))
	}
	return nil
}

// all is an object holding every default, nested objects included.
func (d defaults) all() (jsontext.Value, error) {
	m := map[string]jsontext.Value{}
	for name, n := range d {
		switch {
		case n.value != nil:
			m[name] = n.value
		case n.kids != nil:
			v, err := n.kids.all()
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
	}
	return jsonv2.Marshal(m, jsonv2.Deterministic(true))
}

// checkInside walks type t, reached at path, with in, what applies inside
// its values (nil: nothing). It lists in missing the JSON members of the
// structs it meets whose jsonschema tag says default= but which have no
// default, and, for a struct that is an element of an array or map (elem),
// decodes its defaults into it. A type that gives its own schema is what
// that schema says.
func checkInside(t reflect.Type, in *inside, path string, elem bool, missing *[]string) error {
	t = derefType(t)
	if t == timeType || t.Implements(customSchemaType) || reflect.PointerTo(t).Implements(customSchemaType) {
		return nil
	}
	if in == nil {
		in = &inside{}
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return checkInside(t.Elem(), in.items, path+"[]", true, missing)
	case reflect.Map:
		values := in.others
		for _, p := range in.patterns {
			values = cmpOr(values, p.inside)
		}
		return checkInside(t.Elem(), values, path+"[key]", true, missing)
	case reflect.Struct:
	default:
		return nil
	}
	if elem && in.kids != nil {
		all, err := in.kids.all()
		if err != nil {
			return err
		}
		if err := jsonv2.Unmarshal(all, reflect.New(t).Interface(), durationAsNano); err != nil {
			return fmt.Errorf("a default in %s does not fit its field: %v", path, err)
		}
	}
	ms, _, _ := members(t)
	for _, m := range ms {
		name := m.name
		if path != "" {
			name = path + "." + name
		}
		n := in.kids[m.name]
		if hasDefaultTag(m.field.Tag.Get("jsonschema")) && n.value == nil {
			*missing = append(*missing, name)
		}
		if err := checkInside(m.field.Type, &n.inside, name, false, missing); err != nil {
			return err
		}
	}
	return nil
}

func cmpOr(a, b *inside) *inside {
	if a != nil {
		return a
	}
	return b
}

func hasDefaultTag(tag string) bool {
	for _, kv := range strings.Split(tag, ",") {
		if strings.HasPrefix(kv, "default=") {
			return true
		}
	}
	return false
}
