package builtin_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/tools/builtin"
	"github.com/mcp-tools/mcp-tools/tools/builtin/web"
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
		if got, want := approval.IsGated(tl), tl.Info().Name == "file_write"; got != want {
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
