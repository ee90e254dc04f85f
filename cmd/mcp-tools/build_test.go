package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// stdioCall is a whole stdio session: the handshake, one call to echo,
// then end of input.
const stdioCall = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"traced"}}}
`

// TestEmbeddedBuildRefusesServiceFeatures: the default build has neither
// shared state nor OTLP export, and says so, naming the flag or variable
// and the build that has them, rather than serving without them.
func TestEmbeddedBuildRefusesServiceFeatures(t *testing.T) {
	const hint = "only the service build has it: go install -tags service github.com/mcp-tools/mcp-tools/cmd/mcp-tools@latest"
	tests := []struct {
		name       string
		env        []string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"state", nil, []string{"serve", "--state", "redis://127.0.0.1:1/0"}, exitUsage,
			"--state: shared state (Redis) is not in this build; " + hint},
		{"otlp endpoint", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"}, []string{"serve"}, 1,
			"telemetry: OTEL_EXPORTER_OTLP_ENDPOINT asks for an OTLP export, which is not in this build (unset it, or set OTEL_SDK_DISABLED=true); " + hint},
		{"traces endpoint", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:1/v1/traces"}, []string{"serve"}, 1,
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT asks for an OTLP export"},
		{"metrics endpoint", []string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://127.0.0.1:1/v1/metrics"}, []string{"serve"}, 1,
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT asks for an OTLP export"},
		// Exports turned off: nothing is asked of this build.
		{"sdk disabled", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_SDK_DISABLED=true"}, []string{"serve", "--builtins", "echo"}, 0, ""},
		{"exporters none", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none"}, []string{"serve", "--builtins", "echo"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runBin(t, binary, stdioCall, tt.env, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if tt.wantStderr != "" && !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.wantStderr)
			}
			if tt.wantCode == 0 && !strings.Contains(stdout, `"text":"traced"`) {
				t.Errorf("the call was not answered; stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
	if out, _, _ := runBin(t, binary, "", nil, "version"); !strings.Contains(out, "\nembedded build: ") {
		t.Errorf("version = %q, want it to name the embedded build", out)
	}
}

// TestServiceBuildExportsTraces runs the service build over stdio with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at a stand-in collector on
// 127.0.0.1: the call's span reaches it when the session ends.
func TestServiceBuildExportsTraces(t *testing.T) {
	bin := serviceBinary(t)
	var mu sync.Mutex
	got := map[string][]byte{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], body...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + ln.Addr().String(), "OTEL_METRICS_EXPORTER=none"}
	stdout, stderr, code := runBin(t, bin, stdioCall, env, "serve", "--builtins", "echo")
	if code != 0 || !strings.Contains(stdout, `"text":"traced"`) {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Contains(got["/v1/traces"], []byte("tools/call echo")) {
		t.Errorf("the collector got no span named \"tools/call echo\" at /v1/traces; got paths %v", keys(got))
	}
	if out, _, _ := runBin(t, bin, "", nil, "version"); !strings.Contains(out, "\nservice build: ") {
		t.Errorf("version = %q, want it to name the service build", out)
	}
}

// keys returns m's keys.
func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestEmbeddedBuildOTLPVariablesOnlyStopServe: list, call and validate
// export nothing, so an OTLP endpoint in the environment (a developer's
// shell that exports to a collector) must not stop them in the embedded
// build; only serve refuses it.
func TestEmbeddedBuildOTLPVariablesOnlyStopServe(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(cfg, []byte("builtins:\n  calculator: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"}
	for _, args := range [][]string{
		{"list"},
		{"call", "calculator", `{"input": "2 ** 10"}`},
		{"validate", "--config", cfg},
	} {
		stdout, stderr, code := runBin(t, binary, "", env, args...)
		if code != 0 || strings.Contains(stderr, "OTLP") {
			t.Errorf("%v with %v: exit %d, want 0 and no word of OTLP\nstdout:\n%s\nstderr:\n%s", args, env, code, stdout, stderr)
		}
	}
}

// TestEmbeddedBuildValidateRefusesSharedState: a config file whose
// server.state names Redis cannot be served by the embedded build, so
// validate must not call it ok.
func TestEmbeddedBuildValidateRefusesSharedState(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  state: redis://127.0.0.1:1/0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runBin(t, binary, "", nil, "validate", "--config", cfg)
	if code != exitUsage || !strings.Contains(stderr, "server.state: shared state (Redis) is not in this build; only the service build has it") {
		t.Errorf("validate: exit %d, want %d and server.state named with the service build\nstdout:\n%s\nstderr:\n%s", code, exitUsage, stdout, stderr)
	}
	if _, stderr, code := runBin(t, serviceBinary(t), "", nil, "validate", "--config", cfg); code != 0 {
		t.Errorf("validate (service build): exit %d, want 0\n%s", code, stderr)
	}
}
