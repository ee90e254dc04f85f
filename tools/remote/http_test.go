package remote_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// seen records what a test server received.
type seen struct {
	mu          sync.Mutex
	method, url string
	body, ctype string
	auth        string
}

func recordingServer(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *seen) {
	t.Helper()
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.method, s.url, s.body, s.ctype, s.auth = r.Method, r.URL.String(), string(b), r.Header.Get("Content-Type"), r.Header.Get("Authorization")
		s.mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func ok(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"score": 0.9}`) }

func httpTool(t *testing.T, cfg remote.HTTPConfig) *remote.HTTP {
	t.Helper()
	if cfg.Name == "" {
		cfg.Common = remote.Common{Name: "svc", Description: "An HTTP tool.", Timeout: cfg.Timeout, InputSchema: cfg.InputSchema, OutputSchema: cfg.OutputSchema}
	}
	h, err := remote.NewHTTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHTTPRequests(t *testing.T) {
	srv, s := recordingServer(t, ok)
	tests := []struct {
		name                string
		method, url, args   string
		wantMethod, wantURL string
		wantBody, wantCType string
	}{
		{"GET keeps the query", "GET", srv.URL + "/search?lang=en", `{"input":"a b&c"}`, "GET", "/search?lang=en&input=a+b%26c", "", ""},
		{"POST JSON", "", srv.URL + "/p", `{"input":"{\"x\":1}"}`, "POST", "/p", `{"x":1}`, "application/json"},
		{"POST text", "POST", srv.URL + "/p", `{"input":"hello"}`, "POST", "/p", "hello", "text/plain; charset=UTF-8"},
		{"PUT", "PUT", srv.URL + "/p", `{"input":"x"}`, "PUT", "/p", "x", "text/plain; charset=UTF-8"},
		{"PATCH", "PATCH", srv.URL + "/p", `{"input":"[1]"}`, "PATCH", "/p", "[1]", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := httpTool(t, remote.HTTPConfig{URL: tt.url, Method: tt.method})
			r := run(t, h, tt.args)
			if r.Err != nil || r.Text != `{"score": 0.9}` {
				t.Fatalf("result = %q %v", r.Text, r.Err)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.method != tt.wantMethod || s.url != tt.wantURL || s.body != tt.wantBody || s.ctype != tt.wantCType {
				t.Errorf("server saw %s %s body %q type %q", s.method, s.url, s.body, s.ctype)
			}
		})
	}
}

func TestHTTPTypedAndStructured(t *testing.T) {
	srv, s := recordingServer(t, ok)
	h := httpTool(t, remote.HTTPConfig{URL: srv.URL, Common: remote.Common{Name: "score", Description: "d",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"score":{"type":"number"}}}`)}})
	r := run(t, h, `{"text":"hi"}`)
	if m, _ := r.Structured.(map[string]any); m["score"] != 0.9 {
		t.Errorf("structured = %v", r.Structured)
	}
	if s.body != `{"text":"hi"}` {
		t.Errorf("body = %q, want the arguments object", s.body)
	}
	g := httpTool(t, remote.HTTPConfig{URL: srv.URL, Method: "GET", Common: remote.Common{Name: "g", Description: "d",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}}}`)}})
	run(t, g, `{"q":"go","n":3}`)
	if s.url != "/?n=3&q=go" {
		t.Errorf("GET with a schema: url %q", s.url)
	}
}

func TestHTTPHeadersFromEnv(t *testing.T) {
	srv, s := recordingServer(t, ok)
	h := httpTool(t, remote.HTTPConfig{URL: srv.URL, Common: remote.Common{Name: "a", Description: "d"},
		Headers:   map[string]string{"Authorization": "Bearer ${KB_TOKEN}"},
		LookupEnv: func(k string) (string, bool) { return map[string]string{"KB_TOKEN": "s3cret"}[k], k == "KB_TOKEN" }})
	run(t, h, `{"input":"x"}`)
	if s.auth != "Bearer s3cret" {
		t.Errorf("Authorization = %q", s.auth)
	}
	_, err := remote.NewHTTP(remote.HTTPConfig{URL: srv.URL, Common: remote.Common{Name: "a", Description: "d"},
		Headers: map[string]string{"Authorization": "Bearer ${NOPE}"}, LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("unset variable: %v", err)
	}
}

func TestHTTPFailures(t *testing.T) {
	big := strings.Repeat("z", 6<<20)
	var loop *httptest.Server
	loop = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loop.URL+"/again", http.StatusFound)
	}))
	defer loop.Close()
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request)
		timeout time.Duration
		want    string
		kind    tools.Kind
		code    int
	}{
		{"4xx", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such thing", 404) }, 0, "HTTP 404: no such thing", tools.KindExecutionFailed, 404},
		{"5xx", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		}, 0, "HTTP 503: down for maintenance", tools.KindExecutionFailed, 503},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}, 200 * time.Millisecond, `tool "svc" ran out of time`, tools.KindTimeout, 0},
		{"huge body", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }, 0, "exceeds the 5 MiB limit", tools.KindExecutionFailed, 0},
		{"redirect to another scheme", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "ftp://example.invalid/x", http.StatusFound)
		}, 0, "is not followed", tools.KindExecutionFailed, 0},
		{"redirect loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, loop.URL, http.StatusFound) }, 0, "more than 5 redirects", tools.KindExecutionFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := recordingServer(t, tt.handler)
			h := httpTool(t, remote.HTTPConfig{URL: srv.URL, Common: remote.Common{Timeout: tt.timeout}})
			r := run(t, h, `{"input":"x"}`)
			if r.Err == nil || !strings.Contains(r.Err.Message, tt.want) || r.Err.Kind != tt.kind || r.Err.Code != tt.code {
				t.Errorf("result = %q %+v, want %s %q code %d", r.Text, r.Err, tt.kind, tt.want, tt.code)
			}
		})
	}
}

func TestNewHTTPRefusesBadConfig(t *testing.T) {
	common := remote.Common{Name: "x", Description: "d"}
	tests := []struct {
		name string
		cfg  remote.HTTPConfig
		want string
	}{
		{"other scheme", remote.HTTPConfig{Common: common, URL: "ftp://x"}, "is not an http or https URL"},
		{"not a URL", remote.HTTPConfig{Common: common, URL: "not a url"}, "is not an http or https URL"},
		{"no host", remote.HTTPConfig{Common: common, URL: "http:///path"}, "is not an http or https URL"},
		{"bad method", remote.HTTPConfig{Common: common, URL: "http://x", Method: "TRACE"}, `method "TRACE": use GET, POST, PUT, PATCH or DELETE`},
		{"negative max_response_bytes", remote.HTTPConfig{Common: common, URL: "http://x", MaxResponseBytes: -1}, "max_response_bytes must not be negative"},
		{"negative concurrency", remote.HTTPConfig{Common: remote.Common{Name: "x", Description: "d", MaxConcurrency: -2}, URL: "http://x"}, "max_concurrency must not be negative"},
		{"negative timeout", remote.HTTPConfig{Common: remote.Common{Name: "x", Description: "d", Timeout: -time.Second}, URL: "http://x"}, "timeout must not be negative"},
		// A value read from an environment file written with CRLF line
		// ends: every request would fail; the tool is refused at start,
		// without quoting the value.
		{"line break in a header value", remote.HTTPConfig{Common: common, URL: "http://x", Headers: map[string]string{"Authorization": "Bearer ${T}"},
			LookupEnv: func(string) (string, bool) { return "s3cret\r", true }}, `header "Authorization": its value holds a control character`},
		{"bad header name", remote.HTTPConfig{Common: common, URL: "http://x", Headers: map[string]string{"X Key": "v"}}, `header "X Key": not a valid header name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := remote.NewHTTP(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("got error %v, which quotes the secret", err)
			}
		})
	}
}
