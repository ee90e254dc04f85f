package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
	"github.com/mcp-tools/mcp-tools/tools/remote"
	"github.com/mcp-tools/mcp-tools/typed"
)

type vaultIn struct {
	User  string `json:"user"`
	Token string `json:"token" secret:"true"`
}

// TestSecretsNeverLogged plants secrets everywhere a secret can enter a
// call — a typed tool's secret field (and a case variant of it), a plain
// tool whose input is secret, a pipeline step's secret field, a subprocess
// argument and environment expanded from ${VAR}, an HTTP tool's header —
// and logs at every level, text and JSON: no line carries any of them.
func TestSecretsNeverLogged(t *testing.T) {
	const (
		argSecret    = "s3cret-arg-4242"
		plainSecret  = "s3cret-plain-4242"
		stepSecret   = "s3cret-step-4242"
		argvSecret   = "s3cret-argv-4242"
		headerSecret = "s3cret-header-4242"
		upperSecret  = "s3cret-upper-4242"
	)
	env := map[string]string{"PLANTED_ARGV": argvSecret, "PLANTED_HEADER": headerSecret}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	var gotHeader string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Get("X-Api-Key")
		w.Write([]byte("ok"))
	}))
	defer ts.Close()

	vault := typed.MustNew("vault", "Open the vault.", func(_ context.Context, in vaultIn) (string, error) {
		return "opened for " + in.User, nil
	})
	plain := tools.NewPlain(tools.Info{Name: "password_check", Description: "Check a password.", Secret: []string{"input"}},
		func(_ context.Context, in string) (tools.Result, error) { return tools.Text("checked"), nil })
	argv, err := remote.NewCommand(remote.CommandConfig{Common: remote.Common{Name: "argv", Description: "Echo a fixed token's length."},
		Command: []string{"sh", "-c", `printf '{"output":"%s","success":true}' "$(printf %s "$1" | wc -c)"`, "sh", "${PLANTED_ARGV}"}, LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := remote.NewHTTP(remote.HTTPConfig{Common: remote.Common{Name: "hdr", Description: "Call with a key."},
		URL: ts.URL, Headers: map[string]string{"X-Api-Key": "${PLANTED_HEADER}"}, LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	stepLog := &syncBuffer{}
	shout := tools.NewPlain(tools.Info{Name: "shout2", Description: "Shout."}, func(_ context.Context, in string) (tools.Result, error) { return tools.Text(strings.ToUpper(in)), nil })
	pipe, err := pipeline.New(pipeline.Config{Name: "vault_then_shout", Description: "Open, then shout.",
		Steps:  []pipeline.Step{{Tool: vault}, {Tool: shout}},
		Logger: slog.New(slog.NewTextHandler(stepLog, &slog.HandlerOptions{Level: slog.Level(-8)}))})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(vault, plain, argv, hdr, shout, pipe)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var logs syncBuffer
			log := testLogger(&logs, "trace", format)
			url := serveRegistry(t, reg, server.TransportHTTP, server.Options{Logger: log})
			c := httpClient(t, url, nil)
			calls := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"vault", map[string]any{"user": "ann", "token": argSecret}, "opened for ann"},
				{"vault", map[string]any{"user": "bob", "token": "x", "TOKEN": upperSecret}, ""},
				{"password_check", map[string]any{"input": plainSecret}, "checked"},
				{"argv", map[string]any{"input": "go"}, "16"},
				{"hdr", map[string]any{"input": "go"}, "ok"},
				{"vault_then_shout", map[string]any{"user": "cy", "token": stepSecret}, "OPENED FOR CY"},
			}
			for _, c2 := range calls {
				res := mustCall(t, c, c2.tool, c2.args)
				if c2.want != "" && !strings.Contains(resultText(res), c2.want) {
					t.Errorf("%s = %q, want %q", c2.tool, resultText(res), c2.want)
				}
			}
			if gotHeader != headerSecret {
				t.Errorf("the HTTP tool sent X-Api-Key %q, want the expanded secret", gotHeader)
			}
			all := logs.String() + stepLog.String()
			if !strings.Contains(all, "vault") || !strings.Contains(all, "argv") {
				t.Fatalf("the log does not show the calls at all: %s", all)
			}
			for _, s := range []string{argSecret, plainSecret, stepSecret, argvSecret, headerSecret, upperSecret} {
				if strings.Contains(all, s) {
					i := strings.Index(all, s)
					t.Errorf("secret %q logged: …%s…", s, all[max(0, i-200):min(len(all), i+50)])
				}
			}
		})
	}
}
