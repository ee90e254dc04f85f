package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/auth/authtest"
)

// startServe runs `mcp-tools serve ARGS` and returns the first URL its
// log prints for msg ("serving" or "serving metrics"), with stdin and the
// process. The process is killed when the test ends.
func startServe(t *testing.T, msg string, stdin io.Reader, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--log-format", "json"}, args...)...)
	cmd.Stdin = stdin
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Msg, URL string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg && line.URL != "" {
				select {
				case found <- line.URL:
				default:
				}
			}
		}
	}()
	select {
	case u := <-found:
		return u, cmd
	case <-time.After(30 * time.Second):
		t.Fatalf("serve %v never logged %q with a url", args, msg)
	}
	return "", nil
}

func post(t *testing.T, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestServeWithAuthIssuer: with --auth-issuer and a config file's auth
// section and per-tool scopes, the binary refuses requests without a
// token (401 naming its metadata), serves one with a valid token, and
// leaves a tool out of tools/list when the token lacks its scope.
func TestServeWithAuthIssuer(t *testing.T) {
	iss := authtest.NewIssuer(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tools.yaml")
	os.WriteFile(cfg, []byte(`auth:
  tool_scopes: ["tools:call"]
builtins:
  calculator: {}
  datetime: {scopes: ["time:read"]}
`), 0o644)
	// The audience is the URL the server listens on: pick the port first.
	port := freePort(t)
	mcpURL := "http://127.0.0.1:" + port + "/mcp"
	url, _ := startServe(t, "serving", nil, "--transport", "http", "--addr", "127.0.0.1:"+port, "--config", cfg, "--auth-issuer", iss.URL)
	if url != mcpURL {
		t.Fatalf("serving at %s, want %s", url, mcpURL)
	}
	resp, _ := post(t, url, initBody, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	token := iss.Sign(t, iss.Claims(mcpURL, "tools:call", nil))
	h := map[string]string{"Authorization": "Bearer " + token}
	resp, _ = post(t, url, initBody, h)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize with a token: %d", resp.StatusCode)
	}
	h["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
	h["MCP-Protocol-Version"] = "2025-06-18"
	_, list := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h)
	if !strings.Contains(list, `"calculator"`) || strings.Contains(list, `"datetime"`) {
		t.Errorf("tools/list = %.300s; want calculator and not datetime (it needs time:read)", list)
	}
	_, call := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"calculator","arguments":{"input":"6*7"}}}`, h)
	if !strings.Contains(call, "42") {
		t.Errorf("calculator with a token = %.300s", call)
	}
}

// TestAuthIssuerNeedsHTTP: an issuer on stdio, or an audience that cannot
// be derived, is a usage error at start, not a surprise later.
func TestAuthIssuerNeedsHTTP(t *testing.T) {
	_, stderr, code := runBinary(t, "serve", "--auth-issuer", "https://sso.example.com")
	if code != exitUsage || !strings.Contains(stderr, "--transport http") {
		t.Errorf("stdio with --auth-issuer: %d %q", code, stderr)
	}
	_, stderr, code = runBinary(t, "serve", "--transport", "http", "--addr", "0.0.0.0:0", "--auth-issuer", "https://sso.example.com")
	if code != exitUsage || !strings.Contains(stderr, "--auth-audience") {
		t.Errorf("0.0.0.0 without --auth-audience: %d %q", code, stderr)
	}
}

// TestMetricsEndpoints: over HTTP the binary serves /metrics, /healthz and
// /readyz; a stdio server serves them on --metrics-addr; calls show up.
func TestMetricsEndpoints(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		url, _ := startServe(t, "serving", nil, "--transport", "http", "--addr", "127.0.0.1:0")
		base := strings.TrimSuffix(url, "/mcp")
		resp, _ := post(t, url, initBody, nil)
		h := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-06-18"}
		post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculator","arguments":{"input":"1+1"}}}`, h)
		checkMetrics(t, base, `mcp_tools_calls_total{outcome="ok",tool="calculator"} 1`)
	})
	t.Run("stdio", func(t *testing.T) {
		pr, pw, err := os.Pipe() // a file: Wait does not wait on a copier
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pw.Close(); pr.Close() })
		url, _ := startServe(t, "serving metrics", pr, "--metrics-addr", "127.0.0.1:0")
		fmt.Fprintln(pw, initBody)
		fmt.Fprintln(pw, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		fmt.Fprintln(pw, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculator","arguments":{"input":"1+1"}}}`)
		checkMetrics(t, strings.TrimSuffix(url, "/metrics"), `mcp_tools_calls_total{outcome="ok",tool="calculator"} 1`)
	})
}

// checkMetrics waits (bounded) until base's /metrics holds want, and
// checks /healthz and /readyz.
func checkMetrics(t *testing.T, base, want string) {
	t.Helper()
	var body []byte
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/metrics")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if bytes.Contains(body, []byte(want)) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics never showed %q: %.2000s", want, regexp.MustCompile(`(?m)^#.*\n`).ReplaceAll(body, nil))
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + p)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %v %v", p, err, resp)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := strings.Cut(ln.Addr().String(), ":")
	return port
}
