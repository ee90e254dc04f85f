package jsontmpl

// This file and call.go follow text/template's exec.go function by
// function (Go's BSD-licensed source), with reflect.Value replaced by value,
// so that the output, the errors and the node an error points at are
// text/template's.

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template/parse"
)

// state is one execution, or one {{template}} call within it.
type state struct {
	t    *Template
	name string      // the executing template's name
	tree *parse.Tree // and its tree
	w    io.Writer
	b    *budget
	node parse.Node // current node, for errors
	vars []variable // push-down stack of variable values
}

// variable is the value of a variable such as $, $x.
type variable struct {
	name  string
	value value
}

func (s *state) push(name string, v value) { s.vars = append(s.vars, variable{name, v}) }

func (s *state) mark() int { return len(s.vars) }

func (s *state) pop(mark int) { s.vars = s.vars[:mark] }

// setVar overwrites the last declared variable with the given name.
func (s *state) setVar(name string, v value) {
	s.vars[s.lookup(name)].value = v
}

// lookup returns the index of the last declared variable with the given
// name, charging a step per 8 variables it passes: a template can declare
// thousands.
func (s *state) lookup(name string) int {
	for i := s.mark() - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.step((s.mark() - i) / 8)
			return i
		}
	}
	s.errorf("undefined variable: %s", name)
	panic("not reached")
}

// setTopVar overwrites the top-nth variable on the stack.
func (s *state) setTopVar(n int, v value) { s.vars[len(s.vars)-n].value = v }

// varValue returns the value of the named variable.
func (s *state) varValue(name string) value {
	return s.vars[s.lookup(name)].value
}

// at marks the state to be on node n, for error reporting.
func (s *state) at(node parse.Node) { s.node = node }

// doublePercent returns str with %'s replaced by %%.
func doublePercent(str string) string { return strings.ReplaceAll(str, "%", "%%") }

// errorf stops the execution with an error that reads like text/template's.
func (s *state) errorf(format string, args ...any) {
	name := doublePercent(s.name)
	if s.node == nil {
		format = fmt.Sprintf("template: %s: %s", name, format)
	} else {
		location, context := s.tree.ErrorContext(s.node)
		format = fmt.Sprintf("template: %s: executing %q at <%s>: %s", location, name, doublePercent(context), format)
	}
	panic(execError{fmt.Errorf(format, args...)})
}

// control is how a walk ends: normally, or at a {{break}} or {{continue}}
// that the enclosing range handles. (text/template panics for these; a
// panic that each range level recovers and raises again makes unwinding an
// error through deep recursion quadratic.)
type control uint8

const (
	normal control = iota
	breakLoop
	continueLoop
)

// walk executes node with dot, writing its output. It is a frame of
// execution (see MaxDepth).
func (s *state) walk(dot value, node parse.Node) control {
	s.at(node)
	s.step(1)
	s.enter()
	c := normal
	switch node := node.(type) {
	case *parse.ActionNode:
		// Variables persist until the next end; an action that declares
		// some prints nothing.
		val := s.evalPipeline(dot, node.Pipe)
		if len(node.Pipe.Decl) == 0 {
			s.printValue(node, val)
		}
	case *parse.BreakNode:
		c = breakLoop
	case *parse.CommentNode:
	case *parse.ContinueNode:
		c = continueLoop
	case *parse.IfNode:
		c = s.walkIfOrWith(parse.NodeIf, dot, node.Pipe, node.List, node.ElseList)
	case *parse.ListNode:
		for _, node := range node.Nodes {
			if c = s.walk(dot, node); c != normal {
				break
			}
		}
	case *parse.RangeNode:
		c = s.walkRange(dot, node)
	case *parse.TemplateNode:
		s.walkTemplate(dot, node)
	case *parse.TextNode:
		s.write(node.Text)
	case *parse.WithNode:
		c = s.walkIfOrWith(parse.NodeWith, dot, node.Pipe, node.List, node.ElseList)
	default:
		s.errorf("unknown node: %s", node)
	}
	s.leave()
	return c
}

// walkIfOrWith walks an if or a with; a with sets dot.
func (s *state) walkIfOrWith(typ parse.NodeType, dot value, pipe *parse.PipeNode, list, elseList *parse.ListNode) control {
	defer s.pop(s.mark())
	val := s.evalPipeline(dot, pipe)
	if truth(val) {
		if typ == parse.NodeWith {
			return s.walk(val, list)
		}
		return s.walk(dot, list)
	} else if elseList != nil {
		return s.walk(dot, elseList)
	}
	return normal
}

// walkRange walks a range over a slice, a map (in key order) or an
// integer. A {{continue}} in its else list continues the enclosing range,
// and a {{break}} there ends only this one, as in text/template.
func (s *state) walkRange(dot value, r *parse.RangeNode) control {
	s.at(r)
	defer s.pop(s.mark())
	val := s.evalPipeline(dot, r.Pipe).elem()
	// mark top of stack before any variables in the body are pushed.
	mark := s.mark()
	// oneIteration walks the body once and reports whether to go on.
	oneIteration := func(index, elem value) bool {
		s.step(1)
		if len(r.Pipe.Decl) > 0 {
			if r.Pipe.IsAssign {
				// With two variables, index comes first; with one, the
				// element.
				if len(r.Pipe.Decl) > 1 {
					s.setVar(r.Pipe.Decl[0].Ident[0], index)
				} else {
					s.setVar(r.Pipe.Decl[0].Ident[0], elem)
				}
			} else {
				// Set top var (lexically the second if there are two) to
				// the element.
				s.setTopVar(1, elem)
			}
		}
		if len(r.Pipe.Decl) > 1 {
			if r.Pipe.IsAssign {
				s.setVar(r.Pipe.Decl[1].Ident[0], elem)
			} else {
				s.setTopVar(2, index)
			}
		}
		defer s.pop(mark)
		return s.walk(elem, r.List) != breakLoop
	}
	switch x := val.x.(type) {
	case int, int64, uint8:
		if len(r.Pipe.Decl) > 1 {
			s.errorf("can't use %v to iterate over more than one variable", x)
			break
		}
		if !rangeInt(x, func(v value) bool { return oneIteration(value{}, v) }) {
			break
		}
		return normal
	case []any:
		if len(x) == 0 {
			break
		}
		for i := range x {
			if !oneIteration(value{x: i}, value{x: x[i], iface: true}) {
				break
			}
		}
		return normal
	case map[string]any:
		if len(x) == 0 {
			break
		}
		s.step(len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !oneIteration(value{x: k}, value{x: x[k], iface: true}) {
				break
			}
		}
		return normal
	case nil:
		// The zero value, like a nil map: nothing to iterate over.
	default:
		s.errorf("range can't iterate over %v", x)
	}
	if r.ElseList != nil && s.walk(dot, r.ElseList) == continueLoop {
		return continueLoop
	}
	return normal
}

// rangeInt calls f with 0 to n-1, as values of n's type, while f returns
// true, and reports whether n was positive.
func rangeInt(n any, f func(value) bool) bool {
	switch n := n.(type) {
	case int:
		for i := 0; i < n && f(value{x: i}); i++ {
		}
		return n > 0
	case int64:
		for i := int64(0); i < n && f(value{x: i}); i++ {
		}
		return n > 0
	case uint8:
		for i := uint8(0); i < n && f(value{x: i}); i++ {
		}
		return n > 0
	}
	return false
}

// walkTemplate walks a {{template}} call.
func (s *state) walkTemplate(dot value, t *parse.TemplateNode) {
	s.at(t)
	tree := s.t.trees[t.Name]
	if tree == nil {
		s.errorf("template %q not defined", t.Name)
	}
	// Variables declared by the pipeline persist.
	dot = s.evalPipeline(dot, t.Pipe)
	newState := *s
	newState.name = t.Name
	newState.tree = tree
	// No dynamic scoping: template invocations inherit no variables.
	newState.vars = []variable{{"$", dot}}
	newState.walk(dot, tree.Root)
}

// evalPipeline returns the value of a pipeline, and pushes (or sets) the
// variables it declares: callers pop them when done. It is a frame of
// execution (see MaxDepth): parenthesized pipelines nest.
func (s *state) evalPipeline(dot value, pipe *parse.PipeNode) value {
	if pipe == nil {
		return value{}
	}
	s.at(pipe)
	s.enter()
	defer s.leave()
	val := missing
	for _, cmd := range pipe.Cmds {
		val = s.evalCommand(dot, cmd, val) // previous value is this one's final arg.
		// If the value is an interface{}, dig down one level to the thing
		// inside.
		if val.iface {
			val = val.elem()
		}
	}
	for _, variable := range pipe.Decl {
		if pipe.IsAssign {
			s.setVar(variable.Ident[0], val)
		} else {
			s.push(variable.Ident[0], val)
		}
	}
	return val
}

func (s *state) notAFunction(args []parse.Node, final value) {
	if len(args) > 1 || !final.isMissing() {
		s.errorf("can't give argument to non-function %s", args[0])
	}
}

func (s *state) evalCommand(dot value, cmd *parse.CommandNode, final value) value {
	s.step(1)
	firstWord := cmd.Args[0]
	switch n := firstWord.(type) {
	case *parse.FieldNode:
		return s.evalFieldNode(dot, n, cmd.Args, final)
	case *parse.ChainNode:
		return s.evalChainNode(dot, n, cmd.Args, final)
	case *parse.IdentifierNode:
		// Must be a function.
		return s.evalFunction(dot, n, cmd, cmd.Args, final)
	case *parse.PipeNode:
		// Parenthesized pipeline. The arguments are all inside the
		// pipeline; final must be absent.
		s.notAFunction(cmd.Args, final)
		return s.evalPipeline(dot, n)
	case *parse.VariableNode:
		return s.evalVariableNode(dot, n, cmd.Args, final)
	}
	s.at(firstWord)
	s.notAFunction(cmd.Args, final)
	switch word := firstWord.(type) {
	case *parse.BoolNode:
		return value{x: word.True}
	case *parse.DotNode:
		return dot
	case *parse.NilNode:
		s.errorf("nil is not a command")
	case *parse.NumberNode:
		return s.idealConstant(word)
	case *parse.StringNode:
		return value{x: word.Text}
	}
	s.errorf("can't evaluate command %q", firstWord)
	panic("not reached")
}

// idealConstant is the value of a number whose type the context does not
// tell: its syntax does, as in Go (there is no uint constant).
func (s *state) idealConstant(constant *parse.NumberNode) value {
	s.at(constant)
	switch {
	case constant.IsComplex:
		return value{x: constant.Complex128}
	case constant.IsFloat &&
		!isHexInt(constant.Text) && !isRuneInt(constant.Text) &&
		strings.ContainsAny(constant.Text, ".eEpP"):
		return value{x: constant.Float64}
	case constant.IsInt:
		n := int(constant.Int64)
		if int64(n) != constant.Int64 {
			s.errorf("%s overflows int", constant.Text)
		}
		return value{x: n}
	case constant.IsUint:
		s.errorf("%s overflows int", constant.Text)
	}
	return value{}
}

func isRuneInt(s string) bool { return len(s) > 0 && s[0] == '\'' }

func isHexInt(s string) bool {
	return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && !strings.ContainsAny(s, "pP")
}

func (s *state) evalFieldNode(dot value, field *parse.FieldNode, args []parse.Node, final value) value {
	s.at(field)
	return s.evalFieldChain(dot, dot, field, field.Ident, args, final)
}

func (s *state) evalChainNode(dot value, chain *parse.ChainNode, args []parse.Node, final value) value {
	s.at(chain)
	if len(chain.Field) == 0 {
		s.errorf("internal error: no fields in evalChainNode")
	}
	if chain.Node.Type() == parse.NodeNil {
		s.errorf("indirection through explicit nil in %s", chain)
	}
	// (pipe).Field1.Field2 has pipe as .Node, fields as .Field. Eval the
	// pipeline, then the fields.
	pipe := s.evalArg(dot, pNone, chain.Node)
	return s.evalFieldChain(dot, pipe, chain, chain.Field, args, final)
}

func (s *state) evalVariableNode(dot value, variable *parse.VariableNode, args []parse.Node, final value) value {
	// $x.Field has $x as the first ident, Field as the second.
	s.at(variable)
	v := s.varValue(variable.Ident[0])
	if len(variable.Ident) == 1 {
		s.notAFunction(args, final)
		return v
	}
	return s.evalFieldChain(dot, v, variable, variable.Ident[1:], args, final)
}

// evalFieldChain evaluates .X.Y.Z possibly followed by arguments. dot is
// the environment in which to evaluate arguments, while receiver is the
// value being walked along the chain.
func (s *state) evalFieldChain(dot, receiver value, node parse.Node, ident []string, args []parse.Node, final value) value {
	n := len(ident)
	for i := 0; i < n-1; i++ {
		receiver = s.evalField(dot, ident[i], node, nil, missing, receiver)
	}
	// Now if it's a method, it gets the arguments.
	return s.evalField(dot, ident[n-1], node, args, final, receiver)
}

func (s *state) evalFunction(dot value, node *parse.IdentifierNode, cmd parse.Node, args []parse.Node, final value) value {
	s.at(node)
	name := node.Ident
	f, ok := builtin(name)
	if !ok {
		s.errorf("%q is not a defined function", name)
	}
	return s.evalCall(dot, f, true, cmd, name, args, final)
}

// evalField evaluates .Field or .Field arg1 arg2 on receiver: a field of
// the root, an entry of a map, or a method of json.Number. final is the
// value of the pipeline's previous command, if any.
func (s *state) evalField(dot value, fieldName string, node parse.Node, args []parse.Node, final, receiver value) value {
	s.step(1)
	if !receiver.valid() {
		// missingkey=error treats the zero value as a missing map key.
		s.errorf("nil data; no entry for key %q", fieldName)
	}
	typ := receiver.typeName()
	if receiver.isNilIface() {
		s.errorf("nil pointer evaluating %s.%s", typ, fieldName)
	}
	receiver = receiver.elem()
	if n, ok := receiver.x.(jsonNumber); ok {
		if m, ok := numberMethod(n, fieldName); ok {
			return s.evalCall(dot, m, false, node, fieldName, args, final)
		}
	}
	hasArgs := len(args) > 1 || !final.isMissing()
	switch x := receiver.x.(type) {
	case root:
		if fieldName == "Text" || fieldName == "Structured" {
			if hasArgs {
				s.errorf("%s has arguments but cannot be invoked as function", fieldName)
			}
			if fieldName == "Text" {
				return value{x: x.Text}
			}
			return value{x: x.Structured, iface: true}
		}
	case map[string]any:
		if hasArgs {
			s.errorf("%s is not a method but has arguments", fieldName)
		}
		e, ok := x[fieldName]
		if !ok {
			s.errorf("map has no entry for key %q", fieldName)
		}
		return value{x: e, iface: true}
	}
	s.errorf("can't evaluate field %s in type %s", fieldName, typ)
	panic("not reached")
}

// printValue writes a value's text to the output.
func (s *state) printValue(n parse.Node, v value) {
	s.at(n)
	s.write([]byte(fmt.Sprint(printable(v))))
}
