package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"os"
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
// password need not be written in a command line or a file (see
// expandStateURL).
func (c *setup) openState(log *slog.Logger) (state.Store, error) {
	if c.stateURL == "" || !c.serving {
		return state.NewMemory(), nil
	}
	url, err := expandStateURL(c.stateURL, os.LookupEnv)
	if err != nil {
		return nil, usagef("--state: %v", err)
	}
	st, err := openShared(url, log)
	if err != nil {
		return nil, usagef("--state: %v", err)
	}
	return st, nil
}

// expandStateURL replaces the ${VAR} references in the --state URL s
// with the values lookup gives; an unset variable is an error. A value
// that goes in the URL's user name or password is percent-encoded, so a
// password from a secret store may hold any character (an @, a /, a #);
// anywhere else (the whole URL, a host, a database) it is used as it is.
func expandStateURL(s string, lookup func(string) (string, bool)) (string, error) {
	// The user information of the URL as written: after "://", before
	// the last @ ahead of the path. A reference's name holds none of
	// these characters, so where it sits is known before it is expanded.
	uiStart, uiEnd := -1, -1
	if i := strings.Index(s, "://"); i >= 0 {
		auth := s[i+3:]
		if end := strings.IndexAny(auth, "/?#"); end >= 0 {
			auth = auth[:end]
		}
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			uiStart, uiEnd = i+3, i+3+at
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		name, n := envRefAt(s[i:])
		if n == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		if uiStart <= i && i < uiEnd {
			v = escapeUserinfo(v)
		}
		b.WriteString(v)
		i += n
	}
	return b.String(), nil
}

// envRefAt reads a ${NAME} reference (NAME: a letter or _, then letters,
// digits and _) at the start of s: its name and length, or a length of 0.
func envRefAt(s string) (string, int) {
	if !strings.HasPrefix(s, "${") {
		return "", 0
	}
	end := strings.IndexByte(s, '}')
	if end < 3 {
		return "", 0
	}
	name := s[2:end]
	for j := 0; j < len(name); j++ {
		c := name[j]
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || j > 0 && '0' <= c && c <= '9') {
			return "", 0
		}
	}
	return name, end + 1
}

// escapeUserinfo percent-encodes every byte of v but the unreserved ones
// (RFC 3986: letters, digits, - . _ ~), which a URL's user name or
// password reads back as v.
func escapeUserinfo(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
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
	// An @ past the user information as the parser reads it (in a path,
	// query or fragment, or a URL with no "//") may end a password with an
	// unencoded / ? or #, which the parser took for a host, a port and
	// what follows: not shown as parsed.
	if err == nil && !strings.Contains(u.Opaque+u.Path+u.RawQuery+u.Fragment, "@") {
		return u.Redacted()
	}
	// Unparsable as written (a ${VAR} in the password is), or an @ in the
	// wrong place: shown with everything from "://" to the last @ hidden,
	// when the rest is a URL.
	if i := strings.Index(s, "://"); i >= 0 {
		if at := strings.LastIndexByte(s[i+3:], '@'); at >= 0 {
			hidden := s[:i+3] + "xxxxx" + s[i+3+at:]
			if _, err := neturl.Parse(hidden); err == nil {
				return hidden
			}
		}
	}
	return "(unparsable URL)"
}
