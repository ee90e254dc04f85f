package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"
)

// frame is what the server reads of one incoming JSON-RPC message before
// mcp-go sees it: enough to route it, refuse it, or count it.
type frame struct {
	method string
	// id is the raw id (a JSON string or number), nil when absent.
	id       jsontext.Value
	response bool // a result or error from the client: no method
	tool     string
}

// isRequest reports whether f expects a response.
func (f frame) isRequest() bool { return f.method != "" && f.id != nil }

// frameError refuses a message; id is the message's id when it could be
// read (the response then names it), nil otherwise.
type frameError struct {
	id   jsontext.Value
	code int
	msg  string
}

func (e *frameError) Error() string { return e.msg }

// Member names the server and mcp-go read, at the top of a message, in its
// params and in params._meta. mcp-go decodes with encoding/json, which
// matches names without regard to case; a name that equals one of these
// ignoring case, but not exactly, would be read as it by mcp-go and not by
// anything that matches exactly (the validator, a log's redaction). Such a
// message is refused.
var (
	topNames    = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	paramsNames = []string{"name", "arguments", "_meta", "task", "cursor", "protocolVersion", "capabilities",
		"clientInfo", "requestId", "reason", "level", "uri", "ref", "argument", "requestState", "inputResponses",
		"progressToken", "progress", "total", "message", "taskId"}
	metaNames = []string{"progressToken", "traceparent", "tracestate"}
)

// caseVariant reports whether name equals one of known ignoring case, but
// is not exactly it.
func caseVariant(name string, known []string) bool {
	for _, k := range known {
		if len(k) == len(name) && k != name && strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// inspectFrame reads msg strictly: one JSON object, no duplicate member
// names at any depth (RFC 7493), member names matched exactly, "jsonrpc":
// "2.0", and an id, when present, that is a string or a number.
func inspectFrame(msg []byte) (frame, *frameError) {
	var f frame
	d := jsontext.NewDecoder(bytes.NewReader(msg))
	fail := func(code int, format string, args ...any) (frame, *frameError) {
		return f, &frameError{id: f.id, code: code, msg: fmt.Sprintf(format, args...)}
	}
	parseErr := func(err error) (frame, *frameError) {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) && strings.Contains(se.Error(), "duplicate") {
			return fail(mcp.INVALID_REQUEST, "invalid request: duplicate member name %s", se.JSONPointer)
		}
		return fail(mcp.PARSE_ERROR, "parse error: the message is not valid JSON")
	}
	tok, err := d.ReadToken()
	if err != nil {
		return parseErr(err)
	}
	if tok.Kind() == '[' {
		return fail(mcp.INVALID_REQUEST, "invalid request: batches are not supported; send one message at a time")
	}
	if tok.Kind() != '{' {
		return fail(mcp.INVALID_REQUEST, "invalid request: a message must be a JSON object")
	}
	version, hasResult, hasError, paramsNotObject := "", false, false, false
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return parseErr(err)
		}
		switch n := name.String(); n {
		case "jsonrpc":
			v, err := d.ReadToken()
			if err != nil {
				return parseErr(err)
			}
			if v.Kind() == '"' {
				version = v.String()
			} else {
				version = "?"
			}
		case "id":
			v, err := d.ReadValue()
			if err != nil {
				return parseErr(err)
			}
			switch v.Kind() {
			case '"', '0':
				f.id = v.Clone()
			default:
				return fail(mcp.INVALID_REQUEST, "invalid request: the id must be a string or a number, not %s", kindName(v.Kind()))
			}
		case "method":
			v, err := d.ReadToken()
			if err != nil {
				return parseErr(err)
			}
			if v.Kind() != '"' {
				return fail(mcp.INVALID_REQUEST, "invalid request: the method must be a string")
			}
			f.method = v.String()
			if f.method == "" {
				return fail(mcp.INVALID_REQUEST, "invalid request: the method must not be empty")
			}
		case "params":
			if d.PeekKind() != '{' {
				paramsNotObject = true
				if err := d.SkipValue(); err != nil {
					return parseErr(err)
				}
				continue
			}
			if e := inspectParams(d, &f); e != nil {
				if e.code == mcp.PARSE_ERROR {
					return f, e
				}
				return fail(e.code, "%s", e.msg)
			}
		case "result", "error":
			if err := d.SkipValue(); err != nil {
				return parseErr(err)
			}
			hasResult = hasResult || n == "result"
			hasError = hasError || n == "error"
		default:
			if caseVariant(n, topNames) {
				return fail(mcp.INVALID_REQUEST, "invalid request: member names are case-sensitive: %q is not a member of a JSON-RPC message", n)
			}
			if err := d.SkipValue(); err != nil {
				return parseErr(err)
			}
		}
	}
	if _, err := d.ReadToken(); err != nil { // the closing brace
		return parseErr(err)
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) {
		return fail(mcp.PARSE_ERROR, "parse error: more than one JSON value in the message")
	}
	if version != mcp.JSONRPC_VERSION {
		return fail(mcp.INVALID_REQUEST, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if f.method == "" {
		if !hasResult && !hasError {
			return fail(mcp.INVALID_REQUEST, "invalid request: a message needs a method, or a result or error")
		}
		if f.id == nil {
			return fail(mcp.INVALID_REQUEST, "invalid request: a response needs the id of its request")
		}
		f.response = true
		return f, nil
	}
	if paramsNotObject {
		return fail(mcp.INVALID_REQUEST, "invalid request: params must be an object")
	}
	return f, nil
}

// inspectParams reads the params object at d's position: it checks the
// member names of params and params._meta, and reads the tool name of a
// tools/call. Values are read in place, never copied.
func inspectParams(d *jsontext.Decoder, f *frame) *frameError {
	parseErr := func(err error) *frameError {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) && strings.Contains(se.Error(), "duplicate") {
			return &frameError{code: mcp.INVALID_REQUEST, msg: fmt.Sprintf("invalid request: duplicate member name %s", se.JSONPointer)}
		}
		return &frameError{code: mcp.PARSE_ERROR, msg: "parse error: the message is not valid JSON"}
	}
	if _, err := d.ReadToken(); err != nil { // {
		return parseErr(err)
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return parseErr(err)
		}
		n := name.String()
		switch {
		case n == "name" && d.PeekKind() == '"':
			v, err := d.ReadToken()
			if err != nil {
				return parseErr(err)
			}
			f.tool = v.String()
			continue
		case n == "_meta" && d.PeekKind() == '{':
			if _, err := d.ReadToken(); err != nil {
				return parseErr(err)
			}
			for d.PeekKind() == '"' {
				name, err := d.ReadToken()
				if err != nil {
					return parseErr(err)
				}
				if caseVariant(name.String(), metaNames) {
					return &frameError{code: mcp.INVALID_REQUEST, msg: fmt.Sprintf("invalid request: member names are case-sensitive: %q in params._meta", name.String())}
				}
				if err := d.SkipValue(); err != nil {
					return parseErr(err)
				}
			}
			if _, err := d.ReadToken(); err != nil { // }
				return parseErr(err)
			}
			continue
		case caseVariant(n, paramsNames):
			return &frameError{code: mcp.INVALID_REQUEST, msg: fmt.Sprintf("invalid request: member names are case-sensitive: %q in params", n)}
		}
		if err := d.SkipValue(); err != nil {
			return parseErr(err)
		}
	}
	if _, err := d.ReadToken(); err != nil { // }
		return parseErr(err)
	}
	return nil
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "that"
}

// errorResponse is the JSON-RPC error response for e, one line.
func errorResponse(e *frameError) []byte {
	var id json.RawMessage = []byte("null")
	if e.id != nil {
		id = json.RawMessage(e.id)
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: mcp.JSONRPC_VERSION, ID: id}
	resp.Error.Code = e.code
	resp.Error.Message = e.msg
	b, _ := json.Marshal(resp)
	return append(b, '\n')
}
