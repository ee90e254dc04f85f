package jsontmpl

import "text/template/parse"

// param is the type of a function's parameter, among those text/template's
// builtins and json.Number's methods have.
type param uint8

const (
	pNone   param = iota // no type: the operand of a chain (.Field after a term)
	pValue               // reflect.Value: the argument as it is
	pAny                 // interface{}
	pString              // string
)

// String is the parameter type's name.
func (p param) String() string {
	switch p {
	case pValue:
		return "reflect.Value"
	case pAny:
		return "interface {}"
	case pString:
		return "string"
	}
	return "<nil>"
}

// canBeNil reports whether an untyped nil can be assigned to the type.
func (p param) canBeNil() bool { return p == pValue || p == pAny }

// fn is a function: a builtin or a method of json.Number.
type fn struct {
	in       []param // the fixed parameters
	variadic param   // the type of the ... parameter's elements; pNone if none
	call     func(s *state, args []value) (value, error)
}

// evalCall calls f with args (args[0] is the function's own node, as in
// text/template) and final, the previous command's value, if any.
func (s *state) evalCall(dot value, f fn, isBuiltin bool, node parse.Node, name string, args []parse.Node, final value) value {
	if args != nil {
		args = args[1:] // Zeroth arg is function name/node; not passed to function.
	}
	numIn := len(args)
	if !final.isMissing() {
		numIn++
	}
	numFixed := len(args)
	if f.variadic != pNone {
		numFixed = len(f.in)
		if numIn < numFixed {
			s.errorf("wrong number of args for %s: want at least %d got %d", name, len(f.in), len(args))
		}
	} else if numIn != len(f.in) {
		s.errorf("wrong number of args for %s: want %d got %d", name, len(f.in), numIn)
	}

	// and and or short-circuit.
	if isBuiltin && (name == "and" || name == "or") {
		var v value
		for _, arg := range args {
			v = s.evalArg(dot, pValue, arg)
			if truth(v) == (name == "or") {
				return v
			}
		}
		if !final.isMissing() {
			// The last argument comes from the pipeline; no earlier one
			// decided, so it is the result.
			v = s.validateType(final, pValue)
		}
		return v
	}

	// Build the arg list: fixed args first, then the ... args, then final.
	argv := make([]value, numIn)
	i := 0
	for ; i < numFixed && i < len(args); i++ {
		argv[i] = s.evalArg(dot, f.in[i], args[i])
	}
	if f.variadic != pNone {
		for ; i < len(args); i++ {
			argv[i] = s.evalArg(dot, f.variadic, args[i])
		}
	}
	if !final.isMissing() {
		var t param
		switch {
		case f.variadic == pNone:
			t = f.in[len(f.in)-1]
		case numIn-1 < numFixed:
			// The final argument is a fixed parameter of the function.
			t = f.in[numIn-1]
		default:
			t = f.variadic
		}
		argv[i] = s.validateType(final, t)
	}

	call := f.call
	if isBuiltin && name == "call" {
		// The callee's name comes first.
		var calleeName string
		if len(args) == 0 {
			calleeName = final.String()
		} else {
			calleeName = args[0].String()
		}
		call = func(*state, []value) (value, error) { return callFunc(calleeName, argv[0]) }
	}
	// A limit the call reaches is the call's error, not its last
	// argument's; after the call, errors point where text/template's do.
	last := s.node
	s.at(node)
	v, err := call(s, argv)
	if err != nil {
		s.errorf("error calling %s: %w", name, err)
	}
	s.at(last)
	return v
}

// validateType checks that v may be passed as a parameter of type t, and
// returns what is passed.
func (s *state) validateType(v value, t param) value {
	if !v.valid() {
		switch t {
		case pNone, pValue:
			return value{}
		case pAny:
			return value{iface: true}
		}
		s.errorf("invalid value; expected %s", t)
	}
	if t != pString {
		return v
	}
	if _, ok := v.x.(string); ok && !v.iface {
		return v
	}
	if v.iface && v.x != nil {
		v = v.elem()
		if _, ok := v.x.(string); ok {
			return v
		}
	}
	s.errorf("wrong type for value; expected %s; got %s", t, v.typeName())
	panic("not reached")
}

// evalArg evaluates n as an argument of type t.
func (s *state) evalArg(dot value, t param, n parse.Node) value {
	s.at(n)
	s.step(1)
	switch arg := n.(type) {
	case *parse.DotNode:
		return s.validateType(dot, t)
	case *parse.NilNode:
		if t.canBeNil() {
			return s.validateType(value{}, t)
		}
		s.errorf("cannot assign nil to %s", t)
	case *parse.FieldNode:
		return s.validateType(s.evalFieldNode(dot, arg, []parse.Node{n}, missing), t)
	case *parse.VariableNode:
		return s.validateType(s.evalVariableNode(dot, arg, nil, missing), t)
	case *parse.PipeNode:
		return s.validateType(s.evalPipeline(dot, arg), t)
	case *parse.IdentifierNode:
		return s.validateType(s.evalFunction(dot, arg, arg, nil, missing), t)
	case *parse.ChainNode:
		return s.validateType(s.evalChainNode(dot, arg, nil, missing), t)
	}
	switch t {
	case pString:
		return s.evalString(n)
	case pAny, pValue:
		return s.evalEmptyInterface(dot, n)
	}
	s.errorf("can't handle %s for arg of type %s", n, t)
	panic("not reached")
}

func (s *state) evalString(n parse.Node) value {
	s.at(n)
	if n, ok := n.(*parse.StringNode); ok {
		return value{x: n.Text}
	}
	s.errorf("expected string; found %s", n)
	panic("not reached")
}

func (s *state) evalEmptyInterface(dot value, n parse.Node) value {
	s.at(n)
	switch n := n.(type) {
	case *parse.BoolNode:
		return value{x: n.True}
	case *parse.DotNode:
		return dot
	case *parse.FieldNode:
		return s.evalFieldNode(dot, n, nil, missing)
	case *parse.IdentifierNode:
		return s.evalFunction(dot, n, n, nil, missing)
	case *parse.NilNode:
		s.errorf("evalEmptyInterface: nil (can't happen)")
	case *parse.NumberNode:
		return s.idealConstant(n)
	case *parse.StringNode:
		return value{x: n.Text}
	case *parse.VariableNode:
		return s.evalVariableNode(dot, n, nil, missing)
	case *parse.PipeNode:
		return s.evalPipeline(dot, n)
	}
	s.errorf("can't handle assignment of %s to empty interface argument", n)
	panic("not reached")
}
