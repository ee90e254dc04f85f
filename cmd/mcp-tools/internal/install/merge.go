package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxFileBytes is the largest configuration file install reads: far more
// than any client's file, small enough to hold in memory.
const MaxFileBytes = 16 << 20

// MaxDepth is how deeply nested a configuration file may be.
const MaxDepth = 1000

// ErrParse marks a file install refuses because it cannot parse it.
var ErrParse = errors.New("cannot parse the file")

// Merge returns content with the server entry name set to e in the
// client's servers object, and whether an entry of that name was replaced.
// An existing stdio entry of that name (an object with a command) gets e's
// command and args (and type), and keeps its other members, such as env;
// any other value of that name is replaced whole. Everything else is kept
// byte for byte. Empty content (a file that does
// not exist yet) gives a new file. Content that is not a JSON object (or,
// for a JSONC client, JSON with comments and trailing commas), or whose
// servers key is not an object, is refused with an error wrapping ErrParse.
func Merge(c Client, content []byte, name string, e Entry) (out []byte, replaced bool, err error) {
	if len(content) > MaxFileBytes {
		return nil, false, fmt.Errorf("%w: it is larger than %d bytes", ErrParse, MaxFileBytes)
	}
	entry, err := json.Marshal(c.object(e))
	if err != nil {
		return nil, false, err
	}
	if len(bytes.TrimSpace(content)) == 0 {
		doc := map[string]map[string]json.RawMessage{c.Key: {name: entry}}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, false, err
		}
		p := &parser{src: content}
		return p.eol(append(b, '\n')), false, nil
	}
	p := &parser{src: content, jsonc: c.JSONC}
	doc, err := p.document()
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrParse, err)
	}
	root := &doc
	if root.kind != '{' {
		return nil, false, fmt.Errorf("%w: the top level is not an object", ErrParse)
	}
	unit := p.indentUnit(root)
	servers := root.member(c.Key)
	switch {
	case servers == nil:
		b, err := json.MarshalIndent(map[string]json.RawMessage{name: entry}, p.memberIndent(root, unit), unit)
		if err != nil {
			return nil, false, err
		}
		out = p.insert(root, c.Key, b, unit)
	case servers.value.kind != '{':
		return nil, false, fmt.Errorf("%w: %q is not an object", ErrParse, c.Key)
	default:
		sv := &servers.value
		var b bytes.Buffer
		if _, own := p.ownLine(sv); len(sv.members) > 0 && !own {
			b.Write(entry) // a compact file gets a compact entry
		} else if err := json.Indent(&b, entry, p.memberIndent(sv, unit), unit); err != nil {
			return nil, false, err
		}
		if old := sv.member(name); old != nil && old.value.kind == '{' && old.value.member("command") != nil {
			// A stdio entry: update what install writes, keep the rest
			// (env, disabled...) the user set.
			if out, err = c.update(p, name, e, unit); err != nil {
				return nil, false, err
			}
			replaced = true
		} else if old != nil {
			out = splice(content, old.value.start, old.value.end, p.eol(b.Bytes()))
			replaced = true
		} else {
			out = p.insert(sv, name, b.Bytes(), unit)
		}
	}
	// Check the result before anyone writes it.
	check := &parser{src: out, jsonc: c.JSONC}
	r, err := check.document()
	if err != nil {
		return nil, false, fmt.Errorf("install: the merged file does not parse (%v); nothing was written", err)
	}
	if s := r.member(c.Key); s == nil || s.value.member(name) == nil {
		return nil, false, errors.New("install: the merged file lacks the entry; nothing was written")
	}
	return out, replaced, nil
}

// Entries returns the names of the entries in the client's servers object
// of content, in file order.
func Entries(c Client, content []byte) ([]string, error) {
	if len(bytes.TrimSpace(content)) == 0 {
		return nil, nil
	}
	p := &parser{src: content, jsonc: c.JSONC}
	root, err := p.document()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	s := root.member(c.Key)
	if s == nil {
		return nil, nil
	}
	var out []string
	for _, m := range s.value.members {
		out = append(out, m.key)
	}
	return out, nil
}

// update sets the members install writes (type for a typed client,
// command, args) in the existing object entry name of p's servers object,
// and keeps its other members as they are.
func (c Client) update(p *parser, name string, e Entry, unit string) ([]byte, error) {
	args := e.Args
	if args == nil {
		args = []string{}
	}
	type field struct {
		key string
		val any
	}
	fields := []field{{"command", e.Command}, {"args", args}}
	if c.Typed {
		fields = append([]field{{"type", "stdio"}}, fields...)
	}
	src := p.src
	for _, f := range fields {
		q := &parser{src: src, jsonc: c.JSONC}
		root, err := q.document()
		if err != nil {
			return nil, fmt.Errorf("install: the merged file does not parse (%v); nothing was written", err)
		}
		obj := &root.member(c.Key).value.member(name).value
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, err
		}
		_, own := q.ownLine(obj)
		var b bytes.Buffer
		if own {
			if err := json.Indent(&b, v, q.memberIndent(obj, unit), unit); err != nil {
				return nil, err
			}
		} else {
			b.Write(v)
		}
		k, _ := json.Marshal(f.key)
		switch m := obj.member(f.key); {
		case m != nil:
			src = splice(src, m.value.start, m.value.end, q.eol(b.Bytes()))
		case own:
			src = q.insert(obj, f.key, b.Bytes(), unit)
		case obj.trailingComma >= 0:
			// A compact entry gets the member on its line.
			src = splice(src, obj.trailingComma+1, obj.trailingComma+1, []byte(" "+string(k)+": "+b.String()+","))
		default:
			at := obj.members[len(obj.members)-1].value.end
			src = splice(src, at, at, []byte(", "+string(k)+": "+b.String()))
		}
	}
	return src, nil
}

func splice(src []byte, start, end int, with []byte) []byte {
	out := make([]byte, 0, len(src)-(end-start)+len(with))
	out = append(out, src[:start]...)
	out = append(out, with...)
	return append(out, src[end:]...)
}

// insert adds "key": val as the last member of obj.
func (p *parser) insert(obj *value, key string, val []byte, unit string) []byte {
	k, _ := json.Marshal(key)
	member := "\n" + p.memberIndent(obj, unit) + string(k) + ": " + string(val)
	if len(obj.members) == 0 {
		// {} or { /* a comment */ }: the member goes right after the brace.
		return splice(p.src, obj.start+1, obj.start+1, p.eol([]byte(member+"\n"+p.lineIndent(obj))))
	}
	if obj.trailingComma >= 0 {
		// A JSONC trailing comma: the new member goes after it, with one.
		return splice(p.src, obj.trailingComma+1, obj.trailingComma+1, p.eol([]byte(member+",")))
	}
	at := obj.members[len(obj.members)-1].value.end
	return splice(p.src, at, at, p.eol([]byte(","+member)))
}

// eol gives the new bytes b the file's line ends: CRLF when its first line
// ends in CRLF (a file saved on Windows), else LF. The bytes come from
// encoding/json, whose strings never hold a raw newline.
func (p *parser) eol(b []byte) []byte {
	if i := bytes.IndexByte(p.src, '\n'); i > 0 && p.src[i-1] == '\r' {
		return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
	}
	return b
}

// lineIndent is the whitespace that starts the line v starts on.
func (p *parser) lineIndent(v *value) string {
	i := bytes.LastIndexByte(p.src[:v.start], '\n') + 1
	j := i
	for j < v.start && (p.src[j] == ' ' || p.src[j] == '\t') {
		j++
	}
	return string(p.src[i:j])
}

// ownLine returns the indentation of obj's first member when it starts a
// line of its own.
func (p *parser) ownLine(obj *value) (string, bool) {
	if len(obj.members) == 0 {
		return "", false
	}
	ks := obj.members[0].keyStart
	i := bytes.LastIndexByte(p.src[:ks], '\n') + 1
	if i <= obj.start {
		return "", false
	}
	ws := string(p.src[i:ks])
	return ws, strings.TrimLeft(ws, " \t") == ""
}

// memberIndent is the indentation of obj's members: that of its first
// member when on a line of its own, else obj's line's plus unit.
func (p *parser) memberIndent(obj *value, unit string) string {
	if ws, ok := p.ownLine(obj); ok {
		return ws
	}
	return p.lineIndent(obj) + unit
}

// indentUnit is how much the file indents one level, judged from the top
// object's members; two spaces when it cannot tell.
func (p *parser) indentUnit(root *value) string {
	if ws, ok := p.ownLine(root); ok && len(ws) > len(p.lineIndent(root)) {
		return ws[len(p.lineIndent(root)):]
	}
	return "  "
}

// value is a parsed JSON value: its kind ('{', '[', '"', or '0' for the
// others), its byte span, and for an object its members.
type value struct {
	kind          byte
	start, end    int
	members       []member
	trailingComma int // offset of a JSONC trailing comma in an object, or -1
}

type member struct {
	key      string
	keyStart int
	value    value
}

// member returns the last member called key (the one a JSON reader keeps).
func (v *value) member(key string) *member {
	for i := len(v.members) - 1; i >= 0; i-- {
		if v.members[i].key == key {
			return &v.members[i]
		}
	}
	return nil
}

// parser reads JSON, or JSONC (comments and trailing commas) when jsonc.
type parser struct {
	src   []byte
	pos   int
	jsonc bool
	depth int
}

func (p *parser) errorf(format string, args ...any) error {
	line := bytes.Count(p.src[:min(p.pos, len(p.src))], []byte("\n")) + 1
	return fmt.Errorf("line %d: "+format, append([]any{line}, args...)...)
}

func (p *parser) document() (value, error) {
	if bytes.HasPrefix(p.src, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	if err := p.space(); err != nil {
		return value{}, err
	}
	v, err := p.value()
	if err != nil {
		return value{}, err
	}
	if err := p.space(); err != nil {
		return value{}, err
	}
	if p.pos != len(p.src) {
		return value{}, p.errorf("unexpected %q after the document", p.src[p.pos])
	}
	return v, nil
}

// space skips whitespace, and comments in JSONC.
func (p *parser) space() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.jsonc && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			i := bytes.IndexByte(p.src[p.pos:], '\n')
			if i < 0 {
				p.pos = len(p.src)
			} else {
				p.pos += i + 1
			}
		case c == '/' && p.jsonc && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			i := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if i < 0 {
				return p.errorf("unterminated comment")
			}
			p.pos += i + 4
		case c == '/':
			return p.errorf("comments are not allowed in this file")
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) value() (value, error) {
	if p.pos >= len(p.src) {
		return value{}, p.errorf("unexpected end of file")
	}
	switch c := p.src[p.pos]; c {
	case '{', '[':
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > MaxDepth {
			return value{}, p.errorf("nested more than %d levels deep", MaxDepth)
		}
		if c == '{' {
			return p.object()
		}
		return p.array()
	case '"':
		start := p.pos
		if _, err := p.str(); err != nil {
			return value{}, err
		}
		return value{kind: '"', start: start, end: p.pos}, nil
	default:
		start := p.pos
		for p.pos < len(p.src) && strings.IndexByte("+-.0123456789eEtruefalsn", p.src[p.pos]) >= 0 {
			p.pos++
		}
		lit := p.src[start:p.pos]
		// Syntax only: a number too large for a float64 (1e400) is still
		// JSON, and the file keeps it as written.
		if len(lit) == 0 || !json.Valid(lit) {
			return value{}, p.errorf("unexpected %q", clip(lit, p.src[start:], 20))
		}
		return value{kind: '0', start: start, end: p.pos}, nil
	}
}

func clip(lit, rest []byte, n int) string {
	if len(lit) == 0 {
		lit = rest[:min(1, len(rest))]
	}
	return string(lit[:min(n, len(lit))])
}

func (p *parser) str() (string, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
		case '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.src[start:p.pos], &s); err != nil {
				return "", p.errorf("bad string: %v", err)
			}
			return s, nil
		default:
			if p.src[p.pos] < 0x20 {
				return "", p.errorf("control character in a string")
			}
			p.pos++
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *parser) object() (value, error) {
	v := value{kind: '{', start: p.pos, trailingComma: -1}
	p.pos++
	comma := -1
	for {
		if err := p.space(); err != nil {
			return value{}, err
		}
		if p.pos >= len(p.src) {
			return value{}, p.errorf("unterminated object")
		}
		if p.src[p.pos] == '}' {
			if comma >= 0 && !p.jsonc {
				return value{}, p.errorf("trailing comma")
			}
			v.trailingComma = comma
			p.pos++
			v.end = p.pos
			return v, nil
		}
		if len(v.members) > 0 && comma < 0 {
			return value{}, p.errorf("want , or } after a member")
		}
		if p.src[p.pos] != '"' {
			return value{}, p.errorf("want a member name in double quotes")
		}
		m := member{keyStart: p.pos}
		k, err := p.str()
		if err != nil {
			return value{}, err
		}
		m.key = k
		if err := p.space(); err != nil {
			return value{}, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return value{}, p.errorf("want : after a member name")
		}
		p.pos++
		if err := p.space(); err != nil {
			return value{}, err
		}
		if m.value, err = p.value(); err != nil {
			return value{}, err
		}
		v.members = append(v.members, m)
		comma = -1
		if err := p.space(); err != nil {
			return value{}, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			comma = p.pos
			p.pos++
		}
	}
}

func (p *parser) array() (value, error) {
	v := value{kind: '[', start: p.pos, trailingComma: -1}
	p.pos++
	n, comma := 0, false
	for {
		if err := p.space(); err != nil {
			return value{}, err
		}
		if p.pos >= len(p.src) {
			return value{}, p.errorf("unterminated array")
		}
		if p.src[p.pos] == ']' {
			if comma && !p.jsonc {
				return value{}, p.errorf("trailing comma")
			}
			p.pos++
			v.end = p.pos
			return v, nil
		}
		if n > 0 && !comma {
			return value{}, p.errorf("want , or ] after an element")
		}
		if _, err := p.value(); err != nil {
			return value{}, err
		}
		n++
		comma = false
		if err := p.space(); err != nil {
			return value{}, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			comma = true
			p.pos++
		}
	}
}
