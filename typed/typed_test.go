package typed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Level is an Enumer: its schema is a string with an enum.
type Level string

func (Level) Enum() []string { return []string{"debug", "info", "error"} }

type Address struct {
	Street string `json:"street" jsonschema:"description=Street and number"`
	Zip    string `json:"zip,omitempty" jsonschema:"pattern=^[0-9]{5}$"`
}

type Item struct {
	SKU string `json:"sku"`
	Qty uint16 `json:"qty" jsonschema:"minimum=1"`
}

// Everything holds a field for every mapping and tag in the package
// documentation.
type Everything struct {
	// scalars
	Name    string  `json:"name" jsonschema:"description=Who to greet,minLength=1,maxLength=40,default=world,example=Ada"`
	Int     int     `json:"int" jsonschema:"minimum=-5,maximum=5"`
	Int8    int8    `json:"int8"`
	Int16   int16   `json:"int16"`
	Int32   int32   `json:"int32"`
	Int64   int64   `json:"int64"`
	Uint    uint    `json:"uint"`
	Uint8   uint8   `json:"uint8"`
	Uint16  uint16  `json:"uint16"`
	Uint32  uint32  `json:"uint32"`
	Uint64  uint64  `json:"uint64" jsonschema:"maximum=1000"`
	Float32 float32 `json:"float32"`
	Float64 float64 `json:"float64" jsonschema:"minimum=0.5"`
	Bool    bool    `json:"bool"`
	// enums
	Level Level  `json:"level"`
	Mode  string `json:"mode" jsonschema:"enum=fast,enum=safe"`
	// patterns and times
	Code string    `json:"code" jsonschema:"pattern=^[A-Z]{3}$"`
	When time.Time `json:"when"`
	// collections
	Tags   []string        `json:"tags" jsonschema:"description=Free-form labels"`
	Pair   [2]float64      `json:"pair"`
	Counts map[string]int  `json:"counts"`
	Items  []Item          `json:"items"`
	ByName map[string]Item `json:"by_name"`
	// nesting and pointers
	Home   Address    `json:"home"`
	Work   *Address   `json:"work,omitempty"`
	MaybeN *int       `json:"maybe_n,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
	// optional fields
	Note  string `json:"note,omitempty"`
	Limit int    `json:"limit,omitzero" jsonschema:"description=Stop after this many,minimum=1"`
	// secrets and skipped fields
	Token   string `json:"token" secret:"true" jsonschema:"description=API token"`
	Ignored string `json:"-"`
}

type Greeting struct {
	Text  string    `json:"text"`
	Count int       `json:"count"`
	At    time.Time `json:"at,omitzero"`
}

func nop(ctx context.Context, in Everything) (Greeting, error) { return Greeting{}, nil }

func TestSchemaGolden(t *testing.T) {
	tests := []struct {
		name   string
		golden string
		tool   func() (tools.Info, error)
		check  func(t *testing.T, schema any)
	}{
		{
			name:   "input",
			golden: "everything.golden.json",
			tool:   infoOf(typed.New("everything", "d", nop)),
			check:  noClosedObjects,
		},
		{
			name:   "strict input",
			golden: "everything_strict.golden.json",
			tool:   infoOf(typed.New("everything", "d", nop, typed.Strict())),
			check:  everyObjectClosed,
		},
		{
			name:   "output",
			golden: "greeting_output.golden.json",
			tool: func() (tools.Info, error) {
				info, err := infoOf(typed.New("everything", "d", nop))()
				info.InputSchema = info.OutputSchema
				return info, err
			},
			check: noClosedObjects,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := tt.tool()
			if err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, info.InputSchema, "", "  "); err != nil {
				t.Fatalf("schema is not JSON: %v\n%s", err, info.InputSchema)
			}
			pretty.WriteByte('\n')
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./typed -update to create it)", err)
			}
			if got := pretty.String(); got != string(want) {
				t.Errorf("schema differs from %s (run go test ./typed -update and review the diff)\n got:\n%s", path, got)
			}
			var doc any
			if err := json.Unmarshal(info.InputSchema, &doc); err != nil {
				t.Fatal(err)
			}
			tt.check(t, doc)
			if _, err := schema.Compile(info.InputSchema); err != nil {
				t.Errorf("schema does not compile: %v", err)
			}
		})
	}
}

func infoOf[In, Out any](tool *typed.Tool[In, Out], err error) func() (tools.Info, error) {
	return func() (tools.Info, error) {
		if err != nil {
			return tools.Info{}, err
		}
		return tool.Info(), nil
	}
}

// objects calls fn for every schema node, with its JSON pointer.
func objects(node any, ptr string, fn func(ptr string, obj map[string]any)) {
	switch n := node.(type) {
	case map[string]any:
		fn(ptr, n)
		for k, v := range n {
			objects(v, ptr+"/"+k, fn)
		}
	case []any:
		for _, v := range n {
			objects(v, ptr+"/[]", fn)
		}
	}
}

func everyObjectClosed(t *testing.T, doc any) {
	t.Helper()
	var n int
	objects(doc, "", func(ptr string, obj map[string]any) {
		if _, ok := obj["properties"]; !ok || strings.HasSuffix(ptr, "/properties") {
			return
		}
		n++
		if obj["additionalProperties"] != false {
			t.Errorf("strict: object at %q has additionalProperties %v, want false", ptr, obj["additionalProperties"])
		}
	})
	if n < 5 { // root, home, work, items[], by_name{}
		t.Errorf("strict: found %d struct objects, want at least 5", n)
	}
}

func noClosedObjects(t *testing.T, doc any) {
	t.Helper()
	objects(doc, "", func(ptr string, obj map[string]any) {
		if obj["additionalProperties"] == false {
			t.Errorf("not strict: object at %q has additionalProperties false", ptr)
		}
	})
}

func TestSchemaMappings(t *testing.T) {
	tool := typed.MustNew("everything", "d", nop)
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(tool.Info().InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		field, key string
		want       any
	}{
		{"name", "type", "string"},
		{"name", "description", "Who to greet"},
		{"name", "default", "world"},
		{"name", "minLength", 1.0},
		{"name", "maxLength", 40.0},
		{"int", "minimum", -5.0},
		{"int64", "type", "integer"},
		{"uint", "minimum", 0.0},
		{"uint64", "maximum", 1000.0},
		{"float32", "type", "number"},
		{"float64", "minimum", 0.5},
		{"bool", "type", "boolean"},
		{"code", "pattern", "^[A-Z]{3}$"},
		{"when", "format", "date-time"},
		{"since", "format", "date-time"},
		{"tags", "type", "array"},
		{"pair", "maxItems", 2.0},
		{"counts", "type", "object"},
		{"home", "type", "object"},
		{"work", "type", "object"},
		{"maybe_n", "type", "integer"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"/"+tt.key, func(t *testing.T) {
			if got := s.Properties[tt.field][tt.key]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("properties.%s.%s = %#v, want %#v", tt.field, tt.key, got, tt.want)
			}
		})
	}
	if got := s.Properties["level"]["enum"]; !reflect.DeepEqual(got, []any{"debug", "info", "error"}) {
		t.Errorf("Enumer field enum = %v, want [debug info error]", got)
	}
	if _, ok := s.Properties["-"]; ok {
		t.Error(`json:"-" field published`)
	}
	for _, opt := range []string{"work", "maybe_n", "since", "note", "limit"} {
		if contains(s.Required, opt) {
			t.Errorf("optional field %q is required", opt)
		}
	}
	for _, req := range []string{"name", "when", "home", "token", "uint8"} {
		if !contains(s.Required, req) {
			t.Errorf("field %q is not required, want required (no omitempty)", req)
		}
	}
	if got := tool.Info().Secret; !reflect.DeepEqual(got, []string{"token"}) {
		t.Errorf("Secret = %v, want [token]", got)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestSchemaValidatesWhatTheFunctionAccepts(t *testing.T) {
	type in struct {
		N    uint      `json:"n"`
		When time.Time `json:"when,omitzero"`
		I8   int8      `json:"i8,omitempty"`
		U8   uint8     `json:"u8,omitempty"`
		I16  int16     `json:"i16,omitempty"`
		U16  uint16    `json:"u16,omitempty" jsonschema:"minimum=1"`
		I32  int32     `json:"i32,omitempty"`
		U32  uint32    `json:"u32,omitempty"`
	}
	tool := typed.MustNew("t", "d", func(ctx context.Context, in in) (string, error) { return "ok", nil })
	v, err := schema.Compile(tool.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		wantValid  bool
	}{
		{name: "fits", args: `{"n":3,"when":"2024-01-02T03:04:05Z"}`, wantValid: true},
		{name: "negative uint", args: `{"n":-1}`},
		{name: "bad time", args: `{"n":1,"when":"tomorrow"}`},
		// Sized integers: the schema publishes the range the type holds.
		{name: "int8 bounds", args: `{"n":1,"i8":-128,"u8":255,"i16":32767,"u16":65535,"i32":-2147483648,"u32":4294967295}`, wantValid: true},
		{name: "int8 over", args: `{"n":1,"i8":128}`},
		{name: "int8 under", args: `{"n":1,"i8":-129}`},
		{name: "uint8 over", args: `{"n":1,"u8":256}`},
		{name: "int16 over", args: `{"n":1,"i16":32768}`},
		{name: "uint16 over, with a minimum tag", args: `{"n":1,"u16":65536}`},
		{name: "int32 under", args: `{"n":1,"i32":-2147483649}`},
		{name: "uint32 over", args: `{"n":1,"u32":4294967296}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verr := v.Validate(json.RawMessage(tt.args))
			if (verr == nil) != tt.wantValid {
				t.Fatalf("Validate(%s) = %v, want valid %v", tt.args, verr, tt.wantValid)
			}
			_, cerr := tool.Call(context.Background(), json.RawMessage(tt.args))
			if (cerr == nil) != tt.wantValid {
				t.Errorf("Call(%s) = %v, but the schema says valid = %v", tt.args, cerr, tt.wantValid)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	type in struct{}
	tests := []struct {
		name string
		new  func() error
		want string
	}{
		{name: "int input", new: func() error {
			_, err := typed.New("t", "d", func(context.Context, int) (string, error) { return "", nil })
			return err
		}, want: `typed: tool "t": input type int is not a struct`},
		{name: "slice input", new: func() error {
			_, err := typed.New("t", "d", func(context.Context, []in) (string, error) { return "", nil })
			return err
		}, want: "is not a struct"},
		{name: "map input", new: func() error {
			_, err := typed.New("t", "d", func(context.Context, map[string]any) (string, error) { return "", nil })
			return err
		}, want: "is not a struct"},
		{name: "nil function", new: func() error {
			_, err := typed.New[in, string]("t", "d", nil)
			return err
		}, want: `typed: tool "t": nil function`},
		// Types with no JSON form: an error, not a panic at start-up.
		{name: "chan field", new: func() error {
			_, err := typed.New("t", "d", func(context.Context, struct {
				C chan int `json:"c"`
			}) (string, error) {
				return "", nil
			})
			return err
		}, want: `typed: tool "t": input schema: unsupported type chan int`},
		{name: "func field", new: func() error {
			_, err := typed.New("t", "d", func(context.Context, struct{ F func() }) (string, error) { return "", nil })
			return err
		}, want: "unsupported type func()"},
		{name: "complex output field", new: func() error {
			_, err := typed.New("t", "d", func(context.Context, in) (struct{ C complex128 }, error) { return struct{ C complex128 }{}, nil })
			return err
		}, want: `typed: tool "t": output schema: unsupported type complex128`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("New panicked: %v, want an error containing %q", r, tt.want)
				}
			}()
			err := tt.new()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// A pointer to a struct is accepted.
	if _, err := typed.New("t", "d", func(context.Context, *in) (string, error) { return "", nil }); err != nil {
		t.Errorf("New with *struct input = %v, want nil", err)
	}
}

func TestMustNewPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustNew with a non-struct input did not panic")
		}
	}()
	typed.MustNew("t", "d", func(context.Context, string) (string, error) { return "", nil })
}

func TestInfoIsGeneratedOnce(t *testing.T) {
	tool := typed.MustNew("everything", "Everything.", nop,
		typed.WithAnnotations(tools.Annotations{Title: "All", ReadOnly: true}))
	a, b := tool.Info(), tool.Info()
	if &a.InputSchema[0] != &b.InputSchema[0] || &a.OutputSchema[0] != &b.OutputSchema[0] {
		t.Error("Info() returned freshly generated schemas, want the ones made by New")
	}
	if a.Name != "everything" || a.Description != "Everything." || a.Annotations != (tools.Annotations{Title: "All", ReadOnly: true}) {
		t.Errorf("Info() = %+v, want the name, description and annotations given to New", a)
	}
}

type greetIn struct {
	Name string `json:"name"`
}

func TestCallRendersOutput(t *testing.T) {
	ctx := context.Background()
	args := json.RawMessage(`{"name":"Ada"}`)
	tests := []struct {
		name           string
		tool           tools.Tool
		wantText       string
		wantStructured string // "" means none
		wantOutSchema  bool
	}{
		{
			name: "struct",
			tool: typed.MustNew("t", "d", func(ctx context.Context, in greetIn) (Greeting, error) {
				return Greeting{Text: "hi " + in.Name, Count: 1}, nil
			}),
			wantText: `{"text":"hi Ada","count":1}`, wantStructured: `{"text":"hi Ada","count":1}`, wantOutSchema: true,
		},
		{
			name: "pointer to struct",
			tool: typed.MustNew("t", "d", func(ctx context.Context, in greetIn) (*Greeting, error) {
				return &Greeting{Text: in.Name}, nil
			}),
			wantText: `{"text":"Ada","count":0}`, wantStructured: `{"text":"Ada","count":0}`, wantOutSchema: true,
		},
		{
			name: "nil pointer",
			tool: typed.MustNew("t", "d", func(ctx context.Context, in greetIn) (*Greeting, error) {
				return nil, nil
			}),
			wantOutSchema: true,
		},
		{
			name: "string",
			tool: typed.MustNew("t", "d", func(ctx context.Context, in greetIn) (string, error) {
				return "hello " + in.Name, nil
			}),
			wantText: "hello Ada",
		},
		{
			name: "slice as JSON text",
			tool: typed.MustNew("t", "d", func(ctx context.Context, in greetIn) ([]int, error) {
				return []int{1, 2}, nil
			}),
			wantText: "[1,2]",
		},
		{
			name: "result passed through",
			tool: typed.MustNew("t", "d", func(ctx context.Context, in greetIn) (tools.Result, error) {
				return tools.Result{Text: "for you", Audience: tools.ForUser}, nil
			}),
			wantText: "for you",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.tool.Call(ctx, args)
			if err != nil {
				t.Fatalf("Call = %v", err)
			}
			if res.Text != tt.wantText {
				t.Errorf("Text = %q, want %q", res.Text, tt.wantText)
			}
			var gotStructured string
			if res.Structured != nil {
				b, err := json.Marshal(res.Structured)
				if err != nil {
					t.Fatal(err)
				}
				gotStructured = string(b)
			}
			if gotStructured != tt.wantStructured {
				t.Errorf("Structured = %s, want %s", gotStructured, tt.wantStructured)
			}
			if got := len(tt.tool.Info().OutputSchema) > 0; got != tt.wantOutSchema {
				t.Errorf("has OutputSchema = %v, want %v", got, tt.wantOutSchema)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	sentinel := errors.New("disk on fire")
	tests := []struct {
		name     string
		fnErr    error
		args     string
		wantKind tools.Kind
		wantIs   error
	}{
		{name: "plain error propagates", fnErr: sentinel, args: `{"name":"x"}`, wantKind: tools.KindExecutionFailed, wantIs: sentinel},
		{name: "tool error keeps its kind", fnErr: tools.InvalidArgs("name must be known"), args: `{"name":"x"}`, wantKind: tools.KindInvalidArguments},
		{name: "undecodable arguments", args: `{"name":3}`, wantKind: tools.KindInvalidArguments},
		{name: "empty arguments count as {}", args: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := typed.MustNew("t", "d", func(ctx context.Context, in greetIn) (string, error) {
				return "ok", tt.fnErr
			})
			_, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			if tt.wantKind == "" {
				if err != nil {
					t.Fatalf("Call(%s) = %v, want nil", tt.args, err)
				}
				return
			}
			if got := tools.AsError(err); got == nil || got.Kind != tt.wantKind {
				t.Fatalf("Call(%s) = %v, want kind %s", tt.args, err, tt.wantKind)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Call error %v does not wrap %v", err, tt.wantIs)
			}
		})
	}
}

func TestCallPassesContext(t *testing.T) {
	type key struct{}
	tool := typed.MustNew("t", "d", func(ctx context.Context, in greetIn) (string, error) {
		s, _ := ctx.Value(key{}).(string)
		return s, ctx.Err()
	})
	ctx := context.WithValue(context.Background(), key{}, "carried")
	if res, err := tool.Call(ctx, json.RawMessage(`{"name":"x"}`)); err != nil || res.Text != "carried" {
		t.Errorf("Call = %q, %v; want the caller's context", res.Text, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tool.Call(cctx, json.RawMessage(`{"name":"x"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with cancelled context = %v, want context.Canceled", err)
	}
}

func BenchmarkTypedCall(b *testing.B) {
	tool := typed.MustNew("greet", "d", func(ctx context.Context, in greetIn) (Greeting, error) {
		return Greeting{Text: "hi " + in.Name, Count: 1}, nil
	})
	args := json.RawMessage(`{"name":"Ada"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}

// Units is an Enumer, for the decoding tests.
type Units string

func (Units) Enum() []string { return []string{"metric", "imperial"} }

type weatherIn struct {
	City  string `json:"city"`
	Units Units  `json:"units,omitempty"`
	Token string `json:"token,omitempty" secret:"true"`
	Where *struct {
		Lat float64 `json:"lat"`
	} `json:"where,omitempty"`
}

// TestCallDecodesWhatWasValidated sends arguments that the schema accepts
// (a case variant of a declared name is only an unknown extra field to it)
// and checks that the function gets exactly the validated values, and that
// repeated member names are refused before it runs.
func TestCallDecodesWhatWasValidated(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantUnits Units
		wantLat   float64
		wantErr   string // an invalid_arguments error containing this
	}{
		{name: "case variant after the field", args: `{"city":"Oslo","units":"metric","UNITS":"kelvin; DROP"}`, wantUnits: "metric"},
		{name: "case variant before the field", args: `{"city":"Oslo","UNITS":"kelvin; DROP","units":"imperial"}`, wantUnits: "imperial"},
		{name: "case variant alone", args: `{"city":"Oslo","Units":"kelvin; DROP"}`, wantUnits: ""},
		{name: "nested case variant", args: `{"city":"Oslo","where":{"lat":1,"LAT":99}}`, wantLat: 1},
		{name: "repeated name", args: `{"city":"Oslo","units":"metric","units":"kelvin; DROP"}`, wantErr: `duplicate object member name "units"`},
		{name: "repeated nested name", args: `{"city":"Oslo","where":{"lat":1,"lat":99}}`, wantErr: `duplicate object member name "lat"`},
	}
	var ran []weatherIn
	tool := typed.MustNew("weather", "d", func(ctx context.Context, in weatherIn) (string, error) {
		ran = append(ran, in)
		return "ok", nil
	})
	v := schema.MustCompile(tool.Info().InputSchema)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran = nil
			args := json.RawMessage(tt.args)
			if tt.wantErr == "" {
				if err := v.Validate(args); err != nil {
					t.Fatalf("Validate(%s) = %v, want valid (the case this test is about)", tt.args, err)
				}
			}
			_, err := tool.Call(context.Background(), args)
			if tt.wantErr != "" {
				if e := tools.AsError(err); e == nil || e.Kind != tools.KindInvalidArguments || !strings.Contains(e.Message, tt.wantErr) {
					t.Fatalf("Call(%s) = %v, want an invalid_arguments error containing %q", tt.args, err, tt.wantErr)
				}
				if len(ran) != 0 {
					t.Errorf("the function ran with %+v, want it not run", ran)
				}
				return
			}
			if err != nil {
				t.Fatalf("Call(%s) = %v, want nil", tt.args, err)
			}
			if len(ran) != 1 {
				t.Fatalf("the function ran %d times, want 1", len(ran))
			}
			if got := ran[0].Units; got != tt.wantUnits {
				t.Errorf("the function got units %q, want %q", got, tt.wantUnits)
			}
			if got := ran[0].Where; tt.wantLat != 0 && (got == nil || got.Lat != tt.wantLat) {
				t.Errorf("the function got where %+v, want lat %g", got, tt.wantLat)
			}
		})
	}
}

// TestSecretCaseVariantRedacted: a typed tool's secret field is hidden from
// the logs (tools.Redact over its Info.Secret) in any case the model
// spells it.
func TestSecretCaseVariantRedacted(t *testing.T) {
	tool := typed.MustNew("weather", "d", func(ctx context.Context, in weatherIn) (string, error) { return "ok", nil })
	for _, args := range []string{`{"token":"s3cret"}`, `{"TOKEN":"s3cret"}`, `{"city":"x","Token":"s3cret","token":"s3cret"}`} {
		got := string(tools.Redact(json.RawMessage(args), tool.Info().Secret))
		if strings.Contains(got, "s3cret") || !strings.Contains(got, tools.Hidden) {
			t.Errorf("Redact(%s, %q) = %s, want the secret hidden", args, tool.Info().Secret, got)
		}
	}
}

// TestCallRefusesNonObjects: the contract says arguments are an object; a
// direct caller that passes anything else gets invalid_arguments and the
// function does not run.
func TestCallRefusesNonObjects(t *testing.T) {
	ran := false
	tool := typed.MustNew("t", "d", func(ctx context.Context, in *greetIn) (string, error) {
		ran = true
		return "ok", nil
	})
	tests := []struct{ name, args, want string }{
		{"null", `null`, "got null"},
		{"null with spaces", " \n null ", "got null"},
		{"array", `[{"name":"x"}]`, "got an array"},
		{"string", `"x"`, "got a string"},
		{"number", `3`, "got a number"},
		{"boolean", `true`, "got a boolean"},
		{"not JSON", `{name}`, "cannot decode"},
		{"object and more", `{"name":"x"} {}`, "cannot decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran = false
			_, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			if e := tools.AsError(err); e == nil || e.Kind != tools.KindInvalidArguments || !strings.Contains(e.Message, tt.want) {
				t.Errorf("Call(%s) = %v, want an invalid_arguments error containing %q", tt.args, err, tt.want)
			}
			if ran {
				t.Errorf("Call(%s) ran the function, want it refused first", tt.args)
			}
		})
	}
}

type node struct {
	Name string `json:"name"`
	Kids []node `json:"kids"`
}

type linked struct {
	Next *linked `json:"next,omitempty"`
}

type byName struct {
	Children map[string]byName `json:"children"`
}

type outerA struct {
	B innerB `json:"b"`
}

type innerB struct {
	Back []*outerA `json:"back"`
}

type treeIn struct {
	Root node `json:"root"`
}

// notRecursive meets the same type twice, side by side: that is no cycle.
type notRecursive struct {
	Home Address  `json:"home"`
	Work *Address `json:"work"`
	Skip *struct {
		Me *notRecursive
	} `json:"-"`
}

func TestNewRefusesRecursiveTypes(t *testing.T) {
	fn := func(f func() error) func() error { return f }
	tests := []struct {
		name string
		new  func() error
		want string
	}{
		{name: "slice of itself", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, node) (string, error) { return "", nil })
			return err
		}), want: `typed: tool "t": input schema: type typed_test.node is recursive: node.kids[] holds a node again`},
		{name: "pointer to itself", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, *linked) (string, error) { return "", nil })
			return err
		}), want: "linked.next holds a linked again"},
		{name: "map of itself", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, byName) (string, error) { return "", nil })
			return err
		}), want: "byName.children[key] holds a byName again"},
		{name: "through another struct", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, outerA) (string, error) { return "", nil })
			return err
		}), want: "outerA.b.back[] holds a outerA again"},
		{name: "deeper in the input", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, treeIn) (string, error) { return "", nil })
			return err
		}), want: "treeIn.root.kids[] holds a node again"},
		{name: "recursive output", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, greetIn) (node, error) { return node{}, nil })
			return err
		}), want: `typed: tool "t": output schema: type typed_test.node is recursive`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.new()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := typed.New("t", "d", func(context.Context, notRecursive) (string, error) { return "", nil }); err != nil {
		t.Errorf("New with a type met twice but not inside itself = %v, want nil", err)
	}
}

func TestMustNewPanicsOnRecursiveType(t *testing.T) {
	_, want := typed.New("t", "d", func(context.Context, linked) (string, error) { return "", nil })
	if want == nil {
		t.Fatal("New with a recursive type = nil error, want one")
	}
	defer func() {
		p := recover()
		err, ok := p.(error)
		if !ok || err.Error() != want.Error() {
			t.Errorf("MustNew panicked with %v, want the error New returns: %v", p, want)
		}
	}()
	typed.MustNew("t", "d", func(context.Context, linked) (string, error) { return "", nil })
}

// FuzzCallDecodesExactNames: whatever the arguments, the function runs
// only on a JSON object, and the units it gets are the value under the
// exact name "units" (a case variant never fills it).
func FuzzCallDecodesExactNames(f *testing.F) {
	for _, s := range []string{`{"city":"Oslo","units":"metric","UNITS":"kelvin"}`, `{"Units":"x"}`, `null`, `[]`, `{"units":"a","units":"b"}`, `{"where":{"lat":1,"LAT":2}}`} {
		f.Add(s)
	}
	var got *weatherIn
	tool := typed.MustNew("weather", "d", func(ctx context.Context, in weatherIn) (string, error) {
		got = &in
		return "ok", nil
	})
	f.Fuzz(func(t *testing.T, args string) {
		got = nil
		_, err := tool.Call(context.Background(), json.RawMessage(args))
		if got == nil {
			if err == nil {
				t.Fatalf("Call(%s) = nil error without running the function", args)
			}
			return
		}
		if args == "" {
			args = "{}" // Call counts empty arguments as {}
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(args), &m); err != nil || m == nil {
			t.Fatalf("Call(%s) ran the function on arguments that are not an object", args)
		}
		var want Units
		if raw, ok := m["units"]; ok {
			_ = json.Unmarshal(raw, &want)
		}
		if got.Units != want {
			t.Errorf("Call(%s) gave units %q, want %q (the exact name's value)", args, got.Units, want)
		}
	})
}

// Cookie has the name of a type it holds (http.Cookie): its schema is its
// own all the same.
type Cookie struct {
	Jar  http.Cookie `json:"jar"`
	Mine string      `json:"mine"`
}

func TestSchemaOfTypeNamedLikeAFieldType(t *testing.T) {
	tool, err := typed.New("t", "d", func(_ context.Context, in Cookie) (string, error) { return in.Mine, nil })
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(tool.Info().InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Properties["mine"]; !ok || len(s.Properties) != 2 {
		t.Errorf("input schema %.200s..., want the properties jar and mine", tool.Info().InputSchema)
	}
}

type nestedCreds struct {
	User  string `json:"user"`
	Token string `json:"token" secret:"true"`
}

type nestedSecretIn struct {
	City   string                 `json:"city"`
	Creds  nestedCreds            `json:"creds"`
	Keys   []nestedCreds          `json:"keys,omitempty"`
	ByHost map[string]nestedCreds `json:"by_host,omitempty"`
	Backup *nestedCreds           `json:"backup,omitempty"`
}

// TestNestedSecretRedacted: only top-level values are redacted, so a
// secret field inside a nested object (an array element, a map value)
// hides the whole top-level field that holds it; it used to be ignored,
// and its value was logged in clear.
func TestNestedSecretRedacted(t *testing.T) {
	tool := typed.MustNew("nested", "d", func(ctx context.Context, in nestedSecretIn) (string, error) { return "ok", nil })
	if got, want := strings.Join(tool.Info().Secret, " "), "creds keys by_host backup"; got != want {
		t.Errorf("Secret = %s, want %s", got, want)
	}
	args := `{"city":"Oslo","creds":{"user":"ann","token":"s3cret"},"keys":[{"token":"s3cret"}],"by_host":{"h":{"token":"s3cret"}},"backup":{"token":"s3cret"}}`
	got := string(tools.Redact(json.RawMessage(args), tool.Info().Secret))
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "Oslo") {
		t.Errorf("Redact = %s, want every nested secret hidden and the city shown", got)
	}
}
