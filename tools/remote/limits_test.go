package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/remote"
	"github.com/mcp-tools/mcp-tools/tools/toolstest"
)

func TestCommandMaxStdout(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		maxStdout int64
		want      string // the error, or "" for success
	}{
		{"under the cap", 500, 1000, ""},
		{"over the cap", 2000, 1000, `tool "sub": its output exceeds the 1000-byte limit (max_stdout)`},
		{"over a cap in KiB", 5000, 4 << 10, "exceeds the 4 KiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := command(t, "big", func(cfg *remote.CommandConfig) {
				cfg.MaxStdout = tt.maxStdout
				cfg.Env["SIZE"] = strconv.Itoa(tt.size)
			})
			r := run(t, c, `{"input":""}`)
			switch {
			case tt.want == "" && (r.Err != nil || len(r.Text) != tt.size):
				t.Errorf("got %d bytes, error %v; want %d bytes", len(r.Text), r.Err, tt.size)
			case tt.want != "" && (r.Err == nil || !strings.Contains(r.Err.Message, tt.want)):
				t.Errorf("got error %v, want %q", r.Err, tt.want)
			}
		})
	}
}

func TestCommandMaxStderr(t *testing.T) {
	tests := []struct {
		name      string
		maxStderr int64
		want      string
	}{
		// errflood writes 200 KiB of stderr.
		{"default cap", 0, "its error output exceeds the 64 KiB limit (max_stderr)"},
		{"raised cap", 512 << 10, ""},
		{"lowered cap", 100, "its error output exceeds the 100-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, command(t, "errflood", func(cfg *remote.CommandConfig) { cfg.MaxStderr = tt.maxStderr }), `{"input":""}`)
			if r.Err == nil {
				t.Fatal("succeeded, want a failure")
			}
			if tt.want == "" {
				// Under the cap, the failure is the exit with its stderr.
				var ee *remote.ExitError
				if !errors.As(r.Err, &ee) || ee.Code != 1 {
					t.Errorf("got %v, want an *remote.ExitError with code 1", r.Err)
				}
				return
			}
			if !strings.Contains(r.Err.Message, tt.want) {
				t.Errorf("got %q, want %q", r.Err.Message, tt.want)
			}
		})
	}
}

func TestCommandExitErrorMessage(t *testing.T) {
	r := run(t, command(t, "errlong", nil), `{"input":""}`)
	var ee *remote.ExitError
	if r.Err == nil || !errors.As(r.Err, &ee) {
		t.Fatalf("got %v, want an *remote.ExitError", r.Err)
	}
	if ee.Code != 2 || r.Err.Code != 2 {
		t.Errorf("got exit code %d (error code %d), want 2", ee.Code, r.Err.Code)
	}
	if len(r.Err.Message) > 4<<10 {
		t.Errorf("got a %d-byte message, want at most 4 KiB of stderr", len(r.Err.Message))
	}
	if !strings.HasSuffix(r.Err.Message, "the real reason") {
		t.Errorf("got message ending %q, want the end of stderr, trimmed", r.Err.Message[max(0, len(r.Err.Message)-40):])
	}

	// Progress lines are not part of the message.
	r = run(t, command(t, "progressfail", nil), `{"input":""}`)
	if r.Err == nil || r.Err.Message != "cannot open model.bin" {
		t.Errorf("got %v, want exactly the non-progress stderr", r.Err)
	}
}

// script runs a testdata script with a pid file and a mark file.
func script(t *testing.T, name string, timeout, grace time.Duration) (c *remote.Command, pidfile, mark string) {
	t.Helper()
	dir := t.TempDir()
	pidfile, mark = filepath.Join(dir, "pid"), filepath.Join(dir, "mark")
	c, err := remote.NewCommand(remote.CommandConfig{
		Common:    remote.Common{Name: "script", Description: "d", Timeout: timeout},
		Command:   []string{"sh", filepath.Join("testdata", name)},
		Env:       map[string]string{"PIDFILE": pidfile, "MARK": mark},
		KillGrace: grace,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, pidfile, mark
}

func TestCommandKillGrace(t *testing.T) {
	t.Run("SIGTERM first", func(t *testing.T) {
		c, _, mark := script(t, "term.sh", 300*time.Millisecond, 5*time.Second)
		if r := run(t, c, `{"input":""}`); r.Err == nil || r.Err.Kind != tools.KindTimeout {
			t.Fatalf("got %v, want a timeout", r.Err)
		}
		b, err := os.ReadFile(mark)
		if got := strings.TrimSpace(string(b)); got != "terminated" {
			t.Errorf("got mark %q (%v), want the script's SIGTERM handler to have run", got, err)
		}
	})
	t.Run("SIGKILL after the grace", func(t *testing.T) {
		c, pidfile, _ := script(t, "stubborn.sh", 300*time.Millisecond, 200*time.Millisecond)
		done := make(chan tools.Outcome, 1)
		go func() { done <- run(t, c, `{"input":""}`) }()
		select {
		case r := <-done:
			if r.Err == nil || r.Err.Kind != tools.KindTimeout {
				t.Errorf("got %v, want a timeout", r.Err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a process that ignores SIGTERM kept the call alive")
		}
		waitGone(t, grandchild(t, pidfile))
	})
}

func TestCommandLogsNoSecrets(t *testing.T) {
	var buf bytes.Buffer
	c := command(t, "echo", func(cfg *remote.CommandConfig) {
		cfg.Env["API_KEY"] = "hunter2"
		cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	if r := run(t, c, `{"input":"x"}`); r.Err != nil {
		t.Fatal(r.Err)
	}
	if !strings.Contains(buf.String(), "starting subprocess") || !strings.Contains(buf.String(), os.Args[0]) {
		t.Errorf("got log %q, want the spawn with its argv", buf.String())
	}
	if strings.Contains(buf.String(), "hunter2") {
		t.Errorf("got log %q, which holds an environment value", buf.String())
	}
}

func TestHTTPMaxResponseBytes(t *testing.T) {
	tests := []struct {
		name string
		body int
		max  int64
		want string
	}{
		{"at the cap", 100, 100, ""},
		{"over the cap", 101, 100, `tool "svc": the response exceeds the 100-byte limit (max_response_bytes)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := recordingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, strings.Repeat("a", tt.body)) })
			h := httpTool(t, remote.HTTPConfig{URL: srv.URL, MaxResponseBytes: tt.max})
			r := run(t, h, `{"input":"x"}`)
			switch {
			case tt.want == "" && (r.Err != nil || len(r.Text) != tt.body):
				t.Errorf("got %d bytes, error %v; want %d bytes", len(r.Text), r.Err, tt.body)
			case tt.want != "" && (r.Err == nil || r.Err.Message != tt.want):
				t.Errorf("got %v, want %q", r.Err, tt.want)
			}
		})
	}
	t.Run("huge error page", func(t *testing.T) {
		srv, _ := recordingServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, strings.Repeat("e", 1000))
		})
		r := run(t, httpTool(t, remote.HTTPConfig{URL: srv.URL, MaxResponseBytes: 100}), `{"input":"x"}`)
		if r.Err == nil || r.Err.Code != 502 || !strings.HasPrefix(r.Err.Message, "HTTP 502: eee") || len(r.Err.Message) > 220 {
			t.Errorf("got %+v, want HTTP 502 with a short snippet", r.Err)
		}
	})
}

func TestHTTPMaxRedirects(t *testing.T) {
	// /hop/N redirects to /hop/N-1; /hop/0 answers.
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n == 0 {
			io.WriteString(w, "arrived")
			return
		}
		http.Redirect(w, r, srv.URL+"/hop/"+strconv.Itoa(n-1), http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name         string
		hops         int
		maxRedirects int
		want         string
	}{
		{"default allows 5", 5, 0, ""},
		{"default refuses 6", 6, 0, "more than 5 redirects"},
		{"2 allowed", 2, 2, ""},
		{"3 over 2", 3, 2, "more than 2 redirects"},
		{"negative refuses any", 1, -1, "more than 0 redirects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := httpTool(t, remote.HTTPConfig{URL: srv.URL + "/hop/" + strconv.Itoa(tt.hops), Method: "GET", MaxRedirects: tt.maxRedirects})
			r := run(t, h, `{"input":"x"}`)
			switch {
			case tt.want == "" && (r.Err != nil || r.Text != "arrived"):
				t.Errorf("got %q %v, want to arrive", r.Text, r.Err)
			case tt.want != "" && (r.Err == nil || !strings.Contains(r.Err.Message, tt.want)):
				t.Errorf("got %q %v, want %q", r.Text, r.Err, tt.want)
			}
		})
	}
}

func TestHTTPCancellation(t *testing.T) {
	arrived := make(chan struct{})
	aborted := make(chan struct{})
	srv, _ := recordingServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
		close(aborted)
	})
	h := httpTool(t, remote.HTTPConfig{URL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Outcome, 1)
	go func() { done <- tools.Settle(h.Call(ctx, json.RawMessage(`{"input":"x"}`))) }()
	<-arrived
	cancel()
	r := <-done
	if r.Err == nil || r.Err.Kind != tools.KindCancelled {
		t.Errorf("got %+v, want cancelled", r.Err)
	}
	select {
	case <-aborted:
	case <-time.After(10 * time.Second):
		t.Error("the server never saw the request aborted")
	}
}

func TestHTTPDeleteAndLogging(t *testing.T) {
	srv, s := recordingServer(t, ok)
	var buf bytes.Buffer
	h := httpTool(t, remote.HTTPConfig{URL: srv.URL + "/items?key=sekrit", Method: "delete",
		Common:  remote.Common{Name: "del", Description: "d", Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		Headers: map[string]string{"X-Api-Key": "hunter2"}})
	if r := run(t, h, `{"input":"42"}`); r.Err != nil {
		t.Fatal(r.Err)
	}
	if s.method != "DELETE" || s.url != "/items?key=sekrit&input=42" {
		t.Errorf("got %s %s, want DELETE with the input in the query", s.method, s.url)
	}
	log := buf.String()
	if !strings.Contains(log, "X-Api-Key") || !strings.Contains(log, "/items") {
		t.Errorf("got log %q, want the path and header names", log)
	}
	for _, secret := range []string{"hunter2", "sekrit", "input=42"} {
		if strings.Contains(log, secret) {
			t.Errorf("got log %q, which holds %q", log, secret)
		}
	}
}

func TestHTTPConformance(t *testing.T) {
	srv, _ := recordingServer(t, ok)
	toolstest.Check(t, httpTool(t, remote.HTTPConfig{URL: srv.URL}))
}

// TestConfigFromYAML: the configs map from a config file as documented.
func TestConfigFromYAML(t *testing.T) {
	src := `
name: summarize
description: Summarize a text.
input_schema:
  type: object
  properties:
    text: {type: string}
timeout: 5s
max_concurrency: 3
command: [python3, summarize.py]
dir: /opt/tools
env: {MODEL: small}
max_stdout: 2048
kill_grace: 1s
`
	var cfg remote.CommandConfig
	if err := yaml.UnmarshalWithOptions([]byte(src), &cfg, yaml.UseJSONUnmarshaler()); err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "summarize" || cfg.Timeout != 5*time.Second || cfg.MaxConcurrency != 3 || cfg.Dir != "/opt/tools" ||
		cfg.Env["MODEL"] != "small" || cfg.MaxStdout != 2048 || cfg.KillGrace != time.Second || len(cfg.Command) != 2 {
		t.Errorf("got %+v", cfg)
	}
	var schema map[string]any
	if err := json.Unmarshal(cfg.InputSchema, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("got input schema %s (%v), want the object", cfg.InputSchema, err)
	}

	var hc remote.HTTPConfig
	if err := yaml.Unmarshal([]byte("name: kb\ndescription: d\nurl: http://127.0.0.1/x\nmethod: GET\nheaders: {Authorization: 'Bearer ${T}'}\nmax_response_bytes: 10\nmax_redirects: 2\n"), &hc); err != nil {
		t.Fatal(err)
	}
	if hc.Name != "kb" || hc.URL != "http://127.0.0.1/x" || hc.Method != "GET" || hc.Headers["Authorization"] != "Bearer ${T}" || hc.MaxResponseBytes != 10 || hc.MaxRedirects != 2 {
		t.Errorf("got %+v", hc)
	}
}
