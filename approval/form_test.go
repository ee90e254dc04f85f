package approval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// mailIn has one argument of every kind a form handles.
type mailIn struct {
	To       string            `json:"to" jsonschema:"description=Recipient address,pattern=^[a-z@.]+$"`
	Priority string            `json:"priority,omitempty" jsonschema:"enum=low,enum=high"`
	Count    int               `json:"count,omitempty" jsonschema:"minimum=1,maximum=10"`
	Urgent   bool              `json:"urgent,omitempty"`
	Meta     map[string]string `json:"meta,omitempty"`
	Tags     []string          `json:"tags,omitempty"`
	Body     string            `json:"body" jsonschema:"maxLength=2000"`
	Token    string            `json:"token,omitempty" secret:"true" jsonschema:"description=API token"`
}

var mail = typed.MustNew("send_mail", "Send mail.", func(context.Context, mailIn) (string, error) { return "sent", nil })

// longBody is 200 characters: the message shows 80 of them.
var longBody = strings.Repeat("long text ", 20)

// mailArgs are the model's arguments, spaced and ordered as a model might
// send them.
var mailArgs = json.RawMessage(`{"to": "bob@x.io", "priority":"low", "count":2, "urgent":false, "meta":{"k": "v"}, "tags":["a","b"], "body":"` + longBody + `", "token":"s3cret"}`)

func mailForm(t testing.TB) approval.Form {
	t.Helper()
	f, err := approval.NewForm(mail.Info(), mailArgs)
	if err != nil {
		t.Fatalf("NewForm: %v", err)
	}
	return f
}

// properties decodes a form's schema.
func properties(t *testing.T, f approval.Form) map[string]map[string]any {
	t.Helper()
	var s struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(f.Schema, &s); err != nil {
		t.Fatalf("form schema %s: %v", f.Schema, err)
	}
	if s.Type != "object" || s.Required != nil {
		t.Errorf("form schema type %q, required %v; want object, no required list", s.Type, s.Required)
	}
	return s.Properties
}

func TestNewFormProperties(t *testing.T) {
	props := properties(t, mailForm(t))
	tests := []struct {
		name string
		want map[string]any
	}{
		{name: "to", want: map[string]any{"type": "string", "description": "Recipient address", "default": "bob@x.io"}},
		{name: "priority", want: map[string]any{"type": "string", "enum": []any{"low", "high"}, "default": "low"}},
		{name: "count", want: map[string]any{"type": "integer", "minimum": 1.0, "maximum": 10.0, "default": 2.0}},
		{name: "urgent", want: map[string]any{"type": "boolean", "default": false}},
		{name: "meta", want: map[string]any{"type": "string", "description": "JSON value", "default": `{"k":"v"}`}},
		{name: "tags", want: map[string]any{"type": "string", "description": "JSON value", "default": `["a","b"]`}},
		{name: "body", want: map[string]any{"type": "string", "maxLength": 2000.0, "default": longBody}},
		{name: "token", want: map[string]any{"type": "string", "description": "API token (secret: not shown; leave empty to keep the model's value)"}},
		{name: "remember", want: map[string]any{"type": "boolean", "title": "Remember for this session", "description": `Do not ask again about "send_mail" for the rest of this session`, "default": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := props[tt.name]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("property %q = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
	if len(props) != len(tests) {
		t.Errorf("form has %d properties, want %d", len(props), len(tests))
	}
}

func TestNewFormGolden(t *testing.T) {
	f := mailForm(t)
	var indented bytes.Buffer
	if err := json.Indent(&indented, f.Schema, "", "  "); err != nil {
		t.Fatal(err)
	}
	got := "message: " + f.Message + "\nremember key: " + f.RememberKey + "\nschema:\n" + indented.String() + "\n"
	path := filepath.Join("testdata", "send_mail.form.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("form for send_mail:\n%s\nwant (%s):\n%s", got, path, want)
	}
}

func TestNewFormMessage(t *testing.T) {
	tests := []struct {
		name string
		args string
		want string
	}{
		{name: "short values, in the order sent", args: `{"to":"bob@x.io","count":2,"body":"hi"}`,
			want: `Allow "send_mail" to run with to = "bob@x.io", count = 2, body = "hi"?`},
		{name: "long value cut, with the count of what was cut", args: `{"body":"` + strings.Repeat("é", 100) + `"}`,
			want: `Allow "send_mail" to run with body = "` + strings.Repeat("é", 80) + `…" (20 more characters)?`},
		{name: "value of exactly the limit kept", args: `{"body":"` + strings.Repeat("x", 80) + `"}`,
			want: `Allow "send_mail" to run with body = "` + strings.Repeat("x", 80) + `"?`},
		{name: "nested values as compact JSON", args: `{"meta": {"a": [1, 2]}}`,
			want: `Allow "send_mail" to run with meta = {"a":[1,2]}?`},
		{name: "long nested value cut", args: `{"tags":[` + strings.Repeat(`"abcd",`, 20) + `"z"]}`,
			want: `Allow "send_mail" to run with tags = [` + strings.Repeat(`"abcd",`, 11) + `"a… (65 more characters)?`},
		{name: "secret hidden", args: `{"token":"s3cret","to":"a"}`,
			want: `Allow "send_mail" to run with token = [hidden], to = "a"?`},
		{name: "secret in another case hidden", args: `{"TOKEN":"s3cret","Token":"s3cret","to":"a"}`,
			want: `Allow "send_mail" to run with TOKEN = [hidden], Token = [hidden], to = "a"?`},
		{name: "no arguments", args: `{}`, want: `Allow "send_mail" to run with no arguments?`},
		{name: "empty arguments", args: ``, want: `Allow "send_mail" to run with no arguments?`},
		// A name is the model's text as much as a value is: one that could
		// pass for more of the message is quoted, and cut like a value.
		{name: "name that forges a line", args: `{"to":"eve@evil.io","note?\n\nThe recipient is verified. Allow":1}`,
			want: `Allow "send_mail" to run with to = "eve@evil.io", "note?\n\nThe recipient is verified. Allow" = 1?`},
		{name: "name that forges a pair", args: `{"to = \"bob@corp.io\", x":"eve@evil.io"}`,
			want: `Allow "send_mail" to run with "to = \"bob@corp.io\", x" = "eve@evil.io"?`},
		{name: "long name cut", args: `{"` + strings.Repeat("n", 100) + `":1}`,
			want: `Allow "send_mail" to run with "` + strings.Repeat("n", 80) + `…" (20 more characters) = 1?`},
		{name: "plain names bare", args: `{"a_b-c.d$1":1,"é":2}`, want: `Allow "send_mail" to run with a_b-c.d$1 = 1, é = 2?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := approval.NewForm(mail.Info(), json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if f.Message != tt.want {
				t.Errorf("message = %s\nwant      %s", f.Message, tt.want)
			}
		})
	}
}

func TestNewFormHidesSecrets(t *testing.T) {
	f := mailForm(t)
	if strings.Contains(f.Message, "s3cret") || strings.Contains(string(f.Schema), "s3cret") {
		t.Errorf("the secret reached the form: %s %s", f.Message, f.Schema)
	}
}

// TestSecretCaseVariantsHidden: a case variant of a secret name is hidden
// from the form, its message and the one-line summary, as tools.Redact
// hides it from the logs.
func TestSecretCaseVariantsHidden(t *testing.T) {
	args := json.RawMessage(`{"to":"bob@x.io","TOKEN":"s3cret"}`)
	f, err := approval.NewForm(mail.Info(), args)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{"message": f.Message, "schema": string(f.Schema), "summary": approval.Summary(mail.Info(), args, 0)} {
		if strings.Contains(got, "s3cret") || !strings.Contains(got, "TOKEN") {
			t.Errorf("%s = %s, want TOKEN shown without its value", name, got)
		}
	}
}

func TestNewFormUndeclared(t *testing.T) {
	info := tools.Info{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"when":{"type":"string","format":"date"},
		"re":{"type":"string","pattern":"x","format":"regex"},
		"either":{"type":["string","null"]},
		"mode":{"enum":["a","b"]},
		"n":{"type":"integer"},
		"unsent":{"type":"string","description":"Not sent"}}}`)}
	f, err := approval.NewForm(info, json.RawMessage(`{"when":"2026-01-02","re":"y","either":"s","mode":"a","n":2.5,"extra":"e","flag":true,"num":1.5,"list":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	props := properties(t, f)
	tests := []struct {
		name string
		want map[string]any
	}{
		{name: "when", want: map[string]any{"type": "string", "format": "date", "default": "2026-01-02"}},
		{name: "re", want: map[string]any{"type": "string", "default": "y"}}, // no pattern, no format elicitation lacks
		{name: "either", want: map[string]any{"type": "string", "description": "JSON value", "default": `"s"`}},
		{name: "mode", want: map[string]any{"type": "string", "enum": []any{"a", "b"}, "default": "a"}},
		{name: "n", want: map[string]any{"type": "string", "description": "JSON value", "default": "2.5"}}, // not an integer
		{name: "extra", want: map[string]any{"type": "string", "default": "e"}},
		{name: "flag", want: map[string]any{"type": "boolean", "default": true}},
		{name: "num", want: map[string]any{"type": "number", "default": 1.5}},
		{name: "list", want: map[string]any{"type": "string", "description": "JSON value", "default": "[1]"}},
		{name: "unsent", want: map[string]any{"type": "string", "description": "Not sent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := props[tt.name]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("property %q = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestNewFormRememberKey(t *testing.T) {
	tests := []struct {
		name string
		args string
		want string
	}{
		{name: "free", args: `{"a":"x"}`, want: "remember"},
		{name: "argument called remember", args: `{"remember":"milk"}`, want: "remember_for_session"},
		{name: "both taken", args: `{"remember":"milk","remember_for_session":true}`, want: "_remember_for_session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := approval.NewForm(tools.Info{Name: "t"}, json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if f.RememberKey != tt.want {
				t.Errorf("RememberKey = %q, want %q", f.RememberKey, tt.want)
			}
			if got := properties(t, f)[tt.want]["type"]; got != "boolean" {
				t.Errorf("property %q has type %v, want the boolean remember box", tt.want, got)
			}
			// The argument keeps its own field, and ticking the box is not an edit.
			out, err := f.Decide(json.RawMessage(tt.args), approval.Answer{Action: "accept", Content: map[string]any{tt.want: true}}, nil)
			if err != nil || out.Decision != approval.Approve || !out.Remember || string(out.Args) != tt.args {
				t.Errorf("Decide(tick the box) = %+v, %v; want Approve, remembered, the args unchanged", out, err)
			}
		})
	}
}

func TestNewFormNotAnObject(t *testing.T) {
	for _, args := range []string{`[1]`, `"x"`, `3`, `{"a":`, `{"a":1} {}`, `{"a":1}x`} {
		t.Run(args, func(t *testing.T) {
			if _, err := approval.NewForm(mail.Info(), json.RawMessage(args)); err == nil {
				t.Errorf("NewForm(%s) = nil error, want one", args)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	v := schema.MustCompile(mail.Info().InputSchema)
	tests := []struct {
		name     string
		answer   approval.Answer
		want     approval.Decision
		remember bool
		args     map[string]any // with Edit: the fields the edited args must hold
		reason   string         // with Reject: what the reason must contain
		errMsg   string         // an invalid-arguments error starting so
	}{
		{name: "accept without content", answer: approval.Answer{Action: "accept"}, want: approval.Approve},
		{name: "accept with the same values", answer: approval.Answer{Action: "accept", Content: map[string]any{"to": "bob@x.io", "count": 2, "meta": `{ "k" : "v" }`, "body": longBody}}, want: approval.Approve},
		{name: "remember", answer: approval.Answer{Action: "accept", Content: map[string]any{"remember": true}}, want: approval.Approve, remember: true},
		{name: "remember unticked", answer: approval.Answer{Action: "accept", Content: map[string]any{"remember": false}}, want: approval.Approve},
		{name: "edit", answer: approval.Answer{Action: "accept", Content: map[string]any{"to": "eve@x.io", "count": 3, "remember": true}},
			want: approval.Edit, remember: true, args: map[string]any{"to": "eve@x.io", "count": 3.0, "priority": "low", "token": "s3cret"}},
		{name: "edit nested JSON", answer: approval.Answer{Action: "accept", Content: map[string]any{"meta": `{"k":"w"}`, "tags": `[]`}},
			want: approval.Edit, args: map[string]any{"meta": map[string]any{"k": "w"}, "tags": []any{}}},
		{name: "secret left empty keeps the model's value", answer: approval.Answer{Action: "accept", Content: map[string]any{"token": ""}}, want: approval.Approve},
		{name: "secret replaced", answer: approval.Answer{Action: "accept", Content: map[string]any{"token": "new"}},
			want: approval.Edit, args: map[string]any{"token": "new"}},
		{name: "edit breaking the tool's schema", answer: approval.Answer{Action: "accept", Content: map[string]any{"to": "BOB"}},
			errMsg: `the reviewer's edit is invalid: field "to"`},
		{name: "edit breaking the tool's schema in JSON text", answer: approval.Answer{Action: "accept", Content: map[string]any{"meta": `{"k":1}`}},
			errMsg: `the reviewer's edit is invalid: field "meta.k"`},
		{name: "wrong type", answer: approval.Answer{Action: "accept", Content: map[string]any{"count": "two"}},
			want: approval.Reject, reason: `Rejected: the reviewer's answer did not fit the form: field "count": expected integer, got string`},
		{name: "value outside the enum", answer: approval.Answer{Action: "accept", Content: map[string]any{"priority": "urgent"}},
			want: approval.Reject, reason: `Rejected: the reviewer's answer did not fit the form: field "priority"`},
		{name: "unknown field", answer: approval.Answer{Action: "accept", Content: map[string]any{"cc": "x"}},
			want: approval.Reject, reason: `Rejected: the reviewer's answer did not fit the form: unknown field "cc"`},
		{name: "JSON text edited to invalid JSON", answer: approval.Answer{Action: "accept", Content: map[string]any{"meta": `{"k":`}},
			want: approval.Reject, reason: `Rejected: the reviewer's answer did not fit the form: field "meta" must hold JSON text, got "{\"k\":"`},
		{name: "decline", answer: approval.Answer{Action: "decline"},
			want: approval.Reject, reason: `Rejected by reviewer: to="bob@x.io", priority="low", count=2, urgent=false, meta={"k":"v"}, tags=["a","b"], body="long text long text long text long text long text long text …" (140 more characters), token=[hidden]`},
		{name: "cancel", answer: approval.Answer{Action: "cancel"}, want: approval.Reject, reason: "Rejected by reviewer: cancelled by the user"},
		{name: "unknown action", answer: approval.Answer{Action: "maybe"}, want: approval.Reject, reason: `Rejected: the reviewer's answer "maybe" is not accept, decline or cancel; the tool did not run`},
		{name: "empty action", answer: approval.Answer{}, want: approval.Reject, reason: `is not accept, decline or cancel`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := mailForm(t).Decide(mailArgs, tt.answer, v)
			if tt.errMsg != "" {
				var te *tools.Error
				if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments || !strings.HasPrefix(te.Message, tt.errMsg) {
					t.Fatalf("Decide = %+v, %v; want an invalid-arguments error starting %q", out, err, tt.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if out.Decision != tt.want || out.Remember != tt.remember || out.By != "elicitation" {
				t.Errorf("Decide = %+v; want decision %s, remember %v, by elicitation", out, tt.want, tt.remember)
			}
			switch tt.want {
			case approval.Approve:
				if !bytes.Equal(out.Args, mailArgs) {
					t.Errorf("approved args = %s, want the model's exactly: %s", out.Args, mailArgs)
				}
			case approval.Edit:
				var got map[string]any
				if err := json.Unmarshal(out.Args, &got); err != nil {
					t.Fatalf("edited args %s: %v", out.Args, err)
				}
				for k, want := range tt.args {
					if !reflect.DeepEqual(got[k], want) {
						t.Errorf("edited %s = %v, want %v (args %s)", k, got[k], want, out.Args)
					}
				}
				if err := v.Validate(out.Args); err != nil {
					t.Errorf("edited args break the tool's schema: %v", err)
				}
			case approval.Reject:
				if !strings.Contains(out.Reason, tt.reason) || out.Args != nil || out.Remember {
					t.Errorf("Decide = %+v; want a rejection whose reason contains %q, no args", out, tt.reason)
				}
				if strings.Contains(out.Reason, "s3cret") {
					t.Errorf("reason %q shows the secret", out.Reason)
				}
			}
		})
	}
}

func TestDecideUnsentFields(t *testing.T) {
	args := json.RawMessage(`{"to":"bob@x.io","body":"hi"}`)
	f, err := approval.NewForm(mail.Info(), args)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content map[string]any
		want    approval.Decision
		args    string
	}{
		{name: "left empty", content: map[string]any{"meta": "", "tags": "", "token": ""}, want: approval.Approve, args: string(args)},
		{name: "added", content: map[string]any{"priority": "high", "meta": `{"a":"b"}`}, want: approval.Edit,
			args: `{"body":"hi","meta":{"a":"b"},"priority":"high","to":"bob@x.io"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.Decide(args, approval.Answer{Action: "accept", Content: tt.content}, schema.MustCompile(mail.Info().InputSchema))
			if err != nil || out.Decision != tt.want || string(out.Args) != tt.args {
				t.Errorf("Decide = %+v, %v; want %s with %s", out, err, tt.want, tt.args)
			}
		})
	}
}

func TestDecideZeroForm(t *testing.T) {
	out, err := approval.Form{}.Decide(mailArgs, approval.Answer{Action: "accept"}, nil)
	if err == nil || out.Decision != approval.Reject {
		t.Errorf("zero Form accept = %+v, %v; want an error and no approval", out, err)
	}
}

func TestSummary(t *testing.T) {
	info := tools.Info{Secret: []string{"key"}}
	tests := []struct {
		name string
		args string
		max  int
		want string
	}{
		{name: "pairs in order", args: `{"path":"a.txt","n":1,"key":"k"}`, want: `path="a.txt", n=1, key=[hidden]`},
		{name: "long value", args: `{"content":"` + strings.Repeat("a", 70) + `"}`, want: `content="` + strings.Repeat("a", 60) + `…" (10 more characters)`},
		{name: "cut to max", args: `{"a":"0123456789","b":"x"}`, max: 10, want: `a="0123456…`},
		{name: "no arguments", args: `{}`, want: "no arguments"},
		{name: "not an object", args: `[1]`, want: "arguments that are not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := approval.Summary(info, json.RawMessage(tt.args), tt.max); got != tt.want {
				t.Errorf("Summary = %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("default max", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("{")
		for i := range 20 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"field` + string(rune('a'+i)) + `":"` + strings.Repeat("v", 30) + `"`)
		}
		b.WriteString("}")
		got := approval.Summary(info, json.RawMessage(b.String()), 0)
		if n := utf8.RuneCountInString(got); n != approval.SummaryLen+1 || !strings.HasSuffix(got, "…") {
			t.Errorf("Summary of 20 long fields has %d characters (%s), want %d and an ellipsis", n, got, approval.SummaryLen+1)
		}
	})
}

func FuzzNewForm(f *testing.F) {
	f.Add([]byte(mailArgs))
	f.Add([]byte(`{"remember":1,"remember_for_session":{"a":[]}}`))
	f.Add([]byte(`{"a":"\u00e9","a":null}`))
	info := mail.Info()
	f.Fuzz(func(t *testing.T, args []byte) {
		form, err := approval.NewForm(info, args)
		if err != nil {
			return
		}
		// Whatever the arguments, accepting the form as shown runs them
		// unchanged.
		out, err := form.Decide(args, approval.Answer{Action: "accept"}, nil)
		if err != nil || out.Decision != approval.Approve || !bytes.Equal(out.Args, args) {
			t.Errorf("accepting the form for %s = %+v, %v; want Approve with the args", args, out, err)
		}
	})
}

// bankInfo takes numbers that a float64 may not hold.
var bankInfo = tools.Info{Name: "transfer", InputSchema: json.RawMessage(`{"type":"object","properties":{
	"account":{"type":"integer"},"n":{"type":"integer"},"x":{"type":"number"},"route":{"type":"object"}}}`)}

// TestNewFormLargeNumbers: a number a client holding numbers as float64
// would show rounded (9007199254740993 shows as 9007199254740992) is shown
// as JSON text, which every client keeps as it is.
func TestNewFormLargeNumbers(t *testing.T) {
	f, err := approval.NewForm(bankInfo, json.RawMessage(`{"account":9007199254740993,"n":9007199254740991,"x":1.50,"big":-9007199254740992,"frac":0.1000000000000000000001,"huge":1e400}`))
	if err != nil {
		t.Fatal(err)
	}
	props := properties(t, f)
	tests := []struct {
		name string
		want map[string]any
	}{
		{name: "account", want: map[string]any{"type": "string", "description": "JSON value", "default": "9007199254740993"}},
		{name: "n", want: map[string]any{"type": "integer", "default": 9007199254740991.0}},
		{name: "x", want: map[string]any{"type": "number", "default": 1.5}},
		{name: "big", want: map[string]any{"type": "string", "description": "JSON value", "default": "-9007199254740992"}},
		{name: "frac", want: map[string]any{"type": "string", "description": "JSON value", "default": "0.1000000000000000000001"}},
		{name: "huge", want: map[string]any{"type": "string", "description": "JSON value", "default": "1e400"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := props[tt.name]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("property %q = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

// TestDecideLargeIntegers: the arguments that run are exactly the answer's,
// number for number; a number past 2^53 that may have been rounded on its
// way from the person is refused, unless it is the model's own.
func TestDecideLargeIntegers(t *testing.T) {
	v := schema.MustCompile(bankInfo.InputSchema)
	tests := []struct {
		name    string
		args    string
		content map[string]any
		want    approval.Decision
		ran     string // the arguments that run, on Approve or Edit
		reason  string // on Reject
	}{
		{name: "large integer shown as text, left as it is", args: `{"account":9007199254740993}`,
			content: map[string]any{"account": "9007199254740993"}, want: approval.Approve, ran: `{"account":9007199254740993}`},
		{name: "large integer shown as text, edited", args: `{"account":9007199254740993}`,
			content: map[string]any{"account": "9007199254740995"}, want: approval.Edit, ran: `{"account":9007199254740995}`},
		{name: "large integer shown as text, edited by one", args: `{"account":9007199254740993}`,
			content: map[string]any{"account": "9007199254740992"}, want: approval.Edit, ran: `{"account":9007199254740992}`},
		{name: "edit to a large integer, exact", args: `{"n":1}`,
			content: map[string]any{"n": json.Number("9007199254740993")}, want: approval.Edit, ran: `{"n":9007199254740993}`},
		{name: "edit to a large integer, through float64", args: `{"n":1}`,
			content: map[string]any{"n": float64(9007199254740993)}, want: approval.Reject, reason: `field "n"`},
		{name: "edit to a large integer a float64 holds, maybe rounded", args: `{"n":1}`,
			content: map[string]any{"n": json.Number("9007199254740992")}, want: approval.Reject, reason: `field "n"`},
		{name: "small integer as float64", args: `{"n":1}`,
			content: map[string]any{"n": 2.0}, want: approval.Edit, ran: `{"n":2}`},
		{name: "unchanged, as float64", args: `{"n":9007199254740991}`,
			content: map[string]any{"n": 9007199254740991.0}, want: approval.Approve, ran: `{"n":9007199254740991}`},
		{name: "same number written otherwise", args: `{"x":1.50}`,
			content: map[string]any{"x": json.Number("15e-1")}, want: approval.Approve, ran: `{"x":1.50}`},
		{name: "nested large integer edited by one", args: `{"route":{"id":9007199254740992}}`,
			content: map[string]any{"route": `{"id":9007199254740993}`}, want: approval.Edit, ran: `{"route":{"id":9007199254740993}}`},
		{name: "nested large integer left as it is", args: `{"route":{"id":9007199254740993}}`,
			content: map[string]any{"route": `{ "id" : 9007199254740993 }`}, want: approval.Approve, ran: `{"route":{"id":9007199254740993}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := json.RawMessage(tt.args)
			f, err := approval.NewForm(bankInfo, args)
			if err != nil {
				t.Fatal(err)
			}
			out, err := f.Decide(args, approval.Answer{Action: "accept", Content: tt.content}, v)
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if out.Decision != tt.want {
				t.Fatalf("Decide = %+v, want %s", out, tt.want)
			}
			if tt.want == approval.Reject {
				if !strings.Contains(out.Reason, tt.reason) || !strings.Contains(out.Reason, "the tool did not run") {
					t.Errorf("reason %q, want it to name %s and say the tool did not run", out.Reason, tt.reason)
				}
				return
			}
			if string(out.Args) != tt.ran {
				t.Errorf("args = %s, want exactly %s", out.Args, tt.ran)
			}
		})
	}
}

// deployInfo's env has a default that the tool applies when the model
// leaves it out.
var deployInfo = tools.Info{Name: "deploy", InputSchema: json.RawMessage(`{"type":"object","properties":{
	"service":{"type":"string"},
	"env":{"type":"string","enum":["staging","production"],"default":"production"},
	"replicas":{"type":"integer","default":3},
	"branch":{"type":"string","default":"main"},
	"limits":{"type":"object","default":{"cpu":2}},
	"key":{"type":"string","default":"k-default"}}}`), Secret: []string{"key"}}

// TestFormShowsTheToolsDefaults: an argument the model left out runs with
// the tool's default (typed tools apply it after the approval), so the
// form shows that default, as the field's value and in the message, and
// leaving it as shown approves the call as the model made it.
func TestFormShowsTheToolsDefaults(t *testing.T) {
	args := json.RawMessage(`{"service":"api"}`)
	f, err := approval.NewForm(deployInfo, args)
	if err != nil {
		t.Fatal(err)
	}
	props := properties(t, f)
	if got := props["env"]["default"]; got != "production" {
		t.Errorf("env default on the form = %v, want the tool's default, production", got)
	}
	if got := props["replicas"]["default"]; got != 3.0 {
		t.Errorf("replicas default on the form = %v, want the tool's default, 3", got)
	}
	if got := props["limits"]["default"]; got != `{"cpu":2}` {
		t.Errorf("limits default on the form = %v, want the tool's default as JSON text", got)
	}
	if got, ok := props["key"]["default"]; ok {
		t.Errorf("a secret's default is on the form: %v", got)
	}
	for _, want := range []string{`service = "api"`, `branch = "main"`, `env = "production"`, `replicas = 3`, `limits = {"cpu":2}`} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q does not say %s", f.Message, want)
		}
	}
	if strings.Contains(f.Message, "k-default") {
		t.Errorf("message %q shows a secret's default", f.Message)
	}
	v := schema.MustCompile(deployInfo.InputSchema)
	tests := []struct {
		name    string
		content map[string]any
		want    approval.Decision
		args    string
	}{
		{name: "accepted as shown", content: map[string]any{"service": "api", "env": "production", "replicas": 3.0, "limits": `{"cpu":2}`, "remember": false},
			want: approval.Approve, args: string(args)},
		{name: "accepted as shown, numbers as written", content: map[string]any{"replicas": json.Number("3.0"), "limits": `{ "cpu" : 2 }`},
			want: approval.Approve, args: string(args)},
		{name: "default changed", content: map[string]any{"service": "api", "env": "staging", "replicas": 3.0},
			want: approval.Edit, args: `{"env":"staging","service":"api"}`},
		// A field shown with a value and emptied was emptied on purpose.
		{name: "default cleared", content: map[string]any{"branch": ""},
			want: approval.Edit, args: `{"branch":"","service":"api"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.Decide(args, approval.Answer{Action: "accept", Content: tt.content}, v)
			if err != nil || out.Decision != tt.want || string(out.Args) != tt.args {
				t.Errorf("Decide = %s %s, %v; want %s with %s", out.Decision, out.Args, err, tt.want, tt.args)
			}
		})
	}
}
