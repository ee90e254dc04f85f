package jsontmpl

import "fmt"

// The limits of one Execute. text/template has none but MaxDepth (100000
// there); these keep a template from hanging or exhausting the process. A
// template is configuration, written by the operator; the data it runs on
// is a tool's output and may be large.
const (
	// MaxOutput is the most bytes Execute writes.
	MaxOutput = 1 << 20
	// MaxSteps is the most steps an execution takes: every node walked,
	// command evaluated and range iteration is one, and a range over a map
	// also costs its length (its keys are sorted).
	MaxSteps = 1 << 22
	// MaxMadeBytes is the most bytes of strings that print, printf,
	// println, html, js and urlquery make in one execution, so that a
	// variable cannot double its way to exhausting memory.
	MaxMadeBytes = 16 << 20
	// MaxDepth is the most nested {{template}} calls.
	MaxDepth = 1000
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
		return fmt.Sprintf("exceeded maximum template depth (%d)", e.Max)
	case "output":
		return fmt.Sprintf("output exceeds %d bytes", e.Max)
	case "made bytes":
		return fmt.Sprintf("functions made more than %d bytes of strings", e.Max)
	default:
		return fmt.Sprintf("exceeded maximum of %d %s", e.Max, e.Limit)
	}
}

// budget is what one execution has used so far of its limits; the states
// of nested template calls share it.
type budget struct {
	out, steps, made int
}

// step charges n steps.
func (s *state) step(n int) {
	s.b.steps += n
	if s.b.steps > MaxSteps {
		s.errorf("%w", &LimitError{Limit: "steps", Max: MaxSteps})
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
