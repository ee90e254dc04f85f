package jsontmpl

import (
	"context"
	"fmt"
)

// The limits of one Execute. text/template has none but a depth of
// template calls (100000 there); these keep a template from hanging or
// exhausting the process, whatever the data. A template is configuration,
// written by the operator; the data it runs on is a tool's output, may be
// large and may be chosen by someone else (a web page), so every cost that
// grows with the data is charged to one of them.
const (
	// MaxTemplateBytes is the longest template text Parse accepts: an
	// adapter's template is a few lines, and the parser's recursion
	// follows the text's nesting.
	MaxTemplateBytes = 64 << 10
	// MaxOutput is the most bytes Execute writes.
	MaxOutput = 1 << 20
	// MaxSteps is the most steps an execution takes. A step is about a
	// constant amount of work: every node walked, command evaluated,
	// argument evaluated, field looked up and range iteration is one; a
	// range over a map also costs its length (its keys are sorted); a
	// string comparison costs one per 4 KiB compared; looking a variable
	// up costs one per 8 variables passed; and print, printf, println,
	// html, js and urlquery cost one per value (element, entry) in their
	// arguments, which they measure before formatting. A template that
	// prints two fields of each of 100,000 items takes about 1.5 million.
	MaxSteps = 1 << 22
	// MaxMadeBytes is the most bytes of strings that print, printf,
	// println, html, js and urlquery make in one execution, so that a
	// variable cannot double its way to exhausting memory. Before
	// formatting, each call checks an upper bound of what it will make
	// (its arguments' printed sizes, printf's widths and precisions)
	// against what is left, so no call builds more than that.
	MaxMadeBytes = 16 << 20
	// MaxDepth is the most frames of execution active at once: every node
	// being walked (list, action, if, with, range, template call) and every
	// pipeline being evaluated (parenthesized ones nest) is one. A
	// {{template}} call inside n nested ifs takes about 2n+3, a recursive
	// template over nested data about 4 per level of the data. It bounds
	// the goroutine's stack (at most 16 MB for the deepest nestings
	// measured, see TestDepthStack), since a stack overflow cannot be
	// recovered from and kills the process.
	MaxDepth = 10000
)

// LimitError reports that an execution went past one of its limits.
type LimitError struct {
	Limit string // "output", "steps", "made bytes" or "depth"
	Max   int    // the limit's value
}

// Error says which limit was exceeded.
func (e *LimitError) Error() string {
	switch e.Limit {
	case "depth":
		return fmt.Sprintf("exceeded maximum nesting depth (%d)", e.Max)
	case "output":
		return fmt.Sprintf("output exceeds %d bytes", e.Max)
	case "made bytes":
		return fmt.Sprintf("functions made more than %d bytes of strings", e.Max)
	default:
		return fmt.Sprintf("exceeded maximum of %d %s", e.Max, e.Limit)
	}
}

// ctxCheckSteps is how many steps pass between checks of the context.
const ctxCheckSteps = 1024

// budget is what one execution has used so far of its limits; the states
// of nested template calls share it. It holds the execution's context,
// checked every ctxCheckSteps steps, for as long as Execute runs.
type budget struct {
	ctx       context.Context
	out, made int
	steps     int
	nextCheck int // the step count at which to check ctx next
	depth     int // the frames active now
}

// step charges n steps, and stops the execution when its context is done.
func (s *state) step(n int) {
	s.b.steps += n
	if s.b.steps > MaxSteps {
		s.errorf("%w", &LimitError{Limit: "steps", Max: MaxSteps})
	}
	if s.b.steps >= s.b.nextCheck {
		s.b.nextCheck = s.b.steps + ctxCheckSteps
		if err := s.b.ctx.Err(); err != nil {
			s.errorf("%w", err)
		}
	}
}

// enter charges a frame of execution; leave gives it back. An error ends
// the execution, so a frame left by a panic needs no leave.
func (s *state) enter() {
	s.b.depth++
	if s.b.depth > MaxDepth {
		s.errorf("%w", &LimitError{Limit: "depth", Max: MaxDepth})
	}
}

func (s *state) leave() { s.b.depth-- }

// reserve stops the execution if a function that may make up to n bytes
// of string would go past MaxMadeBytes: functions call it before they
// build a string, and made after.
func (s *state) reserve(n int) {
	if n > MaxMadeBytes-s.b.made {
		s.errorf("%w", &LimitError{Limit: "made bytes", Max: MaxMadeBytes})
	}
}

// made charges the bytes of a string a function made.
func (s *state) made(str string) {
	s.b.made += len(str)
	if s.b.made > MaxMadeBytes {
		s.errorf("%w", &LimitError{Limit: "made bytes", Max: MaxMadeBytes})
	}
}

// write writes p to the output, within MaxOutput.
func (s *state) write(p []byte) {
	if s.b.out+len(p) > MaxOutput {
		s.errorf("%w", &LimitError{Limit: "output", Max: MaxOutput})
	}
	s.b.out += len(p)
	if _, err := s.w.Write(p); err != nil {
		panic(writeError{err})
	}
}
