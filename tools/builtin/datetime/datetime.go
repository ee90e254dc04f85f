// Package datetime is the datetime built-in: a small command language for
// the current time, time zones, date arithmetic and calendar questions.
//
//	now                                  the current instant (UTC)
//	now in America/New_York              ... in a time zone
//	today [in Europe/Paris]              the current date
//	2024-01-01 + 5 days                  arithmetic: + or -, several terms allowed,
//	2024-03-10T10:00:00Z - 90 minutes    units minute(s) hour(s) day(s) week(s) month(s) year(s);
//	2024-01-31 + 1 month                 a month or year on stops at the month's last day (2024-02-29)
//	2024-03-10T10:00:00Z in Asia/Tokyo   convert an instant to a zone
//	2024-03-10 + 1 hour in Europe/Paris  with a zone, arithmetic is done there:
//	                                     a date is midnight in that zone
//	days between 2024-01-01 and 2024-12-25
//	weekday of 2024-07-04
//
// Dates are YYYY-MM-DD; instants are RFC 3339. The time zone database is
// embedded (time/tzdata), so zones work on machines without one.
//
// The input schema publishes Config.MaxLength as maxLength, and Run and
// the tool also refuse a command longer than Config.MaxLength before reading
// it, and its errors quote at most schema.MaxQuoted bytes of it.
package datetime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zones everywhere, even without a system database

	"github.com/mcp-tools/mcp-tools/internal/lazyre"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// Defaults for Config's zero values.
const (
	// DefaultMaxLength is the longest command accepted, in bytes.
	DefaultMaxLength = 256
	// DefaultMaxAmount is the largest N in one "+ N unit" term.
	DefaultMaxAmount = 100000
)

// Config configures datetime. The zero value uses the real clock and the
// defaults.
type Config struct {
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// MaxLength is the longest command accepted, in bytes. Zero:
	// DefaultMaxLength (256).
	MaxLength int
	// MaxAmount is the largest N in one "+ N unit" term (larger ones are
	// refused, which keeps the arithmetic far from overflow). Zero:
	// DefaultMaxAmount (100000).
	MaxAmount int
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxLength <= 0 {
		c.MaxLength = DefaultMaxLength
	}
	if c.MaxAmount <= 0 {
		c.MaxAmount = DefaultMaxAmount
	}
	return c
}

// Name is the tool's name.
const Name = "datetime"

const usage = `now | now in ZONE | today | today in ZONE | DATE + N UNIT [- N UNIT ...] | INSTANT in ZONE | days between DATE and DATE | weekday of DATE ` +
	`(DATE is YYYY-MM-DD, INSTANT is RFC 3339 like 2024-03-10T10:00:00Z, also "now"/"today"; UNIT is minutes, hours, days, weeks, months or years, and + 1 month from Jan 31 gives the last day of February; ZONE is an IANA name like Europe/Paris or UTC)`

// New returns the datetime tool.
func New(cfg Config) tools.Tool {
	cfg = cfg.withDefaults()
	info := tools.Info{
		Name: Name,
		Description: "Answer date and time questions exactly, instead of guessing: the current time or date (in any IANA time zone), " +
			"date arithmetic, time-zone conversion, the days between two dates, the weekday of a date. Commands: " + usage +
			`. Examples: "now in America/New_York", "2024-01-01 + 5 days", "2024-03-10T10:00:00Z in Asia/Tokyo", "days between 2024-01-01 and 2024-12-25", "weekday of 2024-07-04".`,
		Annotations: tools.Annotations{Title: "Date and time", ReadOnly: true},
		MaxInput:    cfg.MaxLength, // published as the input's maxLength
	}
	return tools.NewPlain(info, func(_ context.Context, input string) (tools.Result, error) {
		return cfg.run(input, cfg.Now())
	})
}

var (
	inRE      = lazyre.New(`(?i)^(.+?)\s+in\s+(\S+)$`)
	betweenRE = lazyre.New(`(?i)^days\s+between\s+(\S+)\s+and\s+(\S+)$`)
	weekdayRE = lazyre.New(`(?i)^(?:weekday|day)\s+of\s+(\S+)$`)
	termRE    = lazyre.New(`(?i)\s*([+-])\s*(\d+)\s*(minute|hour|day|week|month|year)s?\s*`)
)

// Run answers one command at the instant now, with the default limits.
func Run(input string, now time.Time) (tools.Result, error) {
	return Config{}.withDefaults().run(input, now)
}

func (c Config) run(input string, now time.Time) (tools.Result, error) {
	if len(input) > c.MaxLength {
		return tools.Result{}, tools.InvalidArgs("the command is %d characters long; the limit is %d", len(input), c.MaxLength)
	}
	in := strings.TrimSpace(input)
	if in == "" {
		return tools.Result{}, tools.InvalidArgs("empty command; use one of: %s", usage)
	}
	if m := betweenRE().FindStringSubmatch(in); m != nil {
		a, err := parseDate(m[1], now)
		if err != nil {
			return tools.Result{}, err
		}
		b, err := parseDate(m[2], now)
		if err != nil {
			return tools.Result{}, err
		}
		// Both are midnight UTC; not b.Sub(a), which stops at 292 years.
		days := int((b.Unix() - a.Unix()) / (24 * 60 * 60))
		return tools.Result{Text: fmt.Sprintf("%d days from %s to %s", days, a.Format(time.DateOnly), b.Format(time.DateOnly)),
			Structured: map[string]any{"days": days, "from": a.Format(time.DateOnly), "to": b.Format(time.DateOnly)}}, nil
	}
	if m := weekdayRE().FindStringSubmatch(in); m != nil {
		d, err := parseDate(m[1], now)
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Text: fmt.Sprintf("%s is a %s", d.Format(time.DateOnly), d.Weekday()),
			Structured: map[string]any{"date": d.Format(time.DateOnly), "weekday": d.Weekday().String()}}, nil
	}
	zone := ""
	expr := in
	if m := inRE().FindStringSubmatch(in); m != nil {
		expr, zone = strings.TrimSpace(m[1]), m[2]
	}
	loc := time.UTC
	if zone != "" {
		l, err := loadZone(zone)
		if err != nil {
			return tools.Result{}, err
		}
		loc = l
	}
	t, dateOnly, err := evalExpr(expr, now, loc, c.MaxAmount)
	if err != nil {
		return tools.Result{}, err
	}
	return render(t, dateOnly, loc), nil
}

func render(t time.Time, dateOnly bool, loc *time.Location) tools.Result {
	if dateOnly {
		s := t.Format(time.DateOnly)
		return tools.Result{Text: fmt.Sprintf("%s (%s)", s, t.Weekday()),
			Structured: map[string]any{"date": s, "weekday": t.Weekday().String(), "zone": loc.String()}}
	}
	t = t.In(loc)
	s := t.Format(time.RFC3339)
	return tools.Result{Text: fmt.Sprintf("%s (%s, %s)", s, t.Weekday(), zoneName(t, loc)),
		Structured: map[string]any{"time": s, "weekday": t.Weekday().String(), "zone": loc.String(), "unix": t.Unix()}}
}

func zoneName(t time.Time, loc *time.Location) string {
	abbr, _ := t.Zone()
	if loc == time.UTC || abbr == loc.String() {
		return loc.String()
	}
	return loc.String() + " " + abbr
}

// evalExpr evaluates "BASE [± N UNIT]...". dateOnly reports whether the
// answer is a date rather than an instant.
func evalExpr(expr string, now time.Time, loc *time.Location, maxAmount int) (time.Time, bool, error) {
	base, rest := expr, ""
	if i := termRE().FindStringIndex(expr); i != nil {
		base, rest = strings.TrimSpace(expr[:i[0]]), expr[i[0]:]
	}
	var t time.Time
	dateOnly := false
	switch lb := strings.ToLower(base); {
	case lb == "now":
		t = now.In(loc)
	case lb == "today":
		n := now.In(loc)
		t = time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
		dateOnly = true
	default:
		// In the command's zone, as "now" and "today" are: a date is
		// midnight there, and days, months and years keep the wall-clock
		// time there across a DST change.
		if d, err := time.ParseInLocation(time.DateOnly, base, loc); err == nil {
			t, dateOnly = d, true
		} else if i, err := time.Parse(time.RFC3339, base); err == nil {
			t = i.In(loc)
		} else {
			return time.Time{}, false, tools.InvalidArgs("cannot read %s: use one of: %s", schema.Quote(expr), usage)
		}
	}
	for rest = strings.TrimSpace(rest); rest != ""; {
		loc := termRE().FindStringSubmatchIndex(rest)
		if loc == nil || loc[0] != 0 {
			return time.Time{}, false, tools.InvalidArgs("cannot read %s in %s: write terms like + 5 days or - 2 hours", schema.Quote(rest), schema.Quote(expr))
		}
		m := termRE().FindStringSubmatch(rest)
		n, err := strconv.Atoi(m[2])
		if err != nil || n > maxAmount {
			return time.Time{}, false, tools.InvalidArgs("%s is too large: at most %d per term", schema.Quote(m[2]), maxAmount)
		}
		if m[1] == "-" {
			n = -n
		}
		switch strings.ToLower(m[3]) {
		case "minute":
			t, dateOnly = t.Add(time.Duration(n)*time.Minute), false
		case "hour":
			t, dateOnly = t.Add(time.Duration(n)*time.Hour), false
		case "day":
			t = t.AddDate(0, 0, n)
		case "week":
			t = t.AddDate(0, 0, 7*n)
		case "month":
			t = addMonths(t, n)
		case "year":
			t = addMonths(t, 12*n)
		}
		rest = strings.TrimSpace(rest[loc[1]:])
	}
	return t, dateOnly, nil
}

// addMonths adds n calendar months, keeping the day of the month but not
// past the new month's last day: 2024-01-31 + 1 month is 2024-02-29, and
// 2024-03-31 - 1 month too (time.AddDate would give 2024-03-02 for both).
func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	if last := first.AddDate(0, 1, -1).Day(); d > last {
		d = last
	}
	return time.Date(first.Year(), first.Month(), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

func parseDate(s string, now time.Time) (time.Time, error) {
	switch strings.ToLower(s) {
	case "today", "now":
		n := now.UTC()
		return time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, time.UTC), nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d, nil
	}
	if i, err := time.Parse(time.RFC3339, s); err == nil {
		return time.Date(i.Year(), i.Month(), i.Day(), 0, 0, 0, 0, time.UTC), nil
	}
	return time.Time{}, tools.InvalidArgs("cannot read the date %s: write YYYY-MM-DD (like 2024-07-04), an RFC 3339 instant, or today", schema.Quote(s))
}

func loadZone(name string) (*time.Location, error) {
	if strings.EqualFold(name, "utc") || strings.EqualFold(name, "z") {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "local") {
		return nil, tools.InvalidArgs("the zone \"Local\" depends on the server; name an IANA zone like Europe/Paris")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, tools.InvalidArgs("unknown time zone %s: use an IANA name like America/New_York, Europe/Paris, Asia/Tokyo or UTC", schema.Quote(name))
	}
	return loc, nil
}
