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

// Hidden is what a secret argument's value is replaced by wherever
// arguments are shown: logs, approval questions, webhooks.
const Hidden = "[hidden]"

// Redact returns args with the values of the named top-level fields (a
// tool's Info.Secret) replaced by Hidden. Arguments that are not an object,
// or hold none of the fields, are returned as they are.
func Redact(args json.RawMessage, secret []string) json.RawMessage {
	if len(secret) == 0 {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	changed := false
	for _, k := range secret {
		if _, ok := m[k]; ok {
			m[k] = json.RawMessage(`"` + Hidden + `"`)
			changed = true
		}
	}
	if !changed {
		return args
	}
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}
