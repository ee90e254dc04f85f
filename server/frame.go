package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

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
	// args and meta are params.arguments and params._meta as they came,
	// copied (nil when absent); other counts the other members of params
	// and modern says whether _meta names a protocol version (2026-07-28
	// and later), which is what lets the server answer a tools/call itself.
	args, meta []byte
	other      int
	modern     bool
	// progress says params._meta has a progressToken member (its name
	// unescaped, as mcp-go reads it).
	progress bool
	// version is params._meta's protocol version, if any.
	version string
	// taskID is params.taskId, when it is a string (the tasks/* methods);
	// task says params.task is present (a 2025-11-25 task-augmented call).
	taskID string
	task   bool
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

// caseVariant reports whether name equals one of known under Unicode case
// folding, as encoding/json matches names (so "paramſ", with a long s, is
// a variant of "params"), but is not exactly it.
func caseVariant(name []byte, known []string) bool {
	for _, k := range known {
		if k != string(name) && bytes.EqualFold([]byte(k), name) {
			return true
		}
	}
	return false
}

// frameReader is a pooled strict decoder: reading a frame allocates only
// what the frame yields (its method, id and tool name).
type frameReader struct {
	d   *jsontext.Decoder
	r   bytes.Reader
	msg []byte // the frame being read
	buf []byte // unquoted names that had escapes
}

var frameReaders = sync.Pool{New: func() any {
	fr := &frameReader{}
	fr.d = jsontext.NewDecoder(&fr.r)
	return fr
}}

// maxPooledFrame is the largest message whose reader goes back to the
// pool: a decoder keeps the buffers and name sets the largest message it
// read needed, and one large message must not pin them for good.
const maxPooledFrame = 64 << 10

// inspectFrame reads msg strictly: one JSON object, no duplicate member
// names at any depth (RFC 7493), member names matched exactly, "jsonrpc":
// "2.0", and an id, when present, that is a string or a number.
func inspectFrame(msg []byte) (frame, *frameError) {
	fr := frameReaders.Get().(*frameReader)
	if len(msg) <= maxPooledFrame {
		defer frameReaders.Put(fr)
	}
	fr.r.Reset(msg)
	fr.d.Reset(&fr.r)
	fr.msg = msg
	defer func() { fr.r.Reset(nil); fr.msg = nil }() // drop the reference to msg
	f, bad := fr.read()
	if bad != nil && bad.id == nil {
		bad.id = refusedID(msg)
	}
	return f, bad
}

// lenientDecoder reads msg allowing what the strict reader refuses but
// JSON's grammar allows: invalid UTF-8 (a lone surrogate escape) and
// duplicate member names. Only refused messages are read so: a function,
// not a package variable, so that no initialiser builds the options.
func lenientDecoder(msg []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewReader(msg), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// refusedID is the id of a message the strict reader refused before it
// came to the id: the TypeScript SDK writes the id last, and a refusal
// without it leaves the client waiting for its timeout. It is the value of
// the one top-level member named exactly "id" (no case variant of it
// beside), a valid string or a number, in a message that is otherwise one
// well-formed JSON object; nil otherwise (a syntax error has no id).
func refusedID(msg []byte) jsontext.Value {
	d := lenientDecoder(msg)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	var id jsontext.Value
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return nil
		}
		switch n := name.String(); {
		case n == "id":
			v, err := d.ReadValue()
			if err != nil || id != nil || (v.Kind() != '"' && v.Kind() != '0') || !v.IsValid() {
				return nil
			}
			id = v.Clone()
			continue
		case strings.EqualFold(n, "id"):
			return nil
		}
		if err := d.SkipValue(); err != nil {
			return nil
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) {
		return nil
	}
	return id
}

// name reads an object member name, unquoted. The result aliases the
// decoder's buffer: it is valid until the next read.
func (fr *frameReader) name() ([]byte, error) {
	v, err := fr.d.ReadValue()
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], nil
	}
	fr.buf, err = jsontext.AppendUnquote(fr.buf[:0], v)
	return fr.buf, err
}

// str reads a string value into a new string; ok is false for another
// kind.
func (fr *frameReader) str() (string, bool, error) {
	if fr.d.PeekKind() != '"' {
		return "", false, fr.d.SkipValue()
	}
	tok, err := fr.d.ReadToken()
	if err != nil {
		return "", false, err
	}
	return tok.String(), true, nil
}

func (fr *frameReader) read() (frame, *frameError) {
	var f frame
	d := fr.d
	fail := func(code int, format string, args ...any) (frame, *frameError) {
		return f, &frameError{id: f.id, code: code, msg: fmt.Sprintf(format, args...)}
	}
	parseErr := func(err error) (frame, *frameError) {
		e := readError(err)
		e.id = f.id
		return f, e
	}
	switch d.PeekKind() {
	case '{':
	case '[':
		return fail(mcp.INVALID_REQUEST, "invalid request: batches are not supported; send one message at a time")
	case 0:
		_, err := d.ReadToken()
		return parseErr(err)
	default:
		if err := d.SkipValue(); err != nil {
			return parseErr(err)
		}
		return fail(mcp.INVALID_REQUEST, "invalid request: a message must be a JSON object")
	}
	if _, err := d.ReadToken(); err != nil {
		return parseErr(err)
	}
	versionOK, hasVersion, hasResult, hasError, paramsNotObject := false, false, false, false, false
	for d.PeekKind() != '}' {
		name, err := fr.name()
		if err != nil {
			return parseErr(err)
		}
		switch string(name) {
		case "jsonrpc":
			v, isString, err := fr.str()
			if err != nil {
				return parseErr(err)
			}
			hasVersion, versionOK = true, isString && v == mcp.JSONRPC_VERSION
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
			v, isString, err := fr.str()
			if err != nil {
				return parseErr(err)
			}
			if !isString || v == "" {
				return fail(mcp.INVALID_REQUEST, "invalid request: the method must be a non-empty string")
			}
			f.method = v
		case "params":
			if d.PeekKind() != '{' {
				paramsNotObject = true
				if err := d.SkipValue(); err != nil {
					return parseErr(err)
				}
				continue
			}
			if e := fr.params(&f); e != nil {
				e.id = f.id
				return f, e
			}
		case "result", "error":
			// name aliases the decoder's buffer: read it before skipping.
			hasResult = hasResult || string(name) == "result"
			hasError = hasError || string(name) == "error"
			if err := d.SkipValue(); err != nil {
				return parseErr(err)
			}
		default:
			if caseVariant(name, topNames) {
				return fail(mcp.INVALID_REQUEST, "invalid request: member names are case-sensitive: %q is not a member of a JSON-RPC message", clipName(name))
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
	if !hasVersion || !versionOK {
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

// readError is the JSON-RPC error for a decoder error: a duplicate member
// name is an invalid request, anything else a parse error.
func readError(err error) *frameError {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && strings.Contains(se.Error(), "duplicate") {
		return &frameError{code: mcp.INVALID_REQUEST, msg: fmt.Sprintf("invalid request: duplicate member name %s", clipName([]byte(se.JSONPointer)))}
	}
	if errors.As(err, &se) && (strings.Contains(se.Error(), "invalid UTF-8") || strings.Contains(se.Error(), "surrogate")) {
		return &frameError{code: mcp.PARSE_ERROR, msg: `parse error: a string in the message is not valid Unicode (invalid UTF-8, or a lone surrogate escape such as \ud800)`}
	}
	return &frameError{code: mcp.PARSE_ERROR, msg: "parse error: the message is not valid JSON"}
}

// params reads the params object at the decoder's position: it checks the
// member names of params and params._meta, and reads the tool name of a
// tools/call. Values are skipped in place, never copied.
func (fr *frameReader) params(f *frame) *frameError {
	d := fr.d
	if _, err := d.ReadToken(); err != nil { // {
		return readError(err)
	}
	for d.PeekKind() == '"' {
		name, err := fr.name()
		if err != nil {
			return readError(err)
		}
		switch {
		case string(name) == "name":
			v, _, err := fr.str()
			if err != nil {
				return readError(err)
			}
			f.tool = v
		case string(name) == "taskId":
			v, _, err := fr.str()
			if err != nil {
				return readError(err)
			}
			f.taskID = v
		case string(name) == "arguments":
			start := d.InputOffset()
			if err := d.SkipValue(); err != nil {
				return readError(err)
			}
			f.args = fr.copyValue(start, d.InputOffset())
		case string(name) == "_meta":
			if d.PeekKind() != '{' { // (name is not read after PeekKind moved the buffer)
				f.other++
				if err := d.SkipValue(); err != nil {
					return readError(err)
				}
				continue
			}
			start := d.InputOffset()
			if _, err := d.ReadToken(); err != nil {
				return readError(err)
			}
			for d.PeekKind() == '"' {
				name, err := fr.name()
				if err != nil {
					return readError(err)
				}
				if caseVariant(name, metaNames) {
					return &frameError{code: mcp.INVALID_REQUEST, msg: fmt.Sprintf("invalid request: member names are case-sensitive: %q in params._meta", clipName(name))}
				}
				if string(name) == "progressToken" {
					f.progress = true
				}
				if string(name) == mcp.MetaKeyProtocolVersion {
					v, _, err := fr.str()
					if err != nil {
						return readError(err)
					}
					// Modern exactly when mcp-go will think so.
					f.version, f.modern = v, mcp.IsModernProtocol(v)
					continue
				}
				if err := d.SkipValue(); err != nil {
					return readError(err)
				}
			}
			if _, err := d.ReadToken(); err != nil { // }
				return readError(err)
			}
			f.meta = fr.copyValue(start, d.InputOffset())
		case string(name) == "task":
			f.task = true
			f.other++
			if err := d.SkipValue(); err != nil {
				return readError(err)
			}
		case caseVariant(name, paramsNames):
			return &frameError{code: mcp.INVALID_REQUEST, msg: fmt.Sprintf("invalid request: member names are case-sensitive: %q in params", clipName(name))}
		default:
			f.other++
			if err := d.SkipValue(); err != nil {
				return readError(err)
			}
		}
	}
	if _, err := d.ReadToken(); err != nil { // }
		return readError(err)
	}
	return nil
}

// copyValue copies the value between two input offsets of the frame (the
// offset before a value may still have the name's colon and spaces).
func (fr *frameReader) copyValue(start, end int64) []byte {
	v := bytes.TrimLeft(fr.msg[start:end], " \t\r\n:")
	return append([]byte(nil), v...)
}

// clipName is at most 64 bytes of a member name, for a message.
func clipName(name []byte) string {
	if len(name) > 64 {
		return string(name[:64]) + "…"
	}
	return string(name)
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
