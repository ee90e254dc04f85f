package schema_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// FuzzValidate checks that any arguments, however malformed, give either nil
// or an invalid-arguments error with a message, and never a panic.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{``, `{}`, `null`, `[1]`, `{"query":"go","n":1}`, `{"n":"x","tags":[1,"abcdefghijklmnop"],"qurey":1}`, `{"opts":{"limt":2}}`, `{"since":"2024-13-01T00:00:00Z"}`, `{"query":"go","n":1e2000000}`, `{"ratio":-1e-9999999}`} {
		f.Add(seed)
	}
	v := compile(f, true)
	f.Fuzz(func(t *testing.T, args string) {
		err := v.Validate(json.RawMessage(args))
		if err == nil {
			return
		}
		var te *tools.Error
		if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments || te.Message == "" {
			t.Errorf("Validate(%q) = %#v, want an invalid-arguments *tools.Error", args, err)
		}
		var ae *schema.ArgumentError
		if !errors.As(err, &ae) || len(ae.Problems) == 0 {
			t.Errorf("Validate(%q) = %v, want it to wrap an *ArgumentError with problems", args, err)
		}
	})
}
