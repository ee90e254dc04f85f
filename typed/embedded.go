package typed

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
)

// member is a Go struct field that is a member of its struct's JSON
// object: a field of the struct itself or one promoted from a struct it
// embeds.
type member struct {
	name   string              // JSON name
	field  reflect.StructField // Index is the path from the outer struct
	path   string              // Go selector from the outer struct, for messages
	tagged bool                // the json tag gives the name
}

// members returns the JSON object members of struct type t by the rules
// encoding/json and json v2 share: the fields of embedded structs (without
// a name in their json tag) are promoted; of the fields that have one JSON
// name, the one alone at the shallowest depth wins, else the one alone
// there whose json tag gives the name; when none wins, none is a member.
// clash is the first such name no field wins, and its fields; shared says
// whether some name had more than one field, or a struct field was
// inlined by json v2's embed option (which the schema generator does not
// know): either way the generator's view of t is not the decoder's.
func members(t reflect.Type) (ms []member, clash []member, shared bool) {
	type entry struct {
		t             reflect.Type
		index         []int
		path          string
		visitChildren bool
	}
	queue := []entry{{t, nil, "", true}}
	seen := map[reflect.Type]bool{t: true}
	byName := map[string][]member{}
	var names []string
	for i := 0; i < len(queue); i++ { // breadth first, as json v2
		e := queue[i]
		for j := range e.t.NumField() {
			sf := e.t.Field(j)
			tag, _ := sf.Tag.Lookup("json")
			if tag == "-" || (!sf.IsExported() && !sf.Anonymous) {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			index := append(e.index[:len(e.index):len(e.index)], j)
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if embedOpt := slices.Contains(strings.Split(opts, ","), "embed"); name == "" && (sf.Anonymous || embedOpt) && ft.Kind() == reflect.Struct {
				shared = shared || !sf.Anonymous
				if e.visitChildren {
					queue = append(queue, entry{ft, index, e.path + sf.Name + ".", !seen[ft]})
				}
				seen[ft] = true
				continue
			}
			if !sf.IsExported() && !(sf.Anonymous && ft.Kind() == reflect.Struct) {
				continue
			}
			m := member{name: name, path: e.path + sf.Name, tagged: name != ""}
			if name == "" {
				m.name = sf.Name
			}
			m.field = sf
			m.field.Index = index
			if byName[m.name] == nil {
				names = append(names, m.name)
			}
			byName[m.name] = append(byName[m.name], m)
		}
	}
	for _, name := range names {
		fields := byName[name]
		if len(fields) == 1 {
			ms = append(ms, fields[0])
			continue
		}
		shared = true
		slices.SortStableFunc(fields, func(x, y member) int {
			return cmp.Or(cmp.Compare(len(x.field.Index), len(y.field.Index)), compareBool(y.tagged, x.tagged))
		})
		if len(fields[0].field.Index) < len(fields[1].field.Index) || fields[0].tagged != fields[1].tagged {
			ms = append(ms, fields[0])
		} else if clash == nil {
			clash = fields
		}
	}
	slices.SortFunc(ms, func(x, y member) int { return slices.Compare(x.field.Index, y.field.Index) })
	return ms, clash, shared
}

func compareBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

// clashError is the error for struct type t, whose fields in clash share a
// JSON name and none wins: decoding would fill none of them, silently.
func clashError(t reflect.Type, clash []member) error {
	var ambiguous []string
	for _, m := range clash {
		if len(m.field.Index) == len(clash[0].field.Index) && m.tagged == clash[0].tagged {
			ambiguous = append(ambiguous, m.path)
		}
	}
	fix := "rename one in its json tag"
	if !clash[0].tagged {
		fix = fmt.Sprintf("tag the one to fill with `json:%q`, or rename one", clash[0].name)
	}
	return fmt.Errorf("type %s: fields %s have the same JSON name %q at the same depth, so by Go's rules neither would be filled; %s",
		t, strings.Join(ambiguous, " and "), clash[0].name, fix)
}

// schemaExtender is implemented by types that adjust the schema the
// generator made for them.
type schemaExtender interface {
	JSONSchemaExtend(*jsonschema.Schema)
}

var schemaExtenderType = reflect.TypeFor[schemaExtender]()

// flatSchema is the schema of struct type t when t has several fields of
// one JSON name, or a field with json v2's embed option (see members): the
// generator, which gives the last of several fields the name whatever Go's
// rules say, and publishes an embed field as a property, reflects instead
// a struct of only the fields that are t's JSON members. It is nil when t needs no such
// help, and an error when a JSON name has no field that wins.
func flatSchema(r *jsonschema.Reflector, t reflect.Type) (*jsonschema.Schema, error) {
	ms, clash, shared := members(t)
	if clash != nil {
		return nil, clashError(t, clash)
	}
	if !shared {
		return nil, nil
	}
	untagged := map[string]bool{}
	for _, m := range ms {
		if !m.tagged {
			untagged[m.name] = true
		}
	}
	fields := make([]reflect.StructField, 0, len(ms))
	for i, m := range ms {
		f := reflect.StructField{Name: m.name, Type: m.field.Type, Tag: m.field.Tag}
		if m.tagged { // the tag names it: any unique Go name will do
			f.Name = "F" + strconv.Itoa(i)
			for untagged[f.Name] {
				f.Name += "_"
			}
		}
		fields = append(fields, f)
	}
	s := r.ReflectFromType(reflect.StructOf(fields))
	s.Version = ""
	if t.Implements(schemaExtenderType) {
		reflect.New(t).Interface().(schemaExtender).JSONSchemaExtend(s)
	}
	return s, nil
}
