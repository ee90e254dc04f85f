package tools

import "encoding/json"

// Middleware wraps a tool's call with behaviour of its own (logging, limits,
// approval...). It is applied once, when the server is built; info is the
// descriptor of the tool being wrapped, so per-tool work (compiling a schema,
// picking a limit) happens there and not on every call.
type Middleware func(info Info, next Func) Func

// Chain applies mws to fn so that mws[0] is the outermost: it runs first and
// sees the final result last.
func Chain(info Info, fn Func, mws ...Middleware) Func {
	for i := len(mws) - 1; i >= 0; i-- {
		fn = mws[i](info, fn)
	}
	return fn
}

// Wrap returns t with mws applied to its calls (see Chain). Its descriptor
// is t's.
func Wrap(t Tool, mws ...Middleware) Tool {
	if len(mws) == 0 {
		return t
	}
	info := t.Info()
	return &funcTool{info: info, fn: Chain(info, t.Call, mws...)}
}

// Arguments decodes args into v. It is a convenience for tools that take an
// object; a decoding failure is an invalid-arguments error.
func Arguments(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return InvalidArgs("cannot decode arguments: %v", err)
	}
	return nil
}
