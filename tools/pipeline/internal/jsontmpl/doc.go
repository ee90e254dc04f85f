// Package jsontmpl executes text/template templates over one fixed shape of
// data, a step's text and its structured output decoded as plain JSON
// values, without text/template's executor.
//
// Why: text/template's executor looks methods up by name at run time
// (reflect.Value.MethodByName with a name read from the template). When such
// a call is reachable, Go's linker keeps every exported method of every type
// converted to an interface, which made the server binary about a third
// larger. Here the data's types form a closed set (see Data), so fields, map
// keys and the three methods of json.Number are resolved by type switches,
// and no method is looked up by name.
//
// Templates are parsed by text/template/parse with text/template's builtin
// function names, so the syntax and the parse errors are text/template's.
// Execution follows text/template with Option("missingkey=error"): the same
// output, and the same error texts (template: NAME:LINE:COL: executing ...),
// for the data shape it accepts. Unlike text/template, an execution has
// limits (MaxOutput, MaxSteps, MaxMadeBytes, MaxDepth) so that no template
// on any data can hang or exhaust the process that runs it; going past one
// is an error that wraps a *LimitError. Parse refuses a text longer than
// MaxTemplateBytes, and Execute stops when its context is done.
//
// The builtin functions are text/template's: and, or, not, len, index,
// slice, print, printf, println, eq, ne, lt, le, gt, ge, html, js, urlquery
// and call (which always fails: the data holds no functions). The only
// methods are json.Number's String, Float64 and Int64, as in text/template.
package jsontmpl
