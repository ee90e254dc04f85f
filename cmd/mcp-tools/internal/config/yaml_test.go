package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goccy "github.com/goccy/go-yaml"
)

// yamlCorpus are documents whose meaning must not change from the loader
// that used github.com/goccy/go-yaml to the one on go.yaml.in/yaml/v4.
var yamlCorpus = []string{
	"a: 2024-01-01", "a: 1e3", "a: 1.5e3", "a: 0755", "a: 1_000", "a: +5", "a: -0x1F", "a: 0x1F", "a: yes",
	"a: no", "a: on", "a: off", "a: y", "a: Null", "a: ~", "a:", "a: null", "a: NULL", "a: 18446744073709551615",
	"a: 18446744073709551616", "a: -9223372036854775808", "a: -9223372036854775809", "a: !!str 12", "a: '12'",
	`a: "12"`, "a: 12:30", "a: 1.", "a: .5", "a: -.5", "a: 0.", "a: 00", "a: 0", "a: -0", "a: 1e", "a: 0b101",
	"a: 0o17", "a: 08", "a: 1..2", "a: _1", "a: 1__0", "a: 2001-12-14t21:59:43.10-05:00",
	"a: 2001-12-14 21:59:43", "1: x", "true: x", "null: x", "a: [1, b, 'c']", "a: |\n  x\n  y\n",
	"a: >\n  x\n  y\n", "a: |-\n  x\n", "- 1\n- 2", "a: 0x", "a: 1-2", "a: Infinity", "a: NaN", "a: !!int '7'",
	"a: !!float 7", "a: !custom x", "a: !custom 12", "a: !0 000", "a: 3.14.15", "a: True", "a: TRUE", "a: tRUE", "a: False", "a: 1.0",
	"a: -1.5", "a: +.5", "a: 1_0.5", "a: 0x_1F", "a: 0xFF_FF", "a: 0XFF", "a: 0B1", "a: 9223372036854775808",
	"a: 1e-3", "a: 1.5E3", "a: 1.5e+3", "a: .", "a: -", "a: '-'", "a: #comment\n", "a: b # comment",
	"a: 'it''s'", `a: "tab\there \u00e9"`, "a: héllo wörld", "a: ${VAR}", "a: [${A}, '${B}']",
	"a: {b: {c: [1, {d: e}]}}", "a:\n  - b: 1\n    c: 2\n  - d\n", "x: &x {p: 1}\na: *x",
	"x: &x {p: 1}\na: {<<: *x, q: 2}", "x: &x {p: 1, q: 1}\na:\n  q: 2\n  <<: *x\n",
	"x: &x {p: 1}\ny: &y {p: 2, r: 3}\na: {<<: [*x, *y]}", "x: &s hello\na: *s", "a: 1\n---\nb: 2",
	"---\na: 1\n...\n", "", "# just a comment\n", "a: \"multi\n  line\"", "a: plain\n  continued",
	"? a\n: 1", "a: !!bool true", "a: !!null ''", "a: [a, b]: c",
	"00000000: x", "~: x", "1.50: x", "0x1F: x", "True: x", ".inf: x", "'01': x", "1e3: x", "-0: x", "1_0: x",
	"18446744073709551616: x", "!!str 01: x", "1.0: x", "0.000001: x", "1234567.0: x", "'<<': {a: 1}",
	// Keys are compared as written: two that print alike are two keys,
	// and the later wins.
	"1: a\n01: b", "0x1: a\n1: b", "true: a\nTrue: b", "null: a\n~: b", "1.0: a\n1: b", "1.5: a\n1.50: b",
	"~: a\nnull: b",
	// The parser takes %YAML 1.1 only; the previous loader 1.0 to 1.3.
	"%YAML 1.2\n---\na: 1", "%YAML 1.0\n---\na: 1", "%YAML 1.3\n---\na: yes", "%YAML\t1.2   # c\n---\na: 1",
	"# head\n\n%YAML 1.2\n---\na: 1\n", "%YAML 1.2\na: 1", "%YAML 2.0\n---\na: 1",
	// JSON is YAML, but for two escapes the parser does not take: \/ and
	// the UTF-16 surrogate pairs JSON writes characters past U+FFFF as.
	`{"url": "https:\/\/example.com\/x"}`, `{"a": "\ud83d\ude00 \uD83D\uDE00!"}`, `{"a": "\\/ \\\/", "b": ["\/"]}`,
	"{\n\t\"a\": \"\\/\",\n\t\"b\": 1\n}\n", `{"a": "\ud800"}`, `{"a": "\ud800\u0041"}`, `{"a": "\/"`,
	"%YAML 1.2\n%YAML 1.2\n---\na: 1", "%YAML 1.1\n---\na: 0755", "a: |\n  %YAML 1.2\n", "\"a\": 1\n...\n%YAML 1.2\n---\nb: 2",
}

// goccyJSON is what the old loader made of src, as JSON; "error" when it
// refused the document or its value has no JSON form.
func goccyJSON(src string) string {
	var v any
	if err := goccy.Unmarshal([]byte(src), &v); err != nil {
		return "error"
	}
	js, err := json.Marshal(v)
	if err != nil {
		return "error"
	}
	return string(js)
}

func oursJSON(src string) string {
	v, _, err := parseYAML([]byte(src))
	if err != nil {
		return "error"
	}
	js, err := json.Marshal(v)
	if err != nil {
		return "error"
	}
	return string(js)
}

// TestYAMLMeansWhatItMeant: every document of the corpus, and every YAML
// file in testdata, reads as the same data as with the old loader.
func TestYAMLMeansWhatItMeant(t *testing.T) {
	docs := append([]string(nil), yamlCorpus...)
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "testdata", "*.yaml"))
	for _, pattern := range []string{
		filepath.Join("..", "..", "..", "..", "testdata", "*", "*.yaml"),
		filepath.Join("..", "..", "testdata", "*", "*.yaml"),
		filepath.Join("..", "..", "..", "..", "interop", "*", "*.yaml"),
	} {
		more, _ := filepath.Glob(pattern)
		files = append(files, more...)
	}
	if len(files) == 0 {
		t.Fatal("no YAML files found in testdata")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for _, src := range docs {
		want, got := goccyJSON(src), oursJSON(src)
		if got != want {
			t.Errorf("%.80q:\n got %s\nwant %s", src, got, want)
		}
	}
}

func TestYAMLRefuses(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for c := 'b'; c <= 'k'; c++ {
		p := string(c - 1)
		bomb += string(c) + ": &" + string(c) + " [*" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + "]\n"
	}
	// Merges of empty maps add no values, but following them is work all
	// the same: ten maps of ten merges each stand for 10^10 of them.
	mergeBomb := "a: &a {}\n"
	for c := 'b'; c <= 'k'; c++ {
		p := "*" + string(c-1)
		mergeBomb += string(c) + ": &" + string(c) + " {<<: [" + strings.Repeat(p+", ", 9) + p + "]}\n"
	}
	for _, tt := range []struct {
		name, src, msg string
		line           int
	}{
		{"duplicate key", "a: 1\nb: 2\na: 3\n", `mapping key "a" already defined at line 1`, 3},
		{"duplicate in flow", "x:\n  {a: 1, a: 2}\n", `mapping key "a" already defined at line 2`, 2},
		{"map as key", "? [a]\n: 1\n", "a key must be a plain value", 1},
		{"merge of a string", "a: {<<: x}\n", "a merge (<<) takes a map or a list of maps", 1},
		{"unclosed", "a: 1\nb: [x\n", "", 0},
		{"alias bomb", bomb, "more than 1000000 values", 0},
		{"duplicate merge", "x: &x {a: 1}\nz:\n  <<: *x\n  <<: {a: 3}\n", `mapping key "<<" already defined at line 3`, 4},
		{"duplicate as written", "'01': a\n01: b\n", `mapping key "01" already defined at line 1`, 2},
		{"duplicate alias key", "a: &k x\nb:\n  x: 1\n  *k : 2\n", `mapping key "x" already defined at line 3`, 4},
		{"merge of a list of lists", "a:\n  <<: [{b: 1}, [{c: 1}]]\n", "a merge (<<) takes a map or a list of maps", 2},
		{"merge of an alias of a list", "x: &x [{b: 1}]\na:\n  <<: [*x]\n", "a merge (<<) takes a map or a list of maps", 3},
		{"merge bomb", mergeBomb, "more than 1000000 values", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseYAML([]byte(tt.src))
			ye, ok := err.(*yamlError)
			if !ok {
				t.Fatalf("got %v (%T), want a *yamlError", err, err)
			}
			if !strings.Contains(ye.Message, tt.msg) {
				t.Errorf("got %q, want it to contain %q", ye.Message, tt.msg)
			}
			if tt.line != 0 && ye.Line != tt.line {
				t.Errorf("got line %d, want %d", ye.Line, tt.line)
			}
		})
	}
}

// TestYAMLErrorLines: a file the parser refuses is refused at the line
// of its problem (or of the construct it is in), counted from 1.
func TestYAMLErrorLines(t *testing.T) {
	for _, tt := range []struct {
		src  string
		line int
	}{
		{"a: 1\nb: 2\n- c\n", 3},
		{"- a\nb: 1\n", 2},
		{"a: 1\nb: [1, 2\n", 2},
		{"a: 1\nb: {x: 1\n", 2},
		{"a: 1\nb: &a &b x\n", 2},
		{"a: 1\nb: |\n  x\n y\n", 4},
		{"a: 1\nb:\n  c: 1\n d: 2\n", 4},
		{"%YAML 2.0\n---\na: 1\n", 1},
		{"a: \"\\q\"\n", 1},
		{"a: 1\n\tb: 2\n", 2},
		{"a: 1\nb: \"x\\q\"\n", 2},
		{"a: 1\n\nb: \x01\n", 3},
		{"a: 1\n\nb: \xff\n", 3},
		{"a: \xc3\n", 1},
		{"a: 1 # *x\nb: [1, *x]\n", 2},
		{"a: *x\n", 1},
	} {
		_, _, err := parseYAML([]byte(tt.src))
		ye, ok := err.(*yamlError)
		if !ok {
			t.Errorf("%q: got %v (%T), want a *yamlError", tt.src, err, err)
			continue
		}
		if ye.Line != tt.line {
			t.Errorf("%q: %s at line %d, want line %d", tt.src, ye.Message, ye.Line, tt.line)
		}
	}
}

func TestLineOf(t *testing.T) {
	src := "server:\n  call_timeout: 5x\ntools:\n  - name: a\n    process:\n      command: [sh]\n  - name: b\n    env: {K: v}\n"
	_, root, err := parseYAML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		want int
	}{
		{"server.call_timeout", 2},
		{"server", 1},
		{"tools[0].name", 4},
		{"tools[0].process.command[0]", 6},
		{"tools[1]", 7},
		{"tools[1].env.K", 8},
		{"tools[1].nope", 7}, // the nearest ancestor that exists
		{"tools[9].name", 3},
		{"nope", 0},
		{"", 0},
	} {
		if got := lineOf(root, tt.path); got != tt.want {
			t.Errorf("lineOf(%q) = %d, want %d", tt.path, got, tt.want)
		}
	}
}

// FuzzYAML: whatever the input, the loader returns a *yamlError or plain
// data. (The two parsers differ on malformed and odd inputs, such as a
// lone "?" or tabs inside plain scalars, so the fuzzer does not compare them;
// TestYAMLMeansWhatItMeant does, on documents people write.)
func FuzzYAML(f *testing.F) {
	for _, s := range yamlCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		v, _, err := parseYAML([]byte(src))
		if err != nil {
			if _, ok := err.(*yamlError); !ok {
				t.Fatalf("%q: got %v (%T), want a *yamlError", src, err, err)
			}
			return
		}
		if !plainData(v) {
			t.Fatalf("%q: got %#v, not plain data", src, v)
		}
	})
}

// plainData reports whether v is made only of what JSON can hold (and
// the floats ±Inf and NaN).
func plainData(v any) bool {
	switch v := v.(type) {
	case nil, bool, string, uint64, int64, float64:
		return true
	case []any:
		for _, e := range v {
			if !plainData(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range v {
			if !plainData(e) {
				return false
			}
		}
		return true
	}
	return false
}
