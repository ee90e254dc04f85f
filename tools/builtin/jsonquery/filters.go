package jsonquery

import (
	"fmt"
	"reflect"
	"regexp/syntax"

	"github.com/theory/jsonpath/spec"

	"github.com/mcp-tools/mcp-tools/tools"
)

// The queries inside a filter ([?count(@..x) > 1], [?@.a[*]]) are run by
// the library, once for every value the filter tests, with no cap and no
// look at ctx: a query of the wrong shape there grows polynomially or
// exponentially with the document (three .. segments cost the depth cubed
// for every value; ten [0,0,…] segments select 10¹⁰ values, and the process
// runs out of memory). checkFilters refuses such shapes before the query
// runs, so that one test of a filter costs at most a few passes over the
// document:
//
//   - a query in a filter of the path has at most one descendant segment
//     (..), and its segments multiply the values selected at most
//     maxFilterFanout times (['a','b'] counts 2, [*] and [?…] count 1);
//   - inside a filter of such a query (a filter in a filter's query), which
//     the library tests once per value of that query, a query starts at @,
//     has no descendant segment and one selector per segment (or is
//     singular: $.limit), and match() and search() take a literal pattern
//     of at most maxNestedPattern bytes that compiles to at most
//     maxNestedProgram instructions ([a-z]{1000} is 11 bytes and a
//     thousand instructions), at most maxNestedRegexps times in the path:
//     the library compiles the pattern at every test.
const (
	maxFilterFanout  = 4
	maxNestedPattern = 64
	maxNestedProgram = 100
	maxNestedRegexps = 2
)

// Some of what checkFilters needs of the library's types (a function's
// arguments, a comparison's operands) is unexported, so the parsed query is
// read through reflect, which reads unexported fields but cannot change
// them. The types are named where they are used (reflect.TypeFor is a
// constant's load), not in package variables, which would run at every
// start of the server.

// checkFilters returns an invalid-arguments error when a filter of q runs a
// query of a shape that may cost more than a few passes over the document
// (see maxFilterFanout).
func checkFilters(q *spec.PathQuery) error {
	var c filterCheck
	return c.query(reflect.ValueOf(q).Elem(), 0)
}

// filterCheck is one run of checkFilters.
type filterCheck struct {
	regexps int // match() and search() calls at level 2 and more
}

// shape is what checkFilters needs to know of a query.
type shape struct {
	descendants int
	fanout      int  // the product of the segments' selector counts
	singular    bool // one name or index per segment, no descendants
	root        bool // starts at $
	filters     []reflect.Value
}

func shapeOf(q reflect.Value) shape {
	s := shape{fanout: 1, singular: true, root: field(q, reflect.TypeFor[bool]()).Bool()}
	segs := field(q, reflect.TypeFor[[]*spec.Segment]())
	for i := range segs.Len() {
		seg := segs.Index(i).Elem()
		if field(seg, reflect.TypeFor[bool]()).Bool() {
			s.descendants++
			s.singular = false
		}
		sels := field(seg, reflect.TypeFor[[]spec.Selector]())
		s.fanout = min(s.fanout*sels.Len(), 1<<20)
		if sels.Len() != 1 {
			s.singular = false
		}
		for j := range sels.Len() {
			sel := sels.Index(j).Elem()
			if t := sel.Type(); t != reflect.TypeFor[spec.Name]() && t != reflect.TypeFor[spec.Index]() {
				s.singular = false
			}
			if sel.Kind() == reflect.Pointer && sel.Type().Elem() == reflect.TypeFor[spec.FilterSelector]() {
				s.filters = append(s.filters, sel.Elem())
			}
		}
	}
	return s
}

// checkQuery checks q, a spec.PathQuery at the given level: 0 for the
// path, 1 for a query in a filter of it, 2 and more inside filters of
// those.
func (c *filterCheck) query(q reflect.Value, level int) error {
	s := shapeOf(q)
	switch {
	case level == 0 || s.singular:
	case level == 1 && s.descendants > 1:
		return tools.InvalidArgs("a query inside a filter may have one descendant segment (..) at most; this one has %d, and its cost would grow with the document's depth to the power %d", s.descendants, s.descendants)
	case level == 1 && s.fanout > maxFilterFanout:
		return tools.InvalidArgs("a query inside a filter multiplies the values it selects by %d, and the limit is %d (['a','b'] counts 2): give fewer selectors per segment", s.fanout, maxFilterFanout)
	case level >= 2 && (s.root || s.descendants > 0 || s.fanout > 1):
		return tools.InvalidArgs("a query inside a filter that is itself in a filter's query is run for every value tested, so it must start at @, with no descendant segment (..) and one selector per segment (or be singular, like $.limit)")
	}
	for _, f := range s.filters {
		if err := c.expr(f, level+1); err != nil {
			return err
		}
	}
	return nil
}

// checkExpr checks each query and function call in v, a part of a filter
// expression whose queries are at level.
func (c *filterCheck) expr(v reflect.Value, level int) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() || v.Type() == reflect.TypeFor[*spec.FuncExtension]() {
			return nil
		}
		return c.expr(v.Elem(), level)
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeFor[spec.PathQuery]():
			return c.query(v, level)
		case reflect.TypeFor[spec.FuncExpr]():
			if err := c.function(v, level); err != nil {
				return err
			}
		}
		for i := range v.NumField() {
			if err := c.expr(v.Field(i), level); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := c.expr(v.Index(i), level); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFunc checks a call of match() or search() inside a filter of a
// filter's query: the library compiles its pattern at every test.
func (c *filterCheck) function(fe reflect.Value, level int) error {
	if level < 2 {
		return nil
	}
	name := field(field(fe, reflect.TypeFor[*spec.FuncExtension]()).Elem(), reflect.TypeFor[string]()).String()
	if name != "match" && name != "search" {
		return nil
	}
	if c.regexps++; c.regexps > maxNestedRegexps {
		return tools.InvalidArgs("a path may make at most %d match() or search() calls inside filters of filters' queries (each is compiled for every value tested); this one makes more", maxNestedRegexps)
	}
	args := field(fe, reflect.TypeFor[[]spec.FuncExprArg]())
	if args.Len() == 2 {
		if a := args.Index(1).Elem(); a.IsValid() && a.Type() == reflect.TypeFor[*spec.LiteralArg]() && !a.IsNil() {
			if lit := a.Elem().Field(0).Elem(); lit.Kind() == reflect.String && lit.Len() <= maxNestedPattern && smallProgram(lit.String()) {
				return nil
			}
		}
	}
	return tools.InvalidArgs("%s() inside a filter that is itself in a filter's query is compiled for every value tested, and needs a literal pattern of at most %d bytes that compiles to at most %d instructions (no large repeats like {1000})", name, maxNestedPattern, maxNestedProgram)
}

// smallProgram reports whether the regular expression pattern compiles to
// at most maxNestedProgram instructions. An invalid pattern is small: the
// library's match() and search() are false for it, at once.
func smallProgram(pattern string) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return true
	}
	prog, err := syntax.Compile(re.Simplify())
	return err == nil && len(prog.Inst) <= maxNestedProgram
}

// field returns the first field of the struct v of type t. The library's
// types are pinned by go.mod; a change there that this does not know
// fails every test that uses a filter.
func field(v reflect.Value, t reflect.Type) reflect.Value {
	for i := range v.NumField() {
		if v.Field(i).Type() == t {
			return v.Field(i)
		}
	}
	panic(fmt.Sprintf("jsonquery: %s has no field of type %s: the jsonpath library changed", v.Type(), t))
}
