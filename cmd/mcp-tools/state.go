package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"os"
	"regexp"
	"strings"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/state"
)

// Environment variables holding the state key, and the one being rotated
// out.
const (
	stateKeyEnv         = "MCP_TOOLS_STATE_KEY"
	previousStateKeyEnv = "MCP_TOOLS_STATE_KEY_PREVIOUS"
)

// serviceHint tells how to get the service build (service.go), which
// alone has shared state and OTLP export.
const serviceHint = "only the service build has it: go install -tags service github.com/mcp-tools/mcp-tools/cmd/mcp-tools@latest (README: Run as a service)"

// errNoSharedState is what the embedded build says of --state.
var errNoSharedState = errors.New("shared state (Redis) is not in this build; " + serviceHint)

// isStateFlag reports whether arg is the --state flag (-state, --state=URL).
func isStateFlag(arg string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return strings.HasPrefix(arg, "-") && name == "state"
}

// openState opens the store --state names: in memory when it names none.
// ${VAR} references in the URL are read from the environment, so that a
// password need not be written in a command line or a file.
func (c *setup) openState(log *slog.Logger) (state.Store, error) {
	if c.stateURL == "" || !c.serving {
		return state.NewMemory(), nil
	}
	url, err := expandEnv(c.stateURL)
	if err != nil {
		return nil, usagef("--state: %v", err)
	}
	st, err := openShared(url, log)
	if err != nil {
		return nil, usagef("--state: %v", err)
	}
	return st, nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${VAR} references in s; an unset variable is an
// error.
func expandEnv(s string) (string, error) {
	var missing string
	out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
		v, ok := os.LookupEnv(ref[2 : len(ref)-1])
		if !ok && missing == "" {
			missing = ref[2 : len(ref)-1]
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("environment variable %s is not set", missing)
	}
	return out, nil
}

// stateKeys reads the state key: from --state-key-file (its first line,
// and the previous key on its second), else from MCP_TOOLS_STATE_KEY (and
// MCP_TOOLS_STATE_KEY_PREVIOUS). None: the zero StateKeys, a random key
// per process. A key is used as it is written, and must be at least 32
// bytes long (`openssl rand -base64 32` makes one).
func (c *setup) stateKeys() (server.StateKeys, error) {
	var k server.StateKeys
	if c.stateKeyFile != "" {
		b, err := os.ReadFile(c.stateKeyFile)
		if err != nil {
			return k, usagef("--state-key-file: %v", err)
		}
		var lines [][]byte
		for l := range bytes.Lines(b) {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 || len(lines) > 2 {
			return k, usagef("--state-key-file: %s must hold the key on its first line and, optionally, the previous key on its second", c.stateKeyFile)
		}
		k.Current = lines[0]
		if len(lines) == 2 {
			k.Previous = lines[1]
		}
	} else {
		if v := os.Getenv(stateKeyEnv); v != "" {
			k.Current = []byte(v)
		}
		if v := os.Getenv(previousStateKeyEnv); v != "" {
			k.Previous = []byte(v)
		}
	}
	if k.Current != nil && len(k.Current) < 32 {
		return k, usagef("the state key is %d bytes long; it needs at least 32 (openssl rand -base64 32 makes one)", len(k.Current))
	}
	if k.Previous != nil && len(k.Previous) < 32 {
		return k, usagef("the previous state key is %d bytes long; it needs at least 32", len(k.Previous))
	}
	if k.Previous != nil && k.Current == nil {
		return k, usagef("%s is set but %s is not", previousStateKeyEnv, stateKeyEnv)
	}
	return k, nil
}

// redactURL hides a URL's password, for logs.
func redactURL(s string) string {
	u, err := neturl.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
