package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin"
	"github.com/mcp-tools/mcp-tools/tools/builtin/web"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

func TestDefault(t *testing.T) {
	names, skipped := builtin.Default(builtin.Config{})
	if !slices.Equal(names, []string{"calculator", "datetime", "json_query", "web_fetch"}) {
		t.Errorf("default built-ins = %v", names)
	}
	for _, off := range []string{"file_read", "file_write", "file_list", "web_search"} {
		if !strings.Contains(skipped[off], "configure") && !strings.Contains(skipped[off], "--root") && !strings.Contains(skipped[off], "backend") {
			t.Errorf("%s is off without a reason saying how to enable it: %q", off, skipped[off])
		}
	}
	names, _ = builtin.Default(builtin.Config{Root: t.TempDir(), Search: web.SearchConfig{Backend: "searxng", URL: "http://127.0.0.1:1"}})
	if len(names) != 8 {
		t.Errorf("with a root and a backend: %v, want every built-in but echo", names)
	}
}

func TestBuild(t *testing.T) {
	ts, err := builtin.Build(builtin.Config{Root: t.TempDir()}, []string{"echo", "file_write", "file_read"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range ts {
		if got, want := tl.Info().Gated, tl.Info().Name == "file_write"; got != want {
			t.Errorf("%s gated = %v, want %v", tl.Info().Name, got, want)
		}
	}
	_, err = builtin.Build(builtin.Config{}, []string{"teleporter", "file_read", "web_search"})
	for _, want := range []string{`unknown built-in "teleporter"`, `"file_read" needs a root folder`, `"web_search"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Build error %v lacks %q", err, want)
		}
	}
}

// TestLongArgumentsRefusedBriefly: every string argument of every built-in
// has a maxLength, so the validator refuses a longer argument (1 MiB + 1, or
// just over the maxLength when that is more) before the tool runs; the tool refuses it too when called directly; and neither
// error carries the argument back. The plain tools (calculator, datetime)
// share a schema without maxLength and refuse it themselves.
func TestLongArgumentsRefusedBriefly(t *testing.T) {
	huge := strings.Repeat("a", 1<<20+1)
	ts, err := builtin.Build(builtin.Config{Root: t.TempDir(), Search: web.SearchConfig{Backend: "searxng", URL: "http://127.0.0.1:1"}}, builtin.All())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range ts {
		info := tl.Info()
		var s struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(info.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		plain := info.Name == "calculator" || info.Name == "datetime" // tools.NewPlain: one shared schema
		v := schema.MustCompile(info.InputSchema)
		for name, prop := range s.Properties {
			if prop["type"] != "string" {
				continue
			}
			t.Run(info.Name+"/"+name, func(t *testing.T) {
				if _, ok := prop["maxLength"]; !ok && !plain {
					t.Errorf("no maxLength on string argument %q", name)
				}
				long := huge
				if n, ok := prop["maxLength"].(float64); ok && int(n) >= len(huge) {
					long = strings.Repeat("a", int(n)+1)
				}
				args := map[string]any{name: long}
				for _, req := range s.Required { // the others: something small and valid-looking
					if req != name {
						args[req] = "a"
					}
				}
				raw, _ := json.Marshal(args)
				if !plain {
					verr := v.Validate(raw)
					if verr == nil {
						t.Fatalf("the validator accepted a %d-byte argument", len(long))
					}
					if n := utf8.RuneCountInString(verr.Error()); n >= 500 {
						t.Errorf("validator error is %d characters, want fewer than 500: %.300s", n, verr)
					}
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				r := tools.Settle(tl.Call(ctx, raw))
				if r.Err == nil || r.Err.Kind != tools.KindInvalidArguments {
					t.Fatalf("Call = %.100s %v, want an invalid-arguments error", r.Text, r.Err)
				}
				if n := utf8.RuneCountInString(r.Err.Message); n >= 500 {
					t.Errorf("Call error is %d characters, want fewer than 500: %.300s", n, r.Err.Message)
				}
			})
		}
	}
}

// TestMissingRootReportedOnce: a root folder that cannot be opened is one
// problem, however many file tools were asked for.
func TestMissingRootReportedOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := builtin.Open(builtin.Config{Root: missing}, []string{"calculator", "file_read", "file_write", "file_list"})
	if err == nil {
		t.Fatal("Open with a missing root succeeded")
	}
	if n := strings.Count(err.Error(), missing); n != 1 {
		t.Errorf("the missing root is named %d times, want once: %v", n, err)
	}
}

// TestSetCloseReleasesTheRoot: after Close, the file tools refuse calls
// and the other built-ins go on working.
func TestSetCloseReleasesTheRoot(t *testing.T) {
	set, err := builtin.Open(builtin.Config{Root: t.TempDir()}, []string{"calculator", "file_list"})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tool := range set.Tools {
		_, err := tool.Call(context.Background(), []byte(`{"input":"1+1","path":"."}`))
		switch tool.Info().Name {
		case "file_list":
			if err == nil {
				t.Errorf("file_list after Close succeeded")
			}
		case "calculator":
			if err != nil {
				t.Errorf("calculator after Close: %v", err)
			}
		}
	}
}
