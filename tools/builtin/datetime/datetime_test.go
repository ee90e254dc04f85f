package datetime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/datetime"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/tools/toolstest"
)

// clock is a fixed instant: Saturday 2024-06-15 23:30 UTC, which is
// already Sunday in Tokyo.
var clock = time.Date(2024, 6, 15, 23, 30, 0, 0, time.UTC)

func TestCommands(t *testing.T) {
	tests := []struct{ in, want string }{
		{"now", "2024-06-15T23:30:00Z (Saturday, UTC)"},
		{"NOW in America/New_York", "2024-06-15T19:30:00-04:00 (Saturday, America/New_York EDT)"},
		{"today", "2024-06-15 (Saturday)"},
		{"today in Asia/Tokyo", "2024-06-16 (Sunday)"},
		{"today in Europe/Paris", "2024-06-16 (Sunday)"},
		{"2024-01-01 + 5 days", "2024-01-06 (Saturday)"},
		{"2024-01-31 + 1 month", "2024-02-29 (Thursday)"},
		{"2023-01-31 + 1 month", "2023-02-28 (Tuesday)"},
		{"2024-03-31 - 1 month", "2024-02-29 (Thursday)"},
		{"2024-05-31 + 1 month", "2024-06-30 (Sunday)"},
		{"2024-01-31 + 13 months", "2025-02-28 (Friday)"},
		{"2024-01-15 - 13 months", "2022-12-15 (Thursday)"},
		{"2024-02-29 + 1 year", "2025-02-28 (Friday)"},
		{"2024-02-29 + 4 years", "2028-02-29 (Tuesday)"},
		{"2024-03-31T10:30:00Z - 1 month", "2024-02-29T10:30:00Z (Thursday, UTC)"},
		{"2024-01-01 - 2 weeks", "2023-12-18 (Monday)"},
		{"2024-03-10T10:00:00Z + 90 minutes - 1 hour", "2024-03-10T10:30:00Z (Sunday, UTC)"},
		{"2024-01-01 + 36 hours", "2024-01-02T12:00:00Z (Tuesday, UTC)"},
		{"2024-03-10T10:00:00Z in Asia/Tokyo", "2024-03-10T19:00:00+09:00 (Sunday, Asia/Tokyo JST)"},
		{"now + 1 day in Europe/Paris", "2024-06-17T01:30:00+02:00 (Monday, Europe/Paris CEST)"},
		{"2024-03-10 + 1 hour in Europe/Paris", "2024-03-10T01:00:00+01:00 (Sunday, Europe/Paris CET)"},
		{"2024-03-10 + 3 hours in America/New_York", "2024-03-10T04:00:00-04:00 (Sunday, America/New_York EDT)"},
		{"2024-03-09T12:00:00Z + 1 day in America/New_York", "2024-03-10T07:00:00-04:00 (Sunday, America/New_York EDT)"},
		{"2024-03-09T12:00:00Z + 24 hours in America/New_York", "2024-03-10T08:00:00-04:00 (Sunday, America/New_York EDT)"},
		{"2024-06-15 in Asia/Tokyo", "2024-06-15 (Saturday)"},
		{"days between 2024-01-01 and 2024-12-25", "359 days from 2024-01-01 to 2024-12-25"},
		{"days between 2024-12-25 and 2024-01-01", "-359 days"},
		{"days between 2024-03-01 and 2024-04-01", "31 days"},
		{"days between 1900-01-01 and 2200-01-01", "109573 days"},
		{"days between 0001-01-01 and 9999-12-31", "3652058 days"},
		{"days between 9999-12-31 and 0001-01-01", "-3652058 days"},
		{"weekday of 2024-07-04", "2024-07-04 is a Thursday"},
		{"weekday of today", "2024-06-15 is a Saturday"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := datetime.Run(tt.in, clock)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(r.Text, tt.want) {
				t.Errorf("%q = %q, want %q", tt.in, r.Text, tt.want)
			}
			if r.Structured == nil {
				t.Error("no structured output")
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "empty command"},
		{"now in Mars/Olympus", `unknown time zone "Mars/Olympus"`},
		{"tomorrow", "use one of: now"},
		{"2024-13-01 + 1 day", "cannot read"},
		{"2024-01-01 + 5 fortnights", "UNIT is minutes, hours, days"},
		{"2024-01-01 + 999999 days", "too large"},
		{"weekday of 07/04/2024", "write YYYY-MM-DD"},
		{strings.Repeat("x", 300), "the limit is 256"},
		{"now in Local", "depends on the server"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := datetime.Run(tt.in, clock)
			var te *tools.Error
			if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments || !strings.Contains(te.Message, tt.want) {
				t.Errorf("%q: err = %v, want invalid arguments containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestToolUsesInjectedClock(t *testing.T) {
	tool := datetime.New(datetime.Config{Now: func() time.Time { return clock }})
	args, _ := json.Marshal(map[string]string{"input": "today"})
	r := tools.Settle(tool.Call(context.Background(), args))
	if r.Err != nil || !strings.HasPrefix(r.Text, "2024-06-15") {
		t.Errorf("today = %q %v", r.Text, r.Err)
	}
	toolstest.Check(t, tool)
}

func TestLimits(t *testing.T) {
	fixed := func() time.Time { return clock }
	tests := []struct {
		name  string
		cfg   datetime.Config
		input string
		want  string // empty: success
	}{
		{"default length passes", datetime.Config{Now: fixed}, "2024-01-01 + 5 days" + strings.Repeat(" ", 200), ""},
		{"default length refuses", datetime.Config{Now: fixed}, "today" + strings.Repeat(" ", 252), "257 characters long; the limit is 256"},
		{"custom length", datetime.Config{Now: fixed, MaxLength: 10}, "days between 2024-01-01 and 2024-12-25", "the limit is 10"},
		{"default amount passes", datetime.Config{Now: fixed}, "2024-01-01 + 100000 days", ""},
		{"default amount refuses", datetime.Config{Now: fixed}, "2024-01-01 + 100001 days", "at most 100000 per term"},
		{"custom amount", datetime.Config{Now: fixed, MaxAmount: 12}, "2024-01-01 + 13 months", "at most 12 per term"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"input": tt.input})
			r := tools.Settle(datetime.New(tt.cfg).Call(context.Background(), args))
			switch {
			case tt.want == "" && r.Err != nil:
				t.Errorf("got error %v, want success", r.Err)
			case tt.want != "" && (r.Err == nil || !strings.Contains(r.Err.Message, tt.want)):
				t.Errorf("got %q %v, want an error containing %q", r.Text, r.Err, tt.want)
			}
		})
	}
}

func FuzzDatetime(f *testing.F) {
	for _, s := range []string{"now", "today in Asia/Tokyo", "2024-01-01 + 5 days", "days between 2024-01-01 and 2024-12-25", "weekday of 2024-07-04", "2024-03-10T10:00:00Z in Europe/Paris", "x in y in z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := datetime.Run(in, clock)
		if err != nil {
			var te *tools.Error
			if !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments {
				t.Fatalf("Run(%q) error %v is not an invalid-arguments error", in, err)
			}
			return
		}
		if r.Text == "" {
			t.Fatalf("Run(%q) succeeded with no text", in)
		}
	})
}

// TestLongInputNotEchoed: the plain schema has no maxLength, so the tool
// itself refuses a 1 MiB command, and no error carries more than
// schema.MaxQuoted bytes of the input back to the model.
func TestLongInputNotEchoed(t *testing.T) {
	tool := datetime.New(datetime.Config{Now: func() time.Time { return clock }})
	long := strings.Repeat("x", 250)
	tests := []struct {
		name, in, want string
		maxLen         int // characters
	}{
		{"1 MiB", strings.Repeat("x", 1<<20), "1048576 characters long; the limit is 256", 500},
		{"long unreadable command", long, `cannot read "xxx`, 700},
		{"long zone", "now in " + long[:240], `unknown time zone "xxx`, 500},
		{"long date", "weekday of " + long[:240], `cannot read the date "xxx`, 500},
		{"long term", "2024-01-01 + 1 day " + long[:230], `cannot read "xxx`, 700},
		{"long amount", "2024-01-01 + " + strings.Repeat("9", 230) + " days", `"999`, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"input": tt.in})
			r := tools.Settle(tool.Call(context.Background(), args))
			if r.Err == nil || r.Err.Kind != tools.KindInvalidArguments || !strings.Contains(r.Err.Message, tt.want) {
				t.Fatalf("got %q %v, want an invalid-arguments error containing %q", r.Text, r.Err, tt.want)
			}
			if n := len([]rune(r.Err.Message)); n >= tt.maxLen {
				t.Errorf("error is %d characters, want fewer than %d: %.300s", n, tt.maxLen, r.Err.Message)
			}
			for _, c := range []string{"x", "9"} {
				if strings.Contains(r.Err.Message, strings.Repeat(c, schema.MaxQuoted+1)) {
					t.Errorf("error quotes more than %d bytes of the input: %.300s", schema.MaxQuoted, r.Err.Message)
				}
			}
		})
	}
}
