package schema_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// TestMessagesDoNotEchoArguments: however large the arguments, the message
// quotes at most schema.MaxQuoted bytes of any one name or value, and lists
// at most schema.MaxListed problems. A 1 MiB argument once came back whole.
func TestMessagesDoNotEchoArguments(t *testing.T) {
	mib := strings.Repeat("a", 1<<20)
	ctl := strings.Repeat("\x01", 1<<20)
	strict := compile(t, true)
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	enumMany := `{"type":"object","properties":{"e":{"enum":[` + strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("v", 500)+`",`, 30), ",") + `]}}}`
	tests := []struct {
		name    string
		schema  string // empty: the strict searchIn schema
		args    string
		want    []string // substrings of the message
		maxLen  int      // in characters
		problem int      // how many problems, at least
	}{
		{name: "1 MiB unknown field", args: `{"query":"go","n":1,` + str(mib) + `:1}`,
			want: []string{`unknown field "aaaa`, `…" (1048576 bytes in all) (accepted fields: `}, maxLen: 500},
		{name: "1 MiB unknown field of control characters", args: `{"query":"go","n":1,` + str(ctl) + `:1}`,
			want: []string{`unknown field "\x01\x01`, `(1048576 bytes in all)`}, maxLen: 500},
		{name: "1 MiB unknown field in a nested object", args: `{"query":"go","n":1,"opts":{"query":"x",` + str(mib) + `:1}}`,
			want: []string{`unknown field "opts.aaaa`, `…" (1048581 bytes in all)`}, maxLen: 500},
		{name: "1 MiB unknown field close to a name", args: `{"query":"go","n":1,` + str(mib+"query") + `:1}`,
			want: []string{`(accepted fields:`}, maxLen: 500},
		{name: "1 MiB value too long", args: `{"query":"go","n":1,"tags":[` + str(mib) + `]}`,
			want: []string{`field "tags[0]": must be at most 10 characters long`}, maxLen: 500},
		{name: "1 MiB value breaking a pattern", args: `{"query":` + str(mib+"!") + `,"n":1}`,
			want: []string{`field "query": must match the regular expression "^[a-z ]+$" (pattern)`}, maxLen: 500},
		{name: "1 MiB value outside an enum", args: `{"query":"go","n":1,"color":` + str(mib) + `}`,
			want: []string{`must be one of "red", "green" (enum)`}, maxLen: 500},
		{name: "1 MiB value of the wrong type", args: `{"query":"go","n":` + str(mib) + `}`,
			want: []string{`field "n": expected integer, got string`}, maxLen: 500},
		{name: "1 MiB of broken JSON", args: `{"query":"` + mib,
			want: []string{`the arguments are not valid JSON`}, maxLen: 500},
		{name: "value in a map under a 1 MiB key", schema: `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`,
			args: `{"m":{` + str(mib) + `:"x"}}`, want: []string{`field "m.aaaa`, `…" (1048578 bytes in all): expected integer, got string`}, maxLen: 500},
		{name: "a long enum is cut", schema: enumMany, args: `{"e":1}`,
			want: []string{`must be one of "vvvv`, `, and 20 more (enum)`}, maxLen: 3000},
		{name: "many unknown fields", args: manyFields(20000),
			want: []string{`; and 19991 more problems`}, maxLen: 2000, problem: 20002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := strict
			if tt.schema != "" {
				v = schema.MustCompile(json.RawMessage(tt.schema))
			}
			err := v.Validate(json.RawMessage(tt.args))
			if err == nil {
				t.Fatal("Validate = nil, want an error")
			}
			msg := err.Error()
			if n := utf8.RuneCountInString(msg); n > tt.maxLen {
				t.Errorf("message is %d characters, want at most %d: %.600s", n, tt.maxLen, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %.600q lacks %q", msg, w)
				}
			}
			var ae *schema.ArgumentError
			if !errors.As(err, &ae) || len(ae.Problems) < tt.problem {
				t.Errorf("got %d problems, want at least %d: every problem stays in Problems", len(ae.Problems), tt.problem)
			}
		})
	}
}

// manyFields returns arguments missing both required fields, with n
// unknown ones.
func manyFields(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"zz%d":1`, i)
	}
	b.WriteString("}")
	return b.String()
}

func TestProblemFieldKeepsWholePath(t *testing.T) {
	key := strings.Repeat("k", 5000)
	ps := compile(t, true).Problems(json.RawMessage(`{"query":"go","n":1,"` + key + `":1}`))
	if len(ps) != 1 || ps[0].Field != key {
		t.Fatalf("got %d problems, field of %d bytes; want 1 with the whole %d-byte key", len(ps), len(ps[0].Field), len(key))
	}
	if len(ps[0].Message) > 500 {
		t.Errorf("message is %d bytes, want at most 500", len(ps[0].Message))
	}
}

func TestQuoteAndClip(t *testing.T) {
	quotes := []struct {
		name, in, want string
	}{
		{"short", "go", `"go"`},
		{"exactly the limit", strings.Repeat("a", schema.MaxQuoted), `"` + strings.Repeat("a", schema.MaxQuoted) + `"`},
		{"one over", strings.Repeat("a", schema.MaxQuoted+1), `"` + strings.Repeat("a", schema.MaxQuoted) + `…" (101 bytes in all)`},
		{"escapes count", strings.Repeat("\x01", 30), `"` + strings.Repeat(`\x01`, 25) + `…" (30 bytes in all)`},
		{"characters are not split", strings.Repeat("é", 60), `"` + strings.Repeat("é", 50) + `…" (120 bytes in all)`},
	}
	for _, tt := range quotes {
		t.Run("Quote/"+tt.name, func(t *testing.T) {
			if got := schema.Quote(tt.in); got != tt.want {
				t.Errorf("Quote = %s, want %s", got, tt.want)
			}
		})
	}
	clips := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short", "abc", 10, "abc"},
		{"head and tail", "0123456789abcdefghij", 9, "012345…hij"},
		{"characters are not split", "ééééé", 7, "éé…é"},
	}
	for _, tt := range clips {
		t.Run("Clip/"+tt.name, func(t *testing.T) {
			if got := schema.Clip(tt.in, tt.n); got != tt.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}
