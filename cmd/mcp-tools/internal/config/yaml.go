package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"

	"github.com/mcp-tools/mcp-tools/internal/lazyre"
)

// maxValues bounds the values one file may expand to, aliases and merges
// (<<) included: a few lines of anchors and aliases can otherwise stand
// for billions.
const maxValues = 1_000_000

// yamlError is a file that is not YAML this loader reads, at Line (0:
// unknown).
type yamlError struct {
	Line    int
	Message string
}

func (e *yamlError) Error() string { return e.Message }

// parseYAML reads the first document of data as plain data (maps with
// string keys, slices, strings, bools, numbers, nil) and returns it with
// its node tree, for the lines of problems.
//
// The parser is go.yaml.in/yaml/v4; the values follow YAML 1.2's core
// schema as the previous loader (github.com/goccy/go-yaml) resolved them,
// so a file means what it meant: a plain scalar is null (null, Null, NULL,
// ~ or nothing), a bool (true, True, TRUE and the same for false), ±.inf or
// .nan, an integer (decimal, 0x, 0o, 0b, or a leading 0 for octal, with _
// between digits, signed or not), a float (one dot), or else a string.
// Dates, times, yes/no and 1e3 stay strings (but in a file that is JSON,
// a number with an exponent is a number, as JSON says); numbers out of
// 64-bit range stay strings. Keys are strings. (Only scalars tagged by
// hand, like !!bool yes, may read otherwise than before: see scalar.)
// Merge keys (<<) merge, later keys win; a key written twice (as written:
// see mapping) is an error. A %YAML directive may say 1.0 to 1.3.
func parseYAML(data []byte) (any, *yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(asYAML11(data), &root); err != nil {
		// A JSON file may hold the two escapes the parser does not take.
		js, ok := jsonEscapes(data)
		if !ok {
			return nil, nil, yamlErr(err, data)
		}
		root = yaml.Node{}
		if err := yaml.Unmarshal(js, &root); err != nil {
			return nil, nil, yamlErr(err, js)
		}
	}
	if root.Kind == 0 {
		return nil, &root, nil
	}
	c := converter{json: json.Valid(data)}
	v, err := c.value(&root, 0)
	if err != nil {
		return nil, nil, err
	}
	return v, &root, nil
}

// asYAML11 rewrites a %YAML 1.0, 1.2 or 1.3 directive at the head of data
// to %YAML 1.1, the one version the parser takes: the previous loader took
// all four, and the version changes nothing here (plain scalars resolve as
// parseYAML says whatever it is). Only the digits change, so every line
// stays where it was.
func asYAML11(data []byte) []byte {
	i := len(data) - len(bytes.TrimPrefix(data, []byte("\ufeff")))
	for i < len(data) {
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += i
		}
		line := data[i:end]
		switch t := bytes.TrimLeft(line, " \t\r"); {
		case len(t) == 0 || t[0] == '#':
		case bytes.HasPrefix(line, []byte("%YAML ")) || bytes.HasPrefix(line, []byte("%YAML\t")):
			v := bytes.TrimLeft(line[len("%YAML"):], " \t")
			if len(v) < 3 || len(v) > 3 && !bytes.ContainsAny(v[3:4], " \t\r") {
				return data
			}
			switch string(v[:3]) {
			case "1.0", "1.2", "1.3":
				out := bytes.Clone(data)
				copy(out[end-len(v):], "1.1")
				return out
			}
			return data
		case line[0] == '%':
		default:
			return data
		}
		i = end + 1
	}
	return data
}

// jsonEscapes rewrites, in the strings of data when it is JSON, the
// escapes JSON has and the parser does not take: \/ becomes /, and a
// UTF-16 surrogate pair (\ud83d\ude00, as JSON writes characters past
// U+FFFF when it keeps to ASCII) becomes the one \U escape of its
// character, as the previous loader read them. A lone surrogate stays, and
// is refused. ok: data is JSON and something was rewritten.
func jsonEscapes(data []byte) (out []byte, ok bool) {
	if !json.Valid(data) {
		return nil, false
	}
	out = make([]byte, 0, len(data))
	in := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '"':
			in = !in
		case in && c == '\\' && data[i+1] == '/':
			out, i, ok = append(out, '/'), i+1, true
			continue
		case in && c == '\\' && data[i+1] == 'u':
			// Valid JSON: four hex digits follow.
			r1 := hex4(data[i+2 : i+6])
			if utf16.IsSurrogate(r1) && i+12 <= len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				if r := utf16.DecodeRune(r1, hex4(data[i+8:i+12])); r != utf8.RuneError {
					out, i, ok = fmt.Appendf(out, "\\U%08X", r), i+11, true
					continue
				}
			}
			out, i = append(out, data[i:i+6]...), i+5
			continue
		case in && c == '\\':
			out, i = append(out, c, data[i+1]), i+1
			continue
		}
		out = append(out, c)
	}
	return out, ok
}

// hex4 reads four hex digits.
func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// yamlErr turns the parser's error on data into a yamlError with its line.
// The parser counts the lines of its own (not its scanner's) errors from
// 0, has none for bytes that are not UTF-8 or characters YAML does not
// allow, and none for an alias of an anchor that is not there: yamlErr
// counts from 1 and finds the others.
func yamlErr(err error, data []byte) error {
	var pe *yaml.ParserError
	if errors.As(err, &pe) {
		line := pe.Line
		switch {
		case parserProblems[pe.Message]:
			line++
		case readerProblem(pe.Message):
			line = badCharLine(data)
		case line == 0: // a scanner's error on the first line
			line = 1
		}
		return &yamlError{Line: line, Message: pe.Message}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line, msg = l, after
			}
		}
	}
	if line == 0 && strings.HasPrefix(msg, "unknown anchor ") {
		line = firstFailingLine(data, err.Error())
	}
	return &yamlError{Line: line, Message: msg}
}

// parserProblems are the messages of the parser's own errors, whose
// lines it counts from 0.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found incompatible YAML document":       true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found undefined tag handle":             true,
}

// readerProblem reports whether msg is the parser's message for bytes it
// cannot read as characters, or characters YAML does not allow.
func readerProblem(msg string) bool {
	for _, p := range []string{"control characters are not allowed", "invalid leading UTF-8 octet",
		"incomplete UTF-8 octet sequence", "invalid trailing UTF-8 octet", "invalid length of a UTF-8 sequence",
		"invalid Unicode character"} {
		if msg == p {
			return true
		}
	}
	return false
}

// badCharLine is the line of the first byte of data that is not UTF-8 or
// the first character YAML does not allow; 0 when there is none.
func badCharLine(data []byte) int {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	line := 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return line
		case r == '\n':
			line++
		case r == '\t', r == '\r', r == 0x85, r >= 0x20 && r <= 0x7E, r >= 0xA0 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		default:
			return line
		}
		i += n
	}
	return 0
}

// firstFailingLine is the first line of data through which it fails to
// parse with the message msg: the line of the problem, when the problem is
// one the parser knows no line of. 0 when there is none.
func firstFailingLine(data []byte, msg string) int {
	var ends []int
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	fails := func(i int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(asYAML11(data[:ends[i]]), &n)
		return err != nil && err.Error() == msg
	}
	if !fails(len(ends) - 1) {
		return 0
	}
	return sort.Search(len(ends), fails) + 1
}

// converter turns nodes into values, counting them against maxValues.
type converter struct {
	values int
	// json says the file is JSON, whose numbers are numbers however they
	// are written: 1e-3 too, which YAML's rules above keep as text.
	json bool
}

// jsonExponent is a JSON number written with an exponent.
var jsonExponent = lazyre.New(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?[eE][-+]?[0-9]+$`)

// maxAliasDepth bounds aliases followed inside one another.
const maxAliasDepth = 1000

func (c *converter) value(n *yaml.Node, aliases int) (any, error) {
	if c.values++; c.values > maxValues {
		return nil, &yamlError{Line: n.Line, Message: fmt.Sprintf("the file expands to more than %d values (aliases)", maxValues)}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], aliases)
	case yaml.AliasNode:
		if aliases >= maxAliasDepth || n.Alias == nil {
			return nil, &yamlError{Line: n.Line, Message: "aliases nested too deep"}
		}
		return c.value(n.Alias, aliases+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e, aliases)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		if err := c.mapping(n, out, aliases); err != nil {
			return nil, err
		}
		return out, nil
	case yaml.ScalarNode:
		if c.json && n.Style == 0 && jsonExponent().MatchString(n.Value) {
			f, _ := strconv.ParseFloat(n.Value, 64) // past float64: ±Inf, which Parse reports
			return f, nil
		}
		return scalar(n), nil
	}
	return nil, &yamlError{Line: n.Line, Message: "unknown kind of YAML node"}
}

// mapping adds n's pairs to out in order, a later one replacing an
// earlier one of the same key, as the previous loader did: so a merge (<<)
// replaces the keys before it and gives way to those after it, and of a
// list of merged maps the last wins. A key written twice in one map is an
// error, << included; as before, keys are compared as written, so 1 and
// '1' are one key, but 1 and 01 two (the later wins).
func (c *converter) mapping(n *yaml.Node, out map[string]any, aliases int) error {
	lines := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		line := k.Line
		for k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			return &yamlError{Line: line, Message: "a key must be a plain value, not a list or a map"}
		}
		if at, dup := lines[k.Value]; dup {
			return &yamlError{Line: line, Message: fmt.Sprintf("mapping key %q already defined at line %d", k.Value, at)}
		}
		lines[k.Value] = line
		if k.Value == "<<" && k.Style == 0 && (k.Tag == "" || k.Tag == "!!merge" || k.Tag == "!!str") {
			if err := c.merge(v, out, aliases, false); err != nil {
				return err
			}
			continue
		}
		key := keyString(k)
		val, err := c.value(v, aliases)
		if err != nil {
			return err
		}
		out[key] = val
	}
	return nil
}

// merge adds the pairs of the map, or list of maps, that m stands for to
// out; inList: m is an entry of such a list, so a map. Each merge counts as
// a value: a merge of an empty map adds none, but merges of merges of it
// are work all the same.
func (c *converter) merge(m *yaml.Node, out map[string]any, aliases int, inList bool) error {
	line := m.Line
	if c.values++; c.values > maxValues {
		return &yamlError{Line: line, Message: fmt.Sprintf("the file expands to more than %d values (aliases)", maxValues)}
	}
	for m.Kind == yaml.AliasNode {
		if aliases >= maxAliasDepth || m.Alias == nil {
			return &yamlError{Line: line, Message: "aliases nested too deep"}
		}
		m, aliases = m.Alias, aliases+1
	}
	switch {
	case m.Kind == yaml.MappingNode:
		return c.mapping(m, out, aliases)
	case m.Kind == yaml.SequenceNode && !inList:
		for _, e := range m.Content {
			if err := c.merge(e, out, aliases, true); err != nil {
				return err
			}
		}
		return nil
	}
	return &yamlError{Line: line, Message: "a merge (<<) takes a map or a list of maps"}
}

// keyString is the map key k stands for. As with the previous loader, a
// plain key is resolved as a value and printed (0x1F: is "31", ~: is
// "null", 1.0: is "1"), whatever its tag; a quoted one is itself.
func keyString(k *yaml.Node) string {
	if k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return k.Value
	}
	switch v := plain(k.Value).(type) {
	case nil:
		return "null"
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// scalar resolves one scalar as the doc comment of parseYAML says. A
// scalar tagged by hand means what its tag says: !!null null, !!bool a
// bool when it reads as one, !!int and !!float a number when it reads as
// one; any other tag (!!str, !!binary, !!timestamp, a tag of one's own)
// keeps the text as a string.
func scalar(n *yaml.Node) any {
	s := n.Value
	if n.Style&yaml.TaggedStyle != 0 || n.Tag == "!" {
		switch n.Tag {
		case "!!null":
			return nil
		case "!!bool":
			if b, ok := plain(s).(bool); ok {
				return b
			}
		case "!!int", "!!float":
			if v, ok := number(s); ok {
				return v
			}
		}
		return s
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return s
	}
	return plain(s)
}

// plain resolves the text of a plain scalar.
func plain(s string) any {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	case ".inf", ".Inf", ".INF":
		return math.Inf(1)
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1)
	case ".nan", ".NaN", ".NAN":
		return math.NaN()
	}
	if v, ok := number(s); ok {
		return v
	}
	return s
}

// number reads s as goccy/go-yaml's token.ToNumber does: uint64 for an
// integer of no sign or +, int64 for a negative one, float64 for one with
// a dot. Out of range: not a number.
func number(s string) (any, bool) {
	if s == "" || s[0] == '_' {
		return nil, false
	}
	dots := strings.Count(s, ".")
	if dots > 1 {
		return nil, false
	}
	neg := s[0] == '-'
	t := strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-"), "_", "")
	base := 10
	switch {
	case strings.HasPrefix(t, "0x"):
		t, base = t[2:], 16
	case strings.HasPrefix(t, "0o"):
		t, base = t[2:], 8
	case strings.HasPrefix(t, "0b"):
		t, base = t[2:], 2
	case strings.HasPrefix(t, "0") && len(t) > 1 && dots == 0:
		base = 8
	case dots == 1:
		base = 0
	}
	if neg {
		t = "-" + t
	}
	var (
		v   any
		err error
	)
	switch {
	case base == 0:
		v, err = strconv.ParseFloat(t, 64)
	case neg:
		v, err = strconv.ParseInt(t, base, 64)
	default:
		v, err = strconv.ParseUint(t, base, 64)
	}
	return v, err == nil
}

// lineOf finds the line of the key path p (like tools[0].process.timeout)
// in the file, or of its nearest ancestor that exists; 0 when none does.
func lineOf(root *yaml.Node, p string) int {
	if root == nil || root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return 0
	}
	n, line := root.Content[0], 0
	for _, seg := range pathSegments(p) {
		for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < maxAliasDepth; depth++ {
			n = n.Alias
		}
		next, at := child(n, seg)
		if next == nil {
			break
		}
		n, line = next, at
	}
	return line
}

// pathSegments splits tools[0].process into tools, [0], process.
func pathSegments(p string) []string {
	var segs []string
	for p != "" {
		switch i := strings.IndexAny(p, ".["); {
		case i < 0:
			segs, p = append(segs, p), ""
		case p[i] == '.':
			if i > 0 {
				segs = append(segs, p[:i])
			}
			p = p[i+1:]
		default:
			if i > 0 {
				segs = append(segs, p[:i])
			}
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				return append(segs, p[i:])
			}
			segs, p = append(segs, p[i:i+j+1]), p[i+j+1:]
		}
	}
	return segs
}

// child is the node seg names in n (a key of a map, or [i] of a list),
// with the line it starts at: a key's own line.
func child(n *yaml.Node, seg string) (*yaml.Node, int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == seg {
				return n.Content[i+1], k.Line
			}
		}
	case yaml.SequenceNode:
		if s, ok := strings.CutPrefix(seg, "["); ok {
			if i, err := strconv.Atoi(strings.TrimSuffix(s, "]")); err == nil && i >= 0 && i < len(n.Content) {
				return n.Content[i], n.Content[i].Line
			}
		}
	}
	return nil, 0
}
