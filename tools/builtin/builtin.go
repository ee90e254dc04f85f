// Package builtin assembles the built-in tools from one Config: which are
// on by default, which need setup, and how each is built. The tools
// themselves live in the subpackages (calc, datetime, files, jsonquery, web).
package builtin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/calc"
	"github.com/mcp-tools/mcp-tools/tools/builtin/datetime"
	"github.com/mcp-tools/mcp-tools/tools/builtin/files"
	"github.com/mcp-tools/mcp-tools/tools/builtin/jsonquery"
	"github.com/mcp-tools/mcp-tools/tools/builtin/web"
	"github.com/mcp-tools/mcp-tools/typed"
)

// Config configures the built-ins. The zero value enables the ones that
// need no setup (see Default).
type Config struct {
	// Root is the folder the file tools work in. Empty: file_read,
	// file_write and file_list are not available.
	Root string
	// MaxReadBytes caps file_read. Zero: the files package default (1 MiB).
	MaxReadBytes int64
	// AllowPrivateNetwork lets web_fetch reach loopback and private
	// addresses (for intranet use). False: they are refused.
	AllowPrivateNetwork bool
	// Search configures web_search's backend. Zero: web_search is not
	// available.
	Search web.SearchConfig
	// Now is the clock of datetime. Nil: time.Now.
	Now func() time.Time
	// Version goes into web_fetch's User-Agent.
	Version string
	// Logger receives the built-ins' logs. Nil: discarded.
	Logger *slog.Logger
}

// All returns the name of every built-in, in the order they are listed and
// served. The slice is the caller's: changing it changes nothing here.
func All() []string {
	return []string{"calculator", "datetime", "json_query", "file_read", "file_write", "file_list", "web_fetch", "web_search", "echo"}
}

// Gated returns the names of the built-ins that change something outside
// the server; Open gates them by approval, and only the operator can open
// them up (approval.Policy.Exempt). The slice is the caller's: changing it
// changes nothing here.
func Gated() []string { return []string{"file_write"} }

// Default returns the built-ins that cfg can serve without further setup,
// and, for each one left out, why.
func Default(cfg Config) (names []string, skipped map[string]string) {
	skipped = map[string]string{}
	names = []string{"calculator", "datetime", "json_query"}
	if cfg.Root != "" {
		names = append(names, "file_read", "file_write", "file_list")
	} else {
		reason := "no root folder is configured: pass --root DIR (or builtins.file_*.root in the config file) to enable it"
		skipped["file_read"], skipped["file_write"], skipped["file_list"] = reason, reason, reason
	}
	names = append(names, "web_fetch")
	if cfg.Search.Backend != "" {
		names = append(names, "web_search")
	} else {
		skipped["web_search"] = "no search backend is configured: set builtins.web_search {backend: searxng, url: ...} or {backend: brave, api_key: ...} in the config file to enable it"
	}
	return names, skipped
}

// Set is a built set of built-ins, with what they hold open.
type Set struct {
	// Tools are the built-ins, in the order they were named.
	Tools []tools.Tool
	files *files.Sandbox
}

// Close releases what the built-ins hold (the file tools' root folder). Call
// it once the server that serves them has shut down; calls after it fail.
func (s *Set) Close() error {
	if s == nil || s.files == nil {
		return nil
	}
	return s.files.Close()
}

// Build returns the named built-ins, in the order given. Unknown names, and
// names whose setup is missing, are errors. The file tools' root stays open
// for the life of the process; use Open to be able to close it.
func Build(cfg Config, names []string) ([]tools.Tool, error) {
	set, err := Open(cfg, names)
	if set == nil {
		return nil, err
	}
	return set.Tools, err
}

// Open builds the named built-ins, in the order given, as Build does, and
// returns them with a Close for what they hold open. Every problem is
// reported once: a root folder that cannot be opened is one error, however
// many file tools were named.
func Open(cfg Config, names []string) (*Set, error) {
	var out []tools.Tool
	var errs []error
	var fileTools []tools.Tool
	var sandbox *files.Sandbox
	var filesFailed bool
	for _, name := range names {
		var t tools.Tool
		switch name {
		case "calculator":
			t = calc.New(calc.Config{})
		case "datetime":
			t = datetime.New(datetime.Config{Now: cfg.Now})
		case "json_query":
			t = jsonquery.New(jsonquery.Config{})
		case "file_read", "file_write", "file_list":
			if cfg.Root == "" {
				errs = append(errs, fmt.Errorf("built-in %q needs a root folder (--root DIR)", name))
				continue
			}
			if filesFailed {
				continue
			}
			if fileTools == nil {
				sb, err := files.Open(files.Config{Root: cfg.Root, MaxReadBytes: cfg.MaxReadBytes})
				if err != nil {
					filesFailed = true
					errs = append(errs, fmt.Errorf("the file tools (%s): %w", strings.Join(fileNames(names), ", "), err))
					continue
				}
				sandbox, fileTools = sb, sb.Tools()
			}
			for _, ft := range fileTools {
				if ft.Info().Name == name {
					t = ft
				}
			}
		case "web_fetch":
			t = web.NewFetch(web.FetchConfig{AllowPrivateNetwork: cfg.AllowPrivateNetwork, Version: cfg.Version, Logger: cfg.Logger})
		case "web_search":
			st, err := web.NewSearch(cfg.Search)
			if err != nil {
				errs = append(errs, fmt.Errorf("built-in %q: %w", name, err))
				continue
			}
			t = st
		case "echo":
			t = Echo()
		default:
			errs = append(errs, fmt.Errorf("unknown built-in %q: choose from %s", name, strings.Join(All(), ", ")))
			continue
		}
		if t == nil {
			errs = append(errs, fmt.Errorf("built-in %q was not built", name))
			continue
		}
		if IsWriter(name) {
			t = approval.Gate(t) // a person approves each write unless the operator opens it up
		}
		out = append(out, t)
	}
	return &Set{Tools: out, files: sandbox}, errors.Join(errs...)
}

// fileNames returns the file tools among names.
func fileNames(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "file_") {
			out = append(out, n)
		}
	}
	return out
}

// IsWriter reports whether the built-in called name acts on the world and
// is gated by approval by default: whether Gated lists it.
func IsWriter(name string) bool { return slices.Contains(Gated(), name) }

// MaxEchoBytes is the longest text echo sends back, in bytes; its input
// schema publishes it as the text's maxLength.
const MaxEchoBytes = 1 << 20

// EchoInput is the input of the echo tool.
type EchoInput struct {
	Text string `json:"text" jsonschema:"description=The text to send back unchanged,maxLength=1048576"`
}

// Echo returns the diagnostic echo tool: {"text": s} → s. It is off unless
// named explicitly, and serves connectivity checks and benchmarks. Text
// longer than MaxEchoBytes is refused.
func Echo() tools.Tool {
	return typed.MustNew("echo", "Return the given text unchanged. A diagnostic tool for connectivity checks.",
		func(_ context.Context, in EchoInput) (string, error) {
			if len(in.Text) > MaxEchoBytes {
				return "", tools.InvalidArgs("the text is %d bytes; the limit is %d", len(in.Text), MaxEchoBytes)
			}
			return in.Text, nil
		},
		typed.WithAnnotations(tools.Annotations{Title: "Echo", ReadOnly: true, Idempotent: true}))
}
