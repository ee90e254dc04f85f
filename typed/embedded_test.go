package typed_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

type textName struct {
	Name string
}

type numberName struct {
	Name int
}

// ambiguousIn embeds two structs that both have a field named "Name" at
// the same depth, neither tagged: by Go's rules neither is decoded.
type ambiguousIn struct {
	textName
	numberName
	Query string `json:"query"`
}

// NameString and NameInt are embedded together by reflect.StructOf (go vet
// refuses the struct type that would write them down).
type NameString struct {
	Name string `json:"name"`
}

type NameInt struct {
	Name int `json:"name,omitempty"`
}

type untaggedName struct {
	Name int
}

type taggedName struct {
	Name string `json:"Name"`
}

// taggedWinsIn: at the same depth the field whose json tag names it wins,
// wherever it comes in the struct.
type taggedWinsIn struct {
	taggedName
	untaggedName
}

type DefaultedName struct {
	Name int `json:"name,omitempty" jsonschema:"default=3"`
}

// shallowWinsIn: a field of the outer struct hides an embedded one of the
// same JSON name, and the hidden one's default with it.
type shallowWinsIn struct {
	Name bool `json:"name"`
	DefaultedName
}

func TestNewRefusesAmbiguousEmbeddedFields(t *testing.T) {
	fn := func(f func() error) func() error { return f }
	tests := []struct {
		name string
		new  func() error
		want []string
	}{
		{name: "two embedded structs", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, ambiguousIn) (string, error) { return "", nil })
			return err
		}), want: []string{`typed: tool "t": input schema: type typed_test.ambiguousIn`, `textName.Name and numberName.Name`, `JSON name "Name"`, "`json:\"Name\"`"}},
		{name: "deeper in the input", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, struct {
				Items []ambiguousIn `json:"items"`
			}) (string, error) {
				return "", nil
			})
			return err
		}), want: []string{`type typed_test.ambiguousIn`, `"Name"`}},
		{name: "both tagged", new: fn(func() error {
			_, err := typed.Schema(reflect.StructOf([]reflect.StructField{
				{Name: "NameString", Type: reflect.TypeFor[NameString](), Anonymous: true},
				{Name: "NameInt", Type: reflect.TypeFor[NameInt](), Anonymous: true},
			}), false)
			return err
		}), want: []string{`NameString.Name and NameInt.Name`, `JSON name "name"`, "rename one in its json tag"}},
		{name: "same struct", new: fn(func() error {
			_, err := typed.Schema(reflect.StructOf([]reflect.StructField{
				{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
				{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x,omitempty"`},
			}), true)
			return err
		}), want: []string{`A and B`, `JSON name "x"`}},
		{name: "output", new: fn(func() error {
			_, err := typed.New("t", "d", func(context.Context, greetIn) (ambiguousIn, error) { return ambiguousIn{}, nil })
			return err
		}), want: []string{`typed: tool "t": output schema: type typed_test.ambiguousIn`, `"Name"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.new()
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("New = %v, want an error containing %q", err, want)
				}
			}
		})
	}
}

// TestEmbeddedFieldWinner: when Go's rules pick one of the fields that
// share a JSON name, the schema publishes that field, and the call fills
// it.
func TestEmbeddedFieldWinner(t *testing.T) {
	t.Run("tagged", func(t *testing.T) {
		var seen taggedWinsIn
		tool, err := typed.New("t", "d", func(_ context.Context, in taggedWinsIn) (string, error) {
			seen = in
			return "ok", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkProperty(t, tool.Info().InputSchema, "Name", `{"type":"string"}`, true)
		v := schema.MustCompile(tool.Info().InputSchema)
		if err := v.Validate(json.RawMessage(`{"Name":7}`)); err == nil {
			t.Error("the schema accepts a number for Name, the loser's type")
		}
		args := json.RawMessage(`{"Name":"Ada"}`)
		if err := v.Validate(args); err != nil {
			t.Fatalf("Validate(%s) = %v", args, err)
		}
		if _, err := tool.Call(context.Background(), args); err != nil {
			t.Fatal(err)
		}
		if seen.taggedName.Name != "Ada" {
			t.Errorf("the function saw %+v, want Name Ada in the tagged field", seen)
		}
	})
	t.Run("shallower", func(t *testing.T) {
		var seen shallowWinsIn
		tool, err := typed.New("t", "d", func(_ context.Context, in shallowWinsIn) (string, error) {
			seen = in
			return "ok", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkProperty(t, tool.Info().InputSchema, "name", `{"type":"boolean"}`, true)
		args := json.RawMessage(`{"name":true}`)
		if err := schema.MustCompile(tool.Info().InputSchema).Validate(args); err != nil {
			t.Fatalf("Validate(%s) = %v", args, err)
		}
		if _, err := tool.Call(context.Background(), args); err != nil {
			t.Fatal(err)
		}
		if !seen.Name || seen.DefaultedName.Name != 0 {
			t.Errorf("the function saw %+v, want the outer name true and the hidden one untouched", seen)
		}
	})
}

// checkProperty checks that the object schema raw has property name with
// exactly the schema want, required or not.
func checkProperty(t *testing.T, raw json.RawMessage, name, want string, required bool) {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if got := string(s.Properties[name]); got != want {
		t.Errorf("property %q = %s, want %s (schema %s)", name, got, want, raw)
	}
	if got := contains(s.Required, name); got != required {
		t.Errorf("property %q required = %v, want %v (schema %s)", name, got, required, raw)
	}
}

type Credentials struct {
	User  string `json:"user"`
	Token string `json:"token" secret:"true"`
}

// TestEmbeddedSecret: a secret field of an embedded struct is a member of
// the arguments' top level, and is hidden as such.
func TestEmbeddedSecret(t *testing.T) {
	tool := typed.MustNew("login", "d", func(context.Context, struct {
		Credentials
		Host string `json:"host"`
	}) (string, error) {
		return "ok", nil
	})
	if got := tool.Info().Secret; !reflect.DeepEqual(got, []string{"token"}) {
		t.Errorf("Secret = %v, want [token]", got)
	}
	got := string(tools.Redact(json.RawMessage(`{"user":"ada","token":"s3cret","host":"h"}`), tool.Info().Secret))
	if strings.Contains(got, "s3cret") {
		t.Errorf("Redact = %s, want the embedded secret hidden", got)
	}
}

// embedOption inlines a named struct field with json v2's embed option:
// the decoder reads its fields at the top level.
type embedOption struct {
	In struct {
		A int `json:"a"`
	} `json:",embed"`
	B string `json:"b,omitempty"`
}

func TestEmbedOption(t *testing.T) {
	var seen embedOption
	tool, err := typed.New("t", "d", func(_ context.Context, in embedOption) (string, error) {
		seen = in
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkProperty(t, tool.Info().InputSchema, "a", `{"type":"integer"}`, true)
	checkProperty(t, tool.Info().InputSchema, "In", ``, false)
	args := json.RawMessage(`{"a":5}`)
	if err := schema.MustCompile(tool.Info().InputSchema).Validate(args); err != nil {
		t.Fatalf("Validate(%s) = %v", args, err)
	}
	if _, err := tool.Call(context.Background(), args); err != nil || seen.In.A != 5 {
		t.Errorf("Call(%s) = %v, the function saw %+v; want In.A 5", args, err, seen)
	}
}
