package main

import (
	"log/slog"
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
	if got := redactURL("redis://user:s3cret@host:6379/0"); strings.Contains(got, "s3cret") {
		t.Errorf("redactURL kept the password: %q", got)
	}
}
