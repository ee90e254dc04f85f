package main

import (
	"log/slog"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/state"
)

func TestStateKeys(t *testing.T) {
	key := strings.Repeat("k", 32)
	old := strings.Repeat("o", 40)
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name          string
		file          string
		env, previous string
		wantCur       string
		wantPrev      string
		wantErr       string
	}{
		{name: "none", wantCur: "", wantPrev: ""},
		{name: "env", env: key, wantCur: key},
		{name: "env with previous", env: key, previous: old, wantCur: key, wantPrev: old},
		{name: "short env", env: "short", wantErr: "at least 32"},
		{name: "previous alone", previous: old, wantErr: "MCP_TOOLS_STATE_KEY is not"},
		{name: "file", file: file("one", key+"\n"), wantCur: key},
		{name: "file with previous and blank lines", file: file("two", "\n"+key+"\n\n"+old+"\n"), wantCur: key, wantPrev: old},
		{name: "file wins over env", file: file("win", key), env: strings.Repeat("e", 32), wantCur: key},
		{name: "file with three keys", file: file("three", key+"\n"+old+"\n"+key), wantErr: "first line"},
		{name: "empty file", file: file("empty", "\n"), wantErr: "first line"},
		{name: "short key in file", file: file("short", "short"), wantErr: "at least 32"},
		{name: "missing file", file: filepath.Join(dir, "nope"), wantErr: "--state-key-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(stateKeyEnv, tt.env)
			t.Setenv(previousStateKeyEnv, tt.previous)
			c := setup{stateKeyFile: tt.file}
			k, err := c.stateKeys()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("stateKeys() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(k.Current) != tt.wantCur || string(k.Previous) != tt.wantPrev {
				t.Errorf("stateKeys() = %q, %q; want %q, %q", k.Current, k.Previous, tt.wantCur, tt.wantPrev)
			}
		})
	}
}

func TestOpenState(t *testing.T) {
	t.Setenv("STATE_TEST_PASS", "s3cret")
	tests := []struct {
		name, url string
		serving   bool
		shared    bool // asks for the shared store, which only the service build has
		wantErr   string
	}{
		{name: "default", serving: true},
		{name: "not serving", url: "redis://127.0.0.1:1/0", serving: false},
		{name: "redis", url: "redis://127.0.0.1:1/0", serving: true, shared: true},
		{name: "password from env", url: "redis://:${STATE_TEST_PASS}@127.0.0.1:1/0", serving: true, shared: true},
		{name: "unset variable", url: "redis://:${STATE_TEST_NOPE}@127.0.0.1:1/0", serving: true, wantErr: "STATE_TEST_NOPE is not set"},
		{name: "not a redis URL", url: "http://127.0.0.1:1/", serving: true, shared: true, wantErr: "--state: redisstore: open"},
	}
	for i, tt := range tests {
		if tt.shared && !serviceBuild {
			// The embedded build says which build has it.
			tests[i].shared, tests[i].wantErr = false, "--state: shared state (Redis) is not in this build; only the service build has it: go install -tags service"
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := setup{stateURL: tt.url, serving: tt.serving}
			st, err := c.openState(slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("openState() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if got := state.Shared(st); got != tt.shared {
				t.Errorf("shared = %v, want %v", got, tt.shared)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"redis://user:s3cret@host:6379/0":    "redis://user:xxxxx@host:6379/0",
		"redis://:${REDIS_PASS}@host:6379/0": "redis://xxxxx@host:6379/0", // as written, before expansion
		"redis://u:s3{cret}@host:6379/0":     "redis://xxxxx@host:6379/0", // a password Go's parser refuses
		"redis://host:6379/0":                "redis://host:6379/0",
		"redis://u:s3cret@ho st:6379/0":      "(unparsable URL)",
		"redis://u:s3cret@[::1]:6379/0":      "redis://u:xxxxx@[::1]:6379/0",
		"redis://u:[s3cret@[::1]:6379/0":     "redis://xxxxx@[::1]:6379/0",
		// An unencoded # / or ? in the password ends the user information
		// where Go's parser reads it: what precedes it is a host and an
		// empty or numeric port, the rest of the password a fragment, a
		// path or a query.
		"redis://user:#s3cret@host:6379/0":    "redis://xxxxx@host:6379/0",
		"redis://:123#s3cret@host:6379/0":     "redis://xxxxx@host:6379/0",
		"redis://u:/s3cret@host:6379/0":       "redis://xxxxx@host:6379/0",
		"redis://u:12?s3cret@host:6379/0":     "redis://xxxxx@host:6379/0",
		"redis://u:p@ss:1/s3cret@host:6379/0": "redis://xxxxx@host:6379/0",
		// No "//": the whole of it is opaque to the parser.
		"redis:u:s3cret@host:6379/0": "(unparsable URL)",
		"u:s3cret@host:6379":         "(unparsable URL)",
	} {
		got := redactURL(in)
		if got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "s3") || strings.Contains(got, "cret") {
			t.Errorf("redactURL(%q) = %q shows the password", in, got)
		}
	}
}

// TestExpandStateURL: a ${VAR} in the URL's user name or password is
// percent-encoded, so that a password from a secret store may hold any
// character (an @, a /, a #, a %); elsewhere (a whole URL, a host, a
// database) the value is used as it is.
func TestExpandStateURL(t *testing.T) {
	env := map[string]string{
		"PASS":  "p@ss/w#rd?%:+ é",
		"USER":  "ann@example",
		"URL":   "redis://:a%40b@10.0.0.5:6379/2",
		"HOST":  "[::1]:6379",
		"DB":    "3",
		"EMPTY": "",
	}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	tests := []struct {
		in, want, wantErr string
		user, pass        string // as the parsed URL reads them
	}{
		{in: "redis://:${PASS}@127.0.0.1:6379/0", want: "redis://:p%40ss%2Fw%23rd%3F%25%3A%2B%20%C3%A9@127.0.0.1:6379/0", pass: "p@ss/w#rd?%:+ é"},
		{in: "redis://${USER}:${PASS}@127.0.0.1:6379/0", want: "redis://ann%40example:p%40ss%2Fw%23rd%3F%25%3A%2B%20%C3%A9@127.0.0.1:6379/0", user: "ann@example", pass: "p@ss/w#rd?%:+ é"},
		{in: "${URL}", want: "redis://:a%40b@10.0.0.5:6379/2", pass: "a@b"},
		{in: "redis://${HOST}/${DB}", want: "redis://[::1]:6379/3"},
		{in: "redis://:${EMPTY}@h:1/0", want: "redis://:@h:1/0"},
		{in: "redis://:pw@h:1/0", want: "redis://:pw@h:1/0", pass: "pw"},
		{in: "redis://:$PASS@h:1/0", want: "redis://:$PASS@h:1/0", pass: "$PASS"}, // only ${NAME} is a reference
		{in: "redis://:${NOPE}@h:1/0", wantErr: "environment variable NOPE is not set"},
	}
	for _, tt := range tests {
		got, err := expandStateURL(tt.in, lookup)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("expandStateURL(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("expandStateURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		u, err := neturl.Parse(got)
		if err != nil {
			t.Errorf("%q does not parse: %v", got, err)
			continue
		}
		pass, _ := u.User.Password()
		if u.User.Username() != tt.user || pass != tt.pass {
			t.Errorf("%q reads as user %q password %q; want %q, %q", got, u.User.Username(), pass, tt.user, tt.pass)
		}
	}
}
