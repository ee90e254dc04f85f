package tools_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcp-tools/mcp-tools/tools"
)

// TestShowArgsN: the bounded display copies the arguments through, hides
// every secret top-level value in place (whatever its type and size, in
// the original key order and formatting), and stops at max characters
// with the server's "…(N more bytes)" mark, N counting the arguments'
// bytes not shown.
func TestShowArgsN(t *testing.T) {
	typed := tools.Info{Name: "t", Secret: []string{"token", "key"}}
	none := tools.Info{Name: "n"}
	plain := tools.NewPlain(tools.Info{Name: "p"}, echo).Info()
	plainSecret := tools.NewPlain(tools.Info{Name: "p", Secret: []string{"input"}}, echo).Info()
	huge := strings.Repeat("s3cret", 700_000) // 4.2 MB
	tests := []struct {
		name string
		info tools.Info
		args string
		max  int
		want string
	}{
		{"no secret, under the bound", none, `{"a":1}`, 200, `{"a":1}`},
		{"no secret, cut", none, `{"note":"abcdefghij"}`, 5, `{"not…(16 more bytes)`},
		{"no secret, exactly the bound", none, `{"a":1}`, 7, `{"a":1}`},
		{"no secret, cut between characters", none, `{"a":"ééé"}`, 7, `{"a":"é…(6 more bytes)`},
		{"no secret, malformed, shown as it is", none, `{"a":"x`, 200, `{"a":"x`},
		{"no bound", none, `{"a":"abcdef"}`, 0, `{"a":"abcdef"}`},
		{"secret, key order kept", typed, `{"user":"ann","token":"s3cret"}`, 200, `{"user":"ann","token":"[hidden]"}`},
		{"secret, formatting kept", typed, "{ \"token\" : \"s3cret\",\n  \"user\": \"ann\" }", 200, "{ \"token\" : \"[hidden]\",\n  \"user\": \"ann\" }"},
		{"secret absent", typed, `{"user":"ann"}`, 200, `{"user":"ann"}`},
		{"secret repeated", typed, `{"token":"a","token":"s3cret"}`, 200, `{"token":"[hidden]","token":"[hidden]"}`},
		{"secret in another case", typed, `{"ToKeN":"s3cret","KEY":"s3cret"}`, 200, `{"ToKeN":"[hidden]","KEY":"[hidden]"}`},
		{"secret name escaped", typed, `{"\u0074oken":"s3cret"}`, 200, `{"\u0074oken":"[hidden]"}`},
		{"secret name case-folded (Kelvin sign)", typed, `{"\u212Aey":"s3cret"}`, 200, `{"\u212Aey":"[hidden]"}`},
		{"secret object", typed, `{"token":{"a":["s3cret",{"b":"s3cret"}]},"n":1}`, 200, `{"token":"[hidden]","n":1}`},
		{"secret number", typed, `{"token":123456,"n":1}`, 200, `{"token":"[hidden]","n":1}`},
		{"secret null", typed, `{"token":null}`, 200, `{"token":"[hidden]"}`},
		{"a nested secret name is not a field", typed, `{"a":{"token":"x"}}`, 200, `{"a":{"token":"x"}}`},
		{"cut after the hidden value", typed, `{"token":"s3cret","data":"xxxxxxxxxx"}`, 20, `{"token":"[hidden]",…(20 more bytes)`},
		{"cut inside the mark", typed, `{"token":"s3cret","data":"xxxxxxxxxx"}`, 12, `{"token":"[h…(21 more bytes)`},
		{"cut before the secret", typed, `{"data":"xxxxxxxxxx","token":"s3cret"}`, 10, `{"data":"x…(28 more bytes)`},
		{"huge secret, short display", typed, `{"token":"` + huge + `","user":"ann"}`, 200, `{"token":"[hidden]","user":"ann"}`},
		{"huge secret, then cut", typed, `{"token":"` + huge + `","user":"ann"}`, 22, `{"token":"[hidden]","u…(11 more bytes)`},
		{"white space only, cut", typed, "      ", 3, "   …(3 more bytes)"},
		{"not an object", typed, `["token","x"]`, 200, `["token","x"]`},
		{"not an object, cut", typed, `["token","x"]`, 3, `["t…(10 more bytes)`},
		{"malformed: unterminated secret", typed, `{"user":"ann","token":"s3cret`, 200, `{"user":"ann","token"…(malformed; 8 more bytes)`},
		{"malformed: no closing brace", typed, `{"token":"s3cret"`, 200, `{"token":"[hidden]"…(malformed)`},
		{"malformed: trailing comma", typed, `{"token":"s3cret",}`, 200, `{"token":"[hidden]"…(malformed; 2 more bytes)`},
		{"malformed: a bare secret", typed, `{"token": s3cret}`, 200, `{"token"…(malformed; 9 more bytes)`},
		{"malformed: a second object", typed, `{"token":"s3cret"} {"token":"s3cret"}`, 200, `{"token":"[hidden]"}…(malformed; 19 more bytes)`},
		{"malformed: not JSON at all", typed, `x{"token":"s3cret"}`, 200, `…(malformed; 19 more bytes)`},
		{"malformed: a value then more", typed, `[1] {"token":"s3cret"}`, 200, `[1]…(malformed; 19 more bytes)`},
		{"malformed after the cut", typed, `{"data":"xxxxxxxxxx","token":"s3cret"`, 5, `{"dat…(32 more bytes)`},
		{"plain shows its input", plain, `{"input":"2+2"}`, 200, "2+2"},
		{"plain input cut", plain, `{"input":"abcdefgh"}`, 3, "abc…(5 more bytes)"},
		{"plain input decoded", plain, `{"input":"a\nb\u00e9c\ud83d\ude00"}`, 200, "a\nbéc😀"},
		{"plain input decoded, then cut", plain, `{"input":"a\u00e9\u00e9\u00e9"}`, 2, "aé…(4 more bytes)"},
		{"plain input named with an escape", plain, `{"\u0069nput":"x"}`, 200, "x"},
		{"plain input repeated shows the object", plain, `{"input":"a","input":"b"}`, 200, `{"input":"a","input":"b"}`},
		{"plain input with invalid UTF-8", plain, "{\"input\":\"a\xffb\"}", 200, "a\ufffdb"},
		{"plain null input", plain, `{"input":null}`, 200, ""},
		{"plain without input shows the object", plain, `{"x":1}`, 200, `{"x":1}`},
		{"plain with a secret input", plainSecret, `{"input":"s3cret"}`, 200, tools.Hidden},
		{"plain with a huge input", plain, `{"input":"` + strings.Repeat("é", 1<<20) + `"}`, 3, "ééé…(2097146 more bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tools.ShowArgsN(tt.info, json.RawMessage(tt.args), tt.max)
			if got != tt.want {
				t.Errorf("ShowArgsN(%.80s, %d) = %.200q, want %.200q", tt.args, tt.max, got, tt.want)
			}
			if strings.Contains(got, "s3cret") {
				t.Errorf("ShowArgsN(%.80s, %d) = %.200s: the secret is in clear", tt.args, tt.max, got)
			}
		})
	}
}

// TestShowArgsNAllocs: arguments with no secret field, under the bound,
// cost one string conversion, as ShowArgs always did; a secret field in
// 4 MiB of arguments costs a few small allocations, not the arguments.
func TestShowArgsNAllocs(t *testing.T) {
	small := json.RawMessage(`{"user":"ann","note":"open the vault, please"}`)
	if n := testing.AllocsPerRun(100, func() { tools.ShowArgsN(tools.Info{}, small, 200) }); n > 1 {
		t.Errorf("no secret declared: %v allocations, want 1", n)
	}
	secret := tools.Info{Secret: []string{"token"}}
	big := json.RawMessage(`{"user":"ann","token":"s3cret","data":"` + strings.Repeat("x", 4<<20) + `"}`)
	var got string
	if n := testing.AllocsPerRun(5, func() { got = tools.ShowArgsN(secret, big, 200) }); n > 8 {
		t.Errorf("4 MiB with a secret: %v allocations, want a few", n)
	}
	if !strings.HasPrefix(got, `{"user":"ann","token":"[hidden]","data":"xxx`) {
		t.Errorf("4 MiB with a secret shows %.100s", got)
	}
}

// todayShowArgs is ShowArgs as it was before it was bounded (redaction by
// decoding into a map), kept to check the bounded display against it.
func todayShowArgs(info tools.Info, args json.RawMessage) string {
	if info.Plain {
		if tools.IsSecret("input", info.Secret) {
			return tools.Hidden
		}
		if m, err := strictMembers(args); err == nil {
			var in string
			if raw, ok := m["input"]; ok && json.Unmarshal(raw, &in) == nil {
				return in
			}
		}
	}
	return string(tools.Redact(args, info.Secret))
}

// strictMembers is tools' objectMembers: one object, no repeated name.
func strictMembers(args json.RawMessage) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	m := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if _, dup := m[name]; dup {
			return nil, errors.New("repeated")
		}
		m[name] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the object")
	}
	return m, nil
}

// redactedPrefix is an independent reading of args: the arguments with
// each secret top-level value replaced by Hidden, as far as they can be
// read (to the first error), and whether a secret name was seen.
func redactedPrefix(args []byte, secret []string) (out string, sawSecret bool) {
	d := jsontext.NewDecoder(bytes.NewReader(args), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var b strings.Builder
	last := 0
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return string(args), false // not an object: nothing is a field
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			break
		}
		if tools.IsSecret(name.String(), secret) {
			sawSecret = true
			b.Write(args[last:d.InputOffset()])
			if d.SkipValue() != nil {
				return b.String(), true
			}
			b.WriteString(`:"` + tools.Hidden + `"`)
			last = int(d.InputOffset())
			continue
		}
		if d.SkipValue() != nil {
			break
		}
	}
	b.Write(args[last:d.InputOffset()])
	return b.String(), sawSecret
}

// FuzzShowArgsN: whatever the arguments, the display never shows more of
// a planted secret than the arguments show outside secret fields, never
// more than max characters before its mark, is valid UTF-8 when the
// arguments are, and, with no secret name present in valid arguments, is
// exactly what ShowArgs then the server's truncate showed.
func FuzzShowArgsN(f *testing.F) {
	const planted = "PLANTED"
	suffix := regexp.MustCompile(`…\((malformed(; [0-9]+ more bytes)?|[0-9]+ more bytes)\)$`)
	seeds := []string{
		`{"user":"ann","token":"PLANTED"}`,
		`{"token":"PLANTED","token":"PLANTED","Token":["PLANTED"]}`,
		`{"ToKeN":{"a":"PLANTED"},"x":1}`,
		`{"\u0074oken":"PLANTED"}`,
		`{"\u212Aey":"PLANTED"}`,
		`{"user":"ann","token":"PLANTED`,
		`{"token":"PLANTED",}`,
		`{"token":"PLANTED"} {"token":"PLANTED"}`,
		`{ "data" : "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "token" : 12345 }`,
		`{"input":"a\nb\u00e9c\ud83d\ude00","token":"PLANTED"}`,
		`{"input":"éééééééé"}`,
		`{"input":null}`,
		`{"a":"ééé","b":[1,2,{"c":true}]}`,
		`["token","PLANTED"]`,
		`x{"token":"PLANTED"}`,
		"{\"a\":\"\xff\xfe\",\"token\":\"PLANTED\"}",
	}
	for _, s := range seeds {
		for _, mode := range []uint8{0, 1, 2, 3} {
			f.Add(s, 7, mode)
			f.Add(s, 200, mode)
		}
	}
	f.Fuzz(func(t *testing.T, args string, max int, mode uint8) {
		if max < 0 {
			max = -max
		}
		max = max%300 + 1
		var info tools.Info
		switch mode % 4 {
		case 0:
			info = tools.Info{Name: "t", Secret: []string{"token", "key"}}
		case 1:
			info = tools.Info{Name: "n"}
		case 2:
			info = tools.Info{Name: "p", InputSchema: tools.PlainSchema(), Plain: true}
		case 3:
			info = tools.Info{Name: "p", InputSchema: tools.PlainSchema(), Plain: true, Secret: []string{"token"}}
		}
		got := tools.ShowArgsN(info, json.RawMessage(args), max)
		shown := got
		if loc := suffix.FindStringIndex(got); loc != nil {
			shown = got[:loc[0]]
		}
		if n := utf8.RuneCountInString(shown); n > max {
			t.Errorf("%d characters shown, max %d: %q", n, max, got)
		}
		if utf8.ValidString(args) && !utf8.ValidString(got) {
			t.Errorf("valid UTF-8 arguments shown as invalid UTF-8: %q", got)
		}
		redacted, sawSecret := redactedPrefix([]byte(args), info.Secret)
		if len(info.Secret) > 0 && (!info.Plain || sawSecret) {
			if strings.Count(shown, planted) > strings.Count(redacted, planted) {
				t.Errorf("the planted secret is shown: %q (redacted: %q)", got, redacted)
			}
		}
		if !sawSecret && jsontext.Value(args).IsValid() {
			if want := truncateRunes(todayShowArgs(info, json.RawMessage(args)), max); got != want {
				t.Errorf("ShowArgsN(%q, %d) = %q, want %q as before", args, max, got, want)
			}
		}
	})
}
