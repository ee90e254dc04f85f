package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// ShowArgsN renders a call's arguments for a log line in at most max
// characters (runes), reading no more of them than it shows (and the
// secret values it skips): a log line of a 4 MiB call costs about what a
// short one does.
//
// For a plain tool (info.Plain) it is the "input" string itself, decoded,
// or only Hidden when "input" is secret. For any other tool (and a plain
// one whose arguments are not one object with one string "input") it is
// the arguments' own bytes, in their own order and formatting, with the
// value of every top-level member whose name is secret (info.Secret,
// matched as IsSecret does: a repeated name and a case variant too)
// replaced by "[hidden]" (Hidden, quoted), whatever the value's type and
// size; a value nested deeper is shown as it is.
//
// When there is more than max characters to show, the display stops at
// max and ends with "…(N more bytes)", as the server cuts a long result:
// N is the bytes of the arguments after the last one shown (for a plain
// tool, of the decoded input). A secret value counts as shown once any of
// its mark is; N may so include the length of a secret value after the
// cut, never its content.
//
// Arguments that are not well-formed JSON and hold secret fields are
// shown only as far as they read: up to the end of the last token read
// whole, secret values hidden, then "…(malformed)" or "…(malformed; N
// more bytes)" with N the bytes of the arguments not shown. Nothing after
// the error is shown: no secret can pass for something else. A tool with
// no secret fields shows its arguments as they are, well-formed or not,
// and so does a tool whose arguments are one well-formed value other
// than an object (it has no fields).
//
// max <= 0 is no bound. Arguments under the bound with no secret field
// declared cost one string conversion; a plain tool's display reads the
// whole object (to know "input" is its only one).
func ShowArgsN(info Info, args json.RawMessage, max int) string {
	if max <= 0 {
		max = int(^uint(0) >> 1)
	}
	if info.Plain {
		if IsSecret("input", info.Secret) {
			return Hidden
		}
		if s, ok := plainInput(args, max); ok {
			return s
		}
	}
	if len(info.Secret) == 0 {
		return cutRaw(args, max)
	}
	s := shower{args: args, secret: info.Secret, left: max}
	return s.show()
}

// Truncate cuts s to at most n characters (runes) for a log line, as
// ShowArgsN cuts arguments: a cut ends with "…(N more bytes)", N the
// bytes of s not shown. n <= 0 is no bound.
func Truncate(s string, n int) string {
	cut := runeCut(s, n)
	if cut >= len(s) {
		return s
	}
	return s[:cut] + moreBytes(len(s)-cut)
}

// cutRaw is b, as a string, cut as Truncate cuts, converting no more of b
// than it shows.
func cutRaw(b []byte, max int) string {
	cut := runeCut(b, max)
	if cut >= len(b) {
		return string(b)
	}
	return string(b[:cut]) + moreBytes(len(b)-cut)
}

// runeCut is the length in bytes of the first n characters of s, or
// len(s) when it has no more (or n <= 0).
func runeCut[T string | []byte](s T, n int) int {
	if n <= 0 || len(s) <= n {
		return len(s)
	}
	cut := 0
	for count := 0; cut < len(s) && count < n; count++ {
		if s[cut] < utf8.RuneSelf {
			cut++
			continue
		}
		_, size := utf8.DecodeRuneInString(string(s[cut:min(cut+utf8.UTFMax, len(s))]))
		cut += size
	}
	return cut
}

// moreBytes is the mark of a cut display with n bytes not shown.
func moreBytes(n int) string { return "…(" + strconv.Itoa(n) + " more bytes)" }

// hiddenValue is what a secret value is shown as: Hidden, as a JSON string.
const hiddenValue = `"` + Hidden + `"`

// showDecoder is a tokenizer over b (read in place, not copied) that
// takes what any JSON reader would (a repeated name, invalid UTF-8), so
// that a secret is hidden wherever a tool could find it. A function, not
// a package variable, so that no initialiser builds its options.
func showDecoder(b []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}

// shower builds the bounded display of arguments with secret fields.
type shower struct {
	args   []byte
	secret []string
	out    strings.Builder
	cp     int  // args[:cp] are shown (a secret value as its mark)
	left   int  // characters still to show
	cut    bool // the display stopped at max; args[cp:] are not shown
}

// show walks the arguments once: it copies their bytes through, token
// by token, hiding secret values, until max characters are shown or the
// arguments end or stop being JSON.
func (s *shower) show() string {
	s.out.Grow(min(len(s.args), s.left) + len(hiddenValue) + 32)
	d := showDecoder(s.args)
	p := skipSpace(s.args, 0)
	if p == len(s.args) {
		return cutRaw(s.args, s.left) // white space, or nothing
	}
	if s.args[p] != '{' {
		// One value that is not an object: nothing in it is a field.
		if !s.fits(p) {
			return s.stop(len(s.args))
		}
		if d.SkipValue() != nil {
			return s.malformed()
		}
		return s.end(d)
	}
	if _, err := d.ReadToken(); err != nil {
		return s.malformed()
	}
	if !s.copyTo(int(d.InputOffset())) {
		return s.result()
	}
	for {
		switch d.PeekKind() {
		case '}':
			if _, err := d.ReadToken(); err != nil {
				return s.malformed()
			}
			return s.end(d)
		case '"':
		default:
			return s.malformed()
		}
		// A name: not read past what can be shown.
		if !s.fits(nextToken(s.args, int(d.InputOffset()))) {
			return s.stop(len(s.args))
		}
		name, err := d.ReadValue()
		if err != nil {
			return s.malformed()
		}
		secret := isSecretName(name, s.secret)
		nameEnd := int(d.InputOffset())
		if !s.copyTo(nameEnd) {
			return s.result()
		}
		vp := nextToken(s.args, nameEnd)
		if secret {
			// Skipped whatever its size, never copied.
			if err := d.SkipValue(); err != nil {
				return s.malformed()
			}
			if !s.hide(vp, int(d.InputOffset())) {
				return s.result()
			}
			continue
		}
		if !s.fits(vp) {
			return s.stop(len(s.args))
		}
		if err := d.SkipValue(); err != nil {
			return s.malformed()
		}
		if !s.copyTo(int(d.InputOffset())) {
			return s.result()
		}
	}
}

// end finishes after the top-level value: trailing white space is shown,
// anything else is malformed.
func (s *shower) end(d *jsontext.Decoder) string {
	end := int(d.InputOffset())
	if !s.copyTo(end) {
		return s.result()
	}
	if skipSpace(s.args, end) != len(s.args) {
		return s.malformed()
	}
	s.copyTo(len(s.args))
	return s.result()
}

// copyTo shows args[cp:end], as much of it as max allows; it reports
// whether all of it was shown.
func (s *shower) copyTo(end int) bool {
	seg := s.args[s.cp:end]
	i, n := 0, 0
	if len(seg) <= s.left {
		i, n = len(seg), utf8.RuneCount(seg)
	} else {
		for i < len(seg) && n < s.left {
			_, size := utf8.DecodeRune(seg[i:])
			i += size
			n++
		}
	}
	s.out.Write(seg[:i])
	s.left -= n
	s.cp += i
	if i < len(seg) {
		s.cut = true
		return false
	}
	return true
}

// hide shows args[cp:vp] (the colon before a secret value) then the mark
// for the value args[vp:end], as much of it as max allows.
func (s *shower) hide(vp, end int) bool {
	if !s.copyTo(vp) {
		return false
	}
	if s.left == 0 {
		s.cut = true
		return false
	}
	n := min(s.left, len(hiddenValue))
	s.out.WriteString(hiddenValue[:n])
	s.left -= n
	s.cp = end
	if n < len(hiddenValue) {
		s.cut = true
		return false
	}
	return true
}

// stop shows the arguments from cp on until max characters are shown,
// which fits has found happens before end.
func (s *shower) stop(end int) string {
	s.copyTo(end)
	return s.result()
}

// result is the display: what was shown, marked when it was cut.
func (s *shower) result() string {
	if s.cut {
		s.out.WriteString(moreBytes(len(s.args) - s.cp))
	}
	return s.out.String()
}

// malformed is the display of arguments that stopped being JSON at
// args[cp:]: what was read, marked.
func (s *shower) malformed() string {
	if n := len(s.args) - s.cp; n > 0 {
		s.out.WriteString("…(malformed; " + strconv.Itoa(n) + " more bytes)")
	} else {
		s.out.WriteString("…(malformed)")
	}
	return s.out.String()
}

// fits reports whether the token at args[p:] can be read whole before
// the display is cut, or may be: false when it runs on past the bytes
// that certainly hold the characters left to show (a character is at
// most 4 bytes), so that the display stops inside it and it need not be
// read to its end. Only such a long token is probed: a string by looking
// for its end, an object or array with a second tokenizer over those
// bytes alone.
func (s *shower) fits(p int) bool {
	window := len(s.args) - p
	if window/4 <= s.left {
		return true
	}
	w := s.args[p : p+4*s.left+4]
	if w[0] == '"' {
		// A string (the usual long token): it fits if it ends within w.
		for i := 1; i < len(w); i++ {
			switch w[i] {
			case '\\':
				i++
			case '"':
				return true
			}
		}
		return false
	}
	if w[0] != '{' && w[0] != '[' {
		return true // a number or a literal
	}
	err := showDecoder(w).SkipValue()
	// A syntax error within the window: the tokenizer reads no further
	// than it, and marks the arguments malformed.
	return err == nil || !errors.Is(err, io.ErrUnexpectedEOF)
}

// skipSpace is the offset of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// nextToken is the offset of the token after a value or name that ends
// at i: past white space and one ',' or ':'.
func nextToken(b []byte, i int) int {
	i = skipSpace(b, i)
	if i < len(b) && (b[i] == ',' || b[i] == ':') {
		i = skipSpace(b, i+1)
	}
	return i
}

// isSecretName reports whether the quoted member name raw is one of
// secret, as IsSecret does, without allocating for a name with no escape.
func isSecretName(raw jsontext.Value, secret []string) bool {
	if len(raw) < 2 {
		return false
	}
	name := []byte(raw[1 : len(raw)-1])
	if bytes.IndexByte(name, '\\') >= 0 {
		// A character is at most 4 bytes, 12 as escapes (a surrogate
		// pair): a longer name is none of secret.
		longest := 0
		for _, s := range secret {
			longest = max(longest, len(s))
		}
		if len(name) > 12*longest {
			return false
		}
		var buf [64]byte
		u, _ := jsontext.AppendUnquote(buf[:0], raw)
		name = u
	}
	for _, s := range secret {
		if bytes.EqualFold(name, []byte(s)) {
			return true
		}
	}
	return false
}

// plainInput is the display of a plain tool's arguments: its "input",
// decoded as encoding/json decodes it and cut to max characters, when
// the arguments are one object whose "input" (named exactly, once) is a
// string (or null, shown as nothing).
func plainInput(args []byte, max int) (string, bool) {
	d := showDecoder(args)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	var input jsontext.Value
	for d.PeekKind() == '"' {
		name, err := d.ReadValue()
		if err != nil {
			return "", false
		}
		if string(name) != `"input"` && !(bytes.IndexByte(name, '\\') >= 0 && nameIs(name, "input")) {
			if d.SkipValue() != nil {
				return "", false
			}
			continue
		}
		if input != nil {
			return "", false // a repeated "input"
		}
		if input, err = d.ReadValue(); err != nil {
			return "", false
		}
	}
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '}' || skipSpace(args, int(d.InputOffset())) != len(args) {
		return "", false
	}
	switch input.Kind() {
	case 'n':
		return "", true
	case '"':
		return showString(input[1:len(input)-1], max), true
	}
	return "", false
}

// nameIs reports whether the quoted name raw, unescaped, is exactly name.
func nameIs(raw jsontext.Value, name string) bool {
	var buf [64]byte
	u, err := jsontext.AppendUnquote(buf[:0], raw)
	return err == nil && string(u) == name
}

// showString is the JSON string body s decoded as encoding/json decodes
// it (invalid UTF-8 and a lone surrogate become U+FFFD), cut to max
// characters as cutRaw cuts, N counting decoded bytes.
func showString(s []byte, max int) string {
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return cutRaw(s, max)
	}
	var b strings.Builder
	b.Grow(min(len(s), max))
	n, more := 0, 0
	for r := 0; r < len(s); {
		c, size := s[r], 1
		var rr rune
		switch {
		case c == '\\':
			rr, size = unescape(s[r:])
		case c < utf8.RuneSelf:
			rr = rune(c)
		default:
			rr, size = utf8.DecodeRune(s[r:])
		}
		r += size
		if n < max {
			b.WriteRune(rr)
			n++
		} else {
			more += utf8.RuneLen(rr)
		}
	}
	if more > 0 {
		b.WriteString(moreBytes(more))
	}
	return b.String()
}

// unescape decodes the escape at the start of s (a valid one: the
// tokenizer read the string), and how many bytes it takes.
func unescape(s []byte) (rune, int) {
	if len(s) < 2 {
		return utf8.RuneError, len(s)
	}
	switch s[1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		rr := hex4(s[2:])
		if rr < 0 {
			return utf8.RuneError, len(s)
		}
		if utf16.IsSurrogate(rr) {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if dec := utf16.DecodeRune(rr, hex4(s[8:])); dec != unicode.ReplacementChar {
					return dec, 12
				}
			}
			return unicode.ReplacementChar, 6
		}
		return rr, 6
	}
	return rune(s[1]), 2 // '"', '\\', '/'
}

// hex4 is the value of the four hex digits at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
