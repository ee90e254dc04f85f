package tools

import (
	"encoding/json"
	"strings"
)

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
// is t's, governance included, and a Composite stays one (mws wrap its
// CallWith too).
func Wrap(t Tool, mws ...Middleware) Tool {
	if len(mws) == 0 {
		return t
	}
	info := t.Info()
	if c, ok := t.(Composite); ok {
		return wrapComposite(&composite{info: info, c: c, mws: mws})
	}
	return &funcTool{info: info, fn: Chain(info, t.Call, mws...)}
}

// Hidden is what a secret argument's value is replaced by wherever
// arguments are shown: logs, approval questions, webhooks.
const Hidden = "[hidden]"

// IsSecret reports whether an argument called name is one of secret (a
// tool's Info.Secret). Names are compared ignoring case (Unicode case
// folding): a decoder that matches names case-insensitively, as
// encoding/json does, would hand "TOKEN" to a "token" field, so a case
// variant of a secret name is treated as the secret too.
func IsSecret(name string, secret []string) bool {
	for _, s := range secret {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// Redact returns args with the values of the secret top-level fields (a
// tool's Info.Secret, matched as IsSecret does, so "TOKEN" is hidden when
// "token" is secret) replaced by Hidden. Every field of that name is
// hidden, a repeated one too. Arguments that are not an object, or hold
// none of the fields, are returned as they are.
func Redact(args json.RawMessage, secret []string) json.RawMessage {
	if len(secret) == 0 {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	changed := false
	for k := range m {
		if IsSecret(k, secret) {
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

// ShowArgs renders a call's arguments whole, as ShowArgsN does with no
// bound: for a plain tool (info.Plain) the "input" string itself, for any
// other tool the arguments as they are, with the value of each secret
// top-level field (info.Secret, matched as IsSecret does) replaced by
// Hidden, and only Hidden for a plain tool whose "input" is secret.
// Arguments with a secret field that cannot be read to their end are
// shown as far as they can be read, marked (see ShowArgsN). For a log
// line, use ShowArgsN: it reads no more of the arguments than it shows.
func ShowArgs(info Info, args json.RawMessage) string {
	return ShowArgsN(info, args, 0)
}
