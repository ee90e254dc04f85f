package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// TestNumbersTooBigToCheck: the validator checks numbers exactly, with
// math/big, whose work grows with a literal's length and exponent (a
// million digits took seconds, 450,000 copies of 1e999999 in one message
// hours), and which cannot read an exponent past a million at all (the
// validator then panicked). Such numbers are refused before validation
// with a problem naming the field; ordinary ones are checked as before.
func TestNumbersTooBigToCheck(t *testing.T) {
	v := compile(t, true)
	tooBig := []struct{ name, args, field string }{
		{"exponent past big.Rat", `{"query":"go","n":1e2000000}`, "n"},
		{"negative exponent", `{"query":"go","n":1,"ratio":1e-2000000}`, "ratio"},
		{"large exponent", `{"query":"go","n":1,"pair":[1,1e999999]}`, "pair[1]"},
		{"a million digits", `{"query":"go","n":` + strings.Repeat("9", 1<<20) + `}`, "n"},
		{"long fraction", `{"query":"go","n":1,"opts":{"query":"x","limit":1.` + strings.Repeat("0", 1<<16) + `}}`, "opts.limit"},
		{"where the schema allows anything", `{"query":"go","n":1,"nested":[{"query":"x","zzz":1e999999}]}`, "nested[0].zzz"},
	}
	for _, tt := range tooBig {
		t.Run(tt.name, func(t *testing.T) {
			ps := v.Problems(json.RawMessage(tt.args))
			if len(ps) != 1 || ps[0].Field != tt.field || ps[0].Keyword != "number" {
				t.Fatalf("Problems = %+v, want one \"number\" problem for field %q", ps, tt.field)
			}
			if len(ps[0].Message) > 4*schema.MaxQuoted {
				t.Errorf("message is %d bytes: %.300s", len(ps[0].Message), ps[0].Message)
			}
			var doc any
			d := json.NewDecoder(strings.NewReader(tt.args))
			d.UseNumber()
			if err := d.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if err := v.ValidateValue(doc); err == nil || !strings.Contains(err.Error(), "too") {
				t.Errorf("ValidateValue = %v, want the same refusal", err)
			}
		})
	}
	fine := []string{
		`{"query":"go","n":10,"ratio":1.7976931348623157e308}`,
		`{"query":"go","n":1,"ratio":5e-324}`,
		`{"query":"go","n":1,"ratio":0.1000000000000000055511151231257827021181583404541015625}`,
		`{"query":"go","n":1.0e0,"ratio":1E+2}`,
		`{"query":"go","n":1,"pair":[18446744073709551615,-9223372036854775808]}`,
	}
	for _, args := range fine {
		if err := v.Validate(json.RawMessage(args)); err != nil {
			t.Errorf("Validate(%s) = %v, want nil", args, err)
		}
	}
}

// TestFormatMessagesDoNotQuoteTheValue: a format's own error can quote the
// value whole (url.Parse does); the validator does not know which fields
// are secret, so the message keeps the reason and drops the value.
func TestFormatMessagesDoNotQuoteTheValue(t *testing.T) {
	v := schema.MustCompile(json.RawMessage(`{"type":"object","properties":{"dsn":{"type":"string","format":"uri"}}}`))
	const secret = "postgres://admin:hunter2 x@db host/prod"
	err := v.Validate(json.RawMessage(`{"dsn":"` + secret + `"}`))
	if err == nil {
		t.Fatal("Validate accepted an invalid uri")
	}
	if msg := err.Error(); strings.Contains(msg, "hunter2") || !strings.Contains(msg, `field "dsn": must be a valid uri`) {
		t.Errorf("message %q, want the field and format named and the value left out", msg)
	}
}
