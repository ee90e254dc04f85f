package typed

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// defaults holds the default values of a schema's properties, and of the
// properties of its nested objects, by property name.
type defaults map[string]defaultNode

type defaultNode struct {
	value jsontext.Value // nil: no default of its own
	kids  defaults
}

// propSchema is the part of a schema that defaults reads. A schema that
// is not an object (true, false) has neither.
type propSchema struct {
	Default    json.RawMessage            `json:"default"`
	Properties map[string]json.RawMessage `json:"properties"`
}

func readSchema(raw json.RawMessage) propSchema {
	var s propSchema
	if jsontext.Value(raw).Kind() == '{' {
		if err := json.Unmarshal(raw, &s); err != nil {
			// A property map that is not an object of schemas has no
			// defaults to read.
			s.Properties = nil
			_ = json.Unmarshal(raw, &struct {
				Default *json.RawMessage `json:"default"`
			}{&s.Default})
		}
	}
	return s
}

// schemaDefaults collects the defaults of the object schema raw.
func schemaDefaults(raw json.RawMessage) (defaults, error) {
	if jsontext.Value(raw).Kind() != '{' {
		return nil, fmt.Errorf("read defaults: the schema is not an object")
	}
	return collect(readSchema(raw).Properties), nil
}

func collect(props map[string]json.RawMessage) defaults {
	var d defaults
	for name, raw := range props {
		p := readSchema(raw)
		n := defaultNode{kids: collect(p.Properties)}
		if len(p.Default) > 0 {
			n.value = jsontext.Value(p.Default)
		}
		if n.value == nil && n.kids == nil {
			continue
		}
		if d == nil {
			d = defaults{}
		}
		d[name] = n
	}
	return d
}

// apply returns args, a JSON object, with each absent property that has a
// default set to it, and the same for the nested objects args gives. A
// repeated member name is an error, as when decoding.
func (d defaults) apply(args jsontext.Value) (jsontext.Value, error) {
	var m map[string]jsontext.Value
	if err := jsonv2.Unmarshal(args, &m); err != nil {
		return nil, err
	}
	for name, n := range d {
		v, ok := m[name]
		switch {
		case !ok && n.value != nil:
			m[name] = n.value
		case ok && n.kids != nil && v.Kind() == '{':
			nv, err := n.kids.apply(v)
			if err != nil {
				return nil, err
			}
			m[name] = nv
		}
	}
	return jsonv2.Marshal(m, jsonv2.Deterministic(true))
}

// checkDefaults makes sure every default fits its field: the whole tree of
// defaults must decode into In. It also catches a default= tag the schema
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
	if missing := droppedDefaults(t, d, ""); len(missing) > 0 {
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

// droppedDefaults lists the fields of struct type t (nested structs
// included) whose jsonschema tag says default= but which have no default
// in d. The fields are t's JSON members: those of embedded structs
// included, those another field hides left out.
func droppedDefaults(t reflect.Type, d defaults, prefix string) []string {
	var out []string
	ms, _, _ := members(t)
	for _, m := range ms {
		f, name := m.field, m.name
		n := d[name]
		if hasDefaultTag(f.Tag.Get("jsonschema")) && n.value == nil {
			out = append(out, prefix+name)
		}
		if ft := derefType(f.Type); ft.Kind() == reflect.Struct && ft != timeType {
			out = append(out, droppedDefaults(ft, n.kids, prefix+name+".")...)
		}
	}
	return out
}

func hasDefaultTag(tag string) bool {
	for _, kv := range strings.Split(tag, ",") {
		if strings.HasPrefix(kv, "default=") {
			return true
		}
	}
	return false
}
