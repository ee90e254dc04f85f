package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		wantErr string // substring; "" means valid
	}{
		{name: "simple", tool: "file_read"},
		{name: "digits and capitals", tool: "Read2"},
		{name: "64 characters", tool: strings.Repeat("a", 64)},
		{name: "empty", tool: "", wantErr: "tool name is empty"},
		{name: "65 characters", tool: strings.Repeat("a", 65), wantErr: "name is 65 characters long, more than the 64 allowed"},
		{name: "hyphen", tool: "file-read"},
		{name: "hyphens and underscores only", tool: "-_-"},
		{name: "64 characters with hyphens", tool: strings.Repeat("a-", 32)},
		{name: "65 characters with hyphens", tool: strings.Repeat("a-", 32) + "a", wantErr: "more than the 64 allowed: a tool name is 1 to 64 characters"},
		{name: "dot", tool: "file.read", wantErr: "only letters, digits, '_' and '-': a tool name is 1 to 64 characters of letters, digits, '_' and '-' ([A-Za-z0-9_-])"},
		{name: "space", tool: "file read", wantErr: "only letters, digits, '_' and '-'"},
		{name: "unicode letter", tool: "café", wantErr: "only letters, digits, '_' and '-'"},
		{name: "slash", tool: "a/b", wantErr: "only letters, digits, '_' and '-'"},
		{name: "every range's ends", tool: "azAZ09_-"},
		{name: "before A", tool: "a@b", wantErr: "only letters, digits, '_' and '-'"},
		{name: "after Z", tool: "a[b", wantErr: "only letters, digits, '_' and '-'"},
		{name: "before a", tool: "a`b", wantErr: "only letters, digits, '_' and '-'"},
		{name: "after z", tool: "a{b", wantErr: "only letters, digits, '_' and '-'"},
		{name: "after 9", tool: "a:b", wantErr: "only letters, digits, '_' and '-'"},
		{name: "dot before slash", tool: "a.b", wantErr: "only letters, digits, '_' and '-'"},
		{name: "between Z and _", tool: "a^b", wantErr: "only letters, digits, '_' and '-'"},
		{name: "empty says the rule", tool: "", wantErr: "1 to 64 characters of letters, digits, '_' and '-'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tools.ValidateName(tt.tool)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateName(%q) = %v, want nil", tt.tool, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ValidateName(%q) = %v, want an error containing %q", tt.tool, err, tt.wantErr)
			}
		})
	}
}

func echo(ctx context.Context, input string) (tools.Result, error) { return tools.Text(input), nil }

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func add(ctx context.Context, in addIn) (int, error) { return in.A + in.B, nil }

func noop(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	return tools.Result{}, nil
}

func TestNewRegistry(t *testing.T) {
	plain := tools.NewPlain(tools.Info{Name: "echo"}, echo)
	typedAdd := typed.MustNew("add", "Add two numbers.", add)
	fn := tools.New(tools.Info{Name: "noop"}, noop)

	r, err := tools.NewRegistry(plain, typedAdd, fn)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	if got, want := r.Len(), 3; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	if got, want := fmt.Sprint(r.Names()), "[add echo noop]"; got != want {
		t.Errorf("Names() = %s, want %s", got, want)
	}
	var order []string
	for _, i := range r.Infos() {
		order = append(order, i.Name)
	}
	if got, want := fmt.Sprint(order), "[echo add noop]"; got != want {
		t.Errorf("Infos() order = %s, want registration order %s", got, want)
	}
	if got, ok := r.Lookup("add"); !ok || got != typedAdd {
		t.Errorf("Lookup(add) = %v, %v; want the typed tool", got, ok)
	}
	if _, ok := r.Lookup("missing"); ok {
		t.Error("Lookup(missing) found a tool")
	}
	// The slices returned are copies.
	r.Tools()[0] = nil
	r.Infos()[0].Name = "changed"
	if r.Tools()[0] == nil || r.Infos()[0].Name != "echo" {
		t.Error("changing the slices returned by Tools or Infos changed the registry")
	}
	if got := string(r.Infos()[2].InputSchema); got != string(tools.EmptySchema()) {
		t.Errorf("tools.New with no schema: InputSchema = %s, want %s", got, tools.EmptySchema())
	}
}

func TestNewRegistryReportsEveryProblem(t *testing.T) {
	_, err := tools.NewRegistry(
		tools.NewPlain(tools.Info{Name: "dup"}, echo),
		typed.MustNew("dup", "Also dup.", add),
		tools.New(tools.Info{Name: "dup"}, noop),
		tools.New(tools.Info{Name: "bad.name"}, noop),
		tools.New(tools.Info{Name: "array_schema", InputSchema: json.RawMessage(`{"type":"array"}`)}, noop),
		tools.New(tools.Info{Name: "list_schema", InputSchema: json.RawMessage(`[1]`)}, noop),
		tools.New(tools.Info{Name: "bad_output", OutputSchema: json.RawMessage(`{"type":"string"}`)}, noop),
		nil,
	)
	if err == nil {
		t.Fatal("NewRegistry = nil error, want one listing every problem")
	}
	msg := err.Error()
	for _, want := range []string{
		`tool "dup": registered more than once`,
		`tool "bad.name": name may hold only`,
		`tool "array_schema": input schema: "type" must be "object", got array`,
		`tool "list_schema": input schema: not a JSON object`,
		`tool "bad_output": output schema: "type" must be "object", got string`,
		"nil tool",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("NewRegistry error does not contain %q; got:\n%s", want, msg)
		}
	}
	if got, want := strings.Count(msg, "registered more than once"), 2; got != want {
		t.Errorf("got %d duplicate reports, want %d (one per extra registration):\n%s", got, want, msg)
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		name     string
		res      tools.Result
		err      error
		wantText string
		wantKind tools.Kind // "" means success
	}{
		{name: "success", res: tools.Text("ok"), wantText: "ok"},
		{name: "tool error kept", res: tools.Text("partial"), err: tools.InvalidArgs("bad %s", "x"), wantKind: tools.KindInvalidArguments},
		{name: "wrapped tool error found", err: fmt.Errorf("outer: %w", &tools.Error{Kind: tools.KindTimeout, Message: "slow"}), wantKind: tools.KindTimeout},
		{name: "plain error is an execution failure", err: io.EOF, wantKind: tools.KindExecutionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tools.Settle(tt.res, tt.err)
			if tt.wantKind == "" {
				if !got.OK() || got.Text != tt.wantText {
					t.Fatalf("Outcome = %+v, want success with text %q", got, tt.wantText)
				}
				return
			}
			if got.OK() {
				t.Fatalf("Outcome = %+v, want a failure", got)
			}
			if got.Err.Kind != tt.wantKind {
				t.Errorf("Outcome kind = %s, want %s", got.Err.Kind, tt.wantKind)
			}
			if got.Text != "" {
				t.Errorf("Outcome text = %q, want partial output dropped", got.Text)
			}
		})
	}
	if got := tools.Settle(tools.Result{Audience: tools.ForUser}, io.EOF); got.Audience != tools.ForUser {
		t.Errorf("Outcome audience = %v, want ForUser kept", got.Audience)
	}
}

func TestAsError(t *testing.T) {
	if got := tools.AsError(nil); got != nil {
		t.Errorf("AsError(nil) = %v, want nil", got)
	}
	e := tools.InvalidArgs("x")
	if got := tools.AsError(fmt.Errorf("wrap: %w", e)); got != e {
		t.Errorf("AsError(wrapped) = %v, want the wrapped *Error itself", got)
	}
	got := tools.AsError(io.EOF)
	if got.Kind != tools.KindExecutionFailed || got.Message != "EOF" || !errors.Is(got, io.EOF) {
		t.Errorf("AsError(io.EOF) = %+v, want execution failure with message EOF wrapping io.EOF", got)
	}
}

func TestErrorIs(t *testing.T) {
	timeout := &tools.Error{Kind: tools.KindTimeout, Message: "took too long"}
	tests := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{name: "same kind", err: timeout, target: &tools.Error{Kind: tools.KindTimeout}, want: true},
		{name: "wrapped", err: fmt.Errorf("call: %w", timeout), target: &tools.Error{Kind: tools.KindTimeout}, want: true},
		{name: "other kind", err: timeout, target: &tools.Error{Kind: tools.KindCancelled}, want: false},
		{name: "target with a message matches only itself", err: timeout, target: &tools.Error{Kind: tools.KindTimeout, Message: "took too long"}, want: false},
		{name: "identity", err: timeout, target: timeout, want: true},
		{name: "cause reachable", err: tools.Failed("read: %w", io.EOF), target: io.EOF, want: true},
		{name: "not an Error", err: io.EOF, target: &tools.Error{Kind: tools.KindExecutionFailed}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(tt.err, tt.target); got != tt.want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.err, tt.target, got, tt.want)
			}
		})
	}
}

func TestErrorConstructors(t *testing.T) {
	e := tools.Failed("open %q: %w", "f", io.ErrUnexpectedEOF)
	if e.Kind != tools.KindExecutionFailed || e.Message != `open "f": unexpected EOF` {
		t.Errorf("Failed = %+v, want execution failure %q", e, `open "f": unexpected EOF`)
	}
	c := e.WithCode(7)
	if c.Code != 7 || e.Code != 0 {
		t.Errorf("WithCode: got copy code %d and original code %d, want 7 and 0", c.Code, e.Code)
	}
	if a := tools.InvalidArgs("n must be %d", 3); a.Kind != tools.KindInvalidArguments || a.Error() != "n must be 3" {
		t.Errorf("InvalidArgs = %+v, want invalid arguments %q", a, "n must be 3")
	}
}

func TestNewPlain(t *testing.T) {
	tool := tools.NewPlain(tools.Info{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, echo)
	if got := string(tool.Info().InputSchema); got != string(tools.PlainSchema()) {
		t.Errorf("InputSchema = %s, want PlainSchema whatever Info said", got)
	}
	tests := []struct {
		name     string
		args     string
		wantText string
		wantErr  string // substring of an invalid-arguments error
	}{
		{name: "input", args: `{"input":"hi"}`, wantText: "hi"},
		{name: "empty input", args: `{"input":""}`, wantText: ""},
		{name: "extra fields ignored", args: `{"input":"hi","x":1}`, wantText: "hi"},
		{name: "missing input", args: `{}`, wantErr: `missing required field "input"`},
		{name: "null input", args: `{"input":null}`, wantErr: `missing required field "input"`},
		{name: "wrong type", args: `{"input":3}`, wantErr: `arguments must be an object with a string field "input": "input" is 3`},
		{name: "not an object", args: `"hi"`, wantErr: `arguments must be an object with a string field "input": got a string`},
		{name: "null arguments", args: `null`, wantErr: `arguments must be an object with a string field "input": got null`},
		{name: "array arguments", args: `[{"input":"hi"}]`, wantErr: "got an array"},
		{name: "number arguments", args: `3`, wantErr: "got a number"},
		{name: "object and more", args: `{"input":"hi"} {}`, wantErr: "data after the object"},
		{name: "case variant is an unknown field", args: `{"input":"hi","INPUT":"rm -rf /"}`, wantText: "hi"},
		{name: "case variant alone", args: `{"Input":"rm -rf /"}`, wantErr: `missing required field "input"`},
		{name: "repeated input", args: `{"input":"hi","input":"rm -rf /"}`, wantErr: `duplicate object member name "input"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if !errors.Is(err, &tools.Error{Kind: tools.KindInvalidArguments}) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Call(%s) = %v, want an invalid-arguments error containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil || res.Text != tt.wantText {
				t.Fatalf("Call(%s) = %q, %v; want %q, nil", tt.args, res.Text, err, tt.wantText)
			}
		})
	}
}

func TestChainOrder(t *testing.T) {
	var trace []string
	mw := func(name string) tools.Middleware {
		return func(info tools.Info, next tools.Func) tools.Func {
			trace = append(trace, "build "+name+" for "+info.Name)
			return func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
				trace = append(trace, name+" in")
				r, err := next(ctx, args)
				trace = append(trace, name+" out")
				r.Text = name + "(" + r.Text + ")"
				return r, err
			}
		}
	}
	base := tools.New(tools.Info{Name: "t"}, func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		trace = append(trace, "tool")
		return tools.Text("x"), nil
	})
	wrapped := tools.Wrap(base, mw("outer"), mw("inner"))
	if got := trace; fmt.Sprint(got) != "[build inner for t build outer for t]" {
		t.Errorf("built in order %q, want inner first (once, at Wrap)", got)
	}
	trace = nil
	res, err := wrapped.Call(context.Background(), json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(trace), "[outer in inner in tool inner out outer out]"; got != want {
		t.Errorf("call order = %s, want %s", got, want)
	}
	if got, want := res.Text, "outer(inner(x))"; got != want {
		t.Errorf("result = %q, want %q (mws[0] sees the final result last)", got, want)
	}
	if wrapped.Info().Name != "t" {
		t.Errorf("Wrap changed the descriptor: %+v", wrapped.Info())
	}
	if tools.Wrap(base) != base {
		t.Error("Wrap with no middleware did not return the tool itself")
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name, args string
		secret     []string
		want       string
	}{
		{"secret hidden", `{"user":"ann","password":"hunter2"}`, []string{"password"}, `{"password":"[hidden]","user":"ann"}`},
		{"no secret given", `{"user":"ann"}`, []string{"password"}, `{"user":"ann"}`},
		{"not an object", `[1,2]`, []string{"password"}, `[1,2]`},
		{"upper-case variant", `{"TOKEN":"s3cret"}`, []string{"token"}, `{"TOKEN":"[hidden]"}`},
		{"mixed-case variant next to the exact name", `{"token":"a","ToKeN":"s3cret"}`, []string{"token"}, `{"ToKeN":"[hidden]","token":"[hidden]"}`},
		{"case-folded Kelvin sign", `{"\u212Aey":"s3cret"}`, []string{"key"}, "{\"\u212aey\":\"[hidden]\"}"},
		{"a repeated name", `{"token":"s3cret","token":"again"}`, []string{"token"}, `{"token":"[hidden]"}`},
		{"secret declared in upper case", `{"token":"s3cret"}`, []string{"TOKEN"}, `{"token":"[hidden]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tools.Redact(json.RawMessage(tt.args), tt.secret))
			if got != tt.want {
				t.Errorf("Redact(%s, %q) = %s, want %s", tt.args, tt.secret, got, tt.want)
			}
			if strings.Contains(got, "s3cret") {
				t.Errorf("Redact(%s, %q) = %s: the secret is in clear", tt.args, tt.secret, got)
			}
		})
	}
}

func TestIsSecret(t *testing.T) {
	secret := []string{"token", "api_key"}
	tests := []struct {
		name string
		want bool
	}{
		{"token", true}, {"TOKEN", true}, {"Api_Key", true}, {"tokens", false}, {"api-key", false}, {"", false},
	}
	for _, tt := range tests {
		if got := tools.IsSecret(tt.name, secret); got != tt.want {
			t.Errorf("IsSecret(%q, %q) = %v, want %v", tt.name, secret, got, tt.want)
		}
	}
}

func TestReportProgress(t *testing.T) {
	// Without a reporter it does nothing (and does not panic).
	tools.ReportProgress(context.Background(), 1, 2, "half")
	tools.ReportProgress(tools.WithProgress(context.Background(), nil), 1, 2, "half")

	var got []string
	ctx := tools.WithProgress(context.Background(), func(progress, total float64, message string) {
		got = append(got, fmt.Sprintf("%g/%g %s", progress, total, message))
	})
	tools.ReportProgress(ctx, 1, 4, "reading")
	tools.ReportProgress(ctx, 3, 0, "unknown total")
	if want := "[1/4 reading 3/0 unknown total]"; fmt.Sprint(got) != want {
		t.Errorf("reported %q, want %s", got, want)
	}
}

func TestSessionFrom(t *testing.T) {
	if s, ok := tools.SessionFrom(context.Background()); ok {
		t.Errorf("SessionFrom(empty ctx) = %+v, true; want false", s)
	}
	want := tools.Session{ID: "stdio", ClientName: "client", Principal: "p1"}
	got, ok := tools.SessionFrom(tools.WithSession(context.Background(), want))
	if !ok || got != want {
		t.Errorf("SessionFrom = %+v, %v; want %+v, true", got, ok, want)
	}
}

func TestSettle(t *testing.T) {
	if o := tools.Settle(tools.Text("x"), nil); !o.OK() || o.Text != "x" {
		t.Errorf("Settle(Text(x), nil) = %+v, want OK with x", o)
	}
	if o := tools.Settle(tools.Text("partial"), tools.InvalidArgs("x")); o.OK() || o.Text != "" || o.Err.Kind != tools.KindInvalidArguments {
		t.Errorf("Settle with an error = %+v, want the error and no partial output", o)
	}
	if o := tools.Settle(tools.Result{}, errors.New("plain")); o.Err.Kind != tools.KindExecutionFailed || o.Err.Message != "plain" {
		t.Errorf("Settle with a plain error = %+v, want execution_failed", o.Err)
	}
}

func TestShowArgs(t *testing.T) {
	plain := tools.NewPlain(tools.Info{Name: "p"}, echo).Info()
	plainSecret := tools.NewPlain(tools.Info{Name: "p", Secret: []string{"input"}}, echo).Info()
	typed := tools.Info{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Secret: []string{"token"}}
	tests := []struct {
		name string
		info tools.Info
		args string
		want string
	}{
		{"plain shows its input", plain, `{"input":"2+2"}`, "2+2"},
		{"plain with a secret input", plainSecret, `{"input":"s3cret"}`, tools.Hidden},
		{"plain with a secret input it cannot read", plainSecret, `{"input":"s3cret"`, tools.Hidden},
		{"plain with a secret input in another case", tools.Info{InputSchema: tools.PlainSchema(), Plain: true, Secret: []string{"INPUT"}}, `{"input":"s3cret"}`, tools.Hidden},
		{"plain without input shows the object", plain, `{"x":1}`, `{"x":1}`},
		{"object with a secret", typed, `{"city":"Oslo","token":"s3cret"}`, `{"city":"Oslo","token":"[hidden]"}`},
		{"object with a case variant of a secret", typed, `{"TOKEN":"s3cret"}`, `{"TOKEN":"[hidden]"}`},
		{"object without secrets", tools.Info{InputSchema: tools.EmptySchema()}, `{"a":1}`, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.ShowArgs(tt.info, json.RawMessage(tt.args)); got != tt.want {
				t.Errorf("ShowArgs(%s) = %s, want %s", tt.args, got, tt.want)
			}
		})
	}
}

// TestPlainMaxInput: a plain tool's MaxInput is published as the input's
// maxLength and refused, briefly, before the tool runs.
func TestPlainMaxInput(t *testing.T) {
	ran := false
	tool := tools.NewPlain(tools.Info{Name: "p", MaxInput: 8}, func(_ context.Context, in string) (tools.Result, error) {
		ran = true
		return tools.Text(in), nil
	})
	info := tool.Info()
	if !info.Plain || !strings.Contains(string(info.InputSchema), `"maxLength":8`) {
		t.Errorf("info = plain %v, schema %s; want plain with maxLength 8", info.Plain, info.InputSchema)
	}
	_, err := tool.Call(context.Background(), json.RawMessage(`{"input":"`+strings.Repeat("é", 9)+`"}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments || !strings.Contains(te.Message, "9 characters long; the limit is 8") || ran {
		t.Errorf("a 9-character input: err %v, ran %v; want invalid_arguments before the tool runs", err, ran)
	}
	if res, err := tool.Call(context.Background(), json.RawMessage(`{"input":"`+strings.Repeat("é", 8)+`"}`)); err != nil || res.Text == "" {
		t.Errorf("an 8-character input: %v %v", res, err)
	}
}
