package typed_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

type pinIn struct {
	Pin  int64     `json:"pin" secret:"true"`
	Code int       `json:"code,string,omitempty" secret:"true"`
	When time.Time `json:"when,omitempty" secret:"true"`
	At   time.Time `json:"at,omitempty"`
}

// TestDecodeErrorsKeepSecretsAndAreShort: arguments the schema accepts but
// the decoder refuses (a number out of range, a ",string" number that is
// not one, a leap second) get an invalid_arguments error that quotes no
// secret value and at most a bounded part of any other: the message goes
// back to the model and into the WARN log line.
func TestDecodeErrorsKeepSecretsAndAreShort(t *testing.T) {
	tool := typed.MustNew("pin", "d", func(ctx context.Context, in pinIn) (string, error) { return "ok", nil })
	v := schema.MustCompile(tool.Info().InputSchema)
	long := "2024-01-02T03:04:05." + strings.Repeat("1", 1<<20) + "z"
	tests := []struct{ name, args, secret, want string }{
		{"secret number out of range", `{"pin":98765432109876543210}`, "98765432109876543210", `"pin"`},
		{"secret string number", `{"pin":1,"code":"91x7"}`, "91x7", `"code"`},
		{"secret leap second", `{"pin":1,"when":"2016-12-31T23:59:60Z"}`, "2016-12-31T23:59:60Z", `"when"`},
		{"long time", `{"pin":1,"at":"` + long + `"}`, "", `/at`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := v.Validate(json.RawMessage(tt.args)); err != nil {
				t.Fatalf("the schema refuses the arguments (%v); the case needs arguments it accepts", err)
			}
			_, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			e := tools.AsError(err)
			if e == nil || e.Kind != tools.KindInvalidArguments {
				t.Fatalf("Call = %v, want invalid_arguments", err)
			}
			if tt.secret != "" && strings.Contains(e.Message, tt.secret) {
				t.Errorf("message %q quotes the secret %q", e.Message, tt.secret)
			}
			if len(e.Message) > 4*schema.MaxQuoted {
				t.Errorf("message is %d bytes, want at most %d: %.300q", len(e.Message), 4*schema.MaxQuoted, e.Message)
			}
			if !strings.Contains(e.Message, tt.want) {
				t.Errorf("message %q does not name %s", e.Message, tt.want)
			}
		})
	}
}

type waitIn struct {
	For   time.Duration   `json:"for"`
	Steps []time.Duration `json:"steps,omitempty"`
	Poll  time.Duration   `json:"poll,omitempty" jsonschema:"default=250000000"`
}

// TestDurationIsNanoseconds: the schema publishes a time.Duration as an
// integer (nanoseconds, as encoding/json has it), so that is what Call
// decodes, nested and as a default too.
func TestDurationIsNanoseconds(t *testing.T) {
	var seen waitIn
	tool, err := typed.New("wait", "d", func(ctx context.Context, in waitIn) (string, error) {
		seen = in
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"for":1500000000,"steps":[1,2000]}`)
	if err := schema.MustCompile(tool.Info().InputSchema).Validate(args); err != nil {
		t.Fatalf("Validate(%s) = %v", args, err)
	}
	if _, err := tool.Call(context.Background(), args); err != nil {
		t.Fatalf("Call(%s) = %v", args, err)
	}
	want := waitIn{For: 1500 * time.Millisecond, Steps: []time.Duration{1, 2000}, Poll: 250 * time.Millisecond}
	if seen.For != want.For || len(seen.Steps) != 2 || seen.Steps[1] != want.Steps[1] || seen.Poll != want.Poll {
		t.Errorf("the function saw %+v, want %+v", seen, want)
	}
}
