// Package lazyre compiles a package-level regular expression the first time
// it is used instead of in the package's initialiser.
//
// Every initialiser runs before main in every process that links the
// package, whether or not the expression is ever used: the date/time,
// web, remote and config packages' nine expressions cost 65 KB of heap and their
// compile time on every start-up, before the server can answer initialize,
// though most processes serve neither tool nor read a config file. The
// standard library does the same internally (internal/lazyregexp).
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call and returns
// the same *regexp.Regexp to every call. Like regexp.MustCompile, the first
// call panics if expr does not compile; a test that uses the expression
// catches that.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
