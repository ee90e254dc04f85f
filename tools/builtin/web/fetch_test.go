package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
)

// callFetch calls tool with url and, when maxLength > 0, max_length.
func callFetch(t *testing.T, tool tools.Tool, url string, maxLength int) (tools.Result, error) {
	t.Helper()
	args := map[string]any{"url": url}
	if maxLength > 0 {
		args["max_length"] = maxLength
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Call(context.Background(), raw)
}

func fetchOutput(t *testing.T, r tools.Result) FetchOutput {
	t.Helper()
	out, ok := r.Structured.(FetchOutput)
	if !ok {
		t.Fatalf("Structured is %T, want FetchOutput", r.Structured)
	}
	return out
}

func wantKind(t *testing.T, err error, kind tools.Kind, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a %s error containing %q", kind, substr)
	}
	e := tools.AsError(err)
	if e.Kind != kind {
		t.Errorf("got error kind %s (%v), want %s", e.Kind, err, kind)
	}
	if !strings.Contains(e.Message, substr) {
		t.Errorf("got error %q, want it to contain %q", e.Message, substr)
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serve starts an httptest server on 127.0.0.1 that counts its requests.
func serve(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// serveOn starts a server listening on ip (such as 127.0.0.2).
func serveOn(t *testing.T, ip string, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestFetchInfo(t *testing.T) {
	info := NewFetch(FetchConfig{}).Info()
	if info.Name != "web_fetch" {
		t.Errorf("got name %q, want web_fetch", info.Name)
	}
	if !info.Annotations.ReadOnly || !info.Annotations.OpenWorld {
		t.Errorf("got annotations %+v, want ReadOnly and OpenWorld", info.Annotations)
	}
	var in struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(info.InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Required) != 1 || in.Required[0] != "url" {
		t.Errorf("got required %v, want [url]", in.Required)
	}
	if _, ok := in.Properties["max_length"]; !ok {
		t.Errorf("input schema has no max_length: %s", info.InputSchema)
	}
	var out struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(info.OutputSchema, &out); err != nil {
		t.Fatalf("output schema: %v", err)
	}
	for _, p := range []string{"url", "status", "content_type", "title", "truncated", "length"} {
		if _, ok := out.Properties[p]; !ok {
			t.Errorf("output schema lacks %q: %s", p, info.OutputSchema)
		}
	}
	if _, err := tools.NewRegistry(NewFetch(FetchConfig{})); err != nil {
		t.Errorf("NewRegistry: %v", err)
	}
}

func TestFetchRefusesLoopbackByDefault(t *testing.T) {
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	tool := NewFetch(FetchConfig{})
	tests := []struct {
		name string
		url  string
		kind tools.Kind
		want string
	}{
		{name: "literal loopback", url: srv.URL, kind: tools.KindInvalidArguments, want: "loopback"},
		{name: "decimal spelling", url: fmt.Sprintf("http://2130706433:%d/", port), kind: tools.KindInvalidArguments, want: "dotted-decimal"},
		{name: "octal spelling", url: fmt.Sprintf("http://0177.0.0.1:%d/", port), kind: tools.KindInvalidArguments, want: "dotted-decimal"},
		{name: "hex spelling", url: fmt.Sprintf("http://0x7f.0.0.1:%d/", port), kind: tools.KindInvalidArguments, want: "dotted-decimal"},
		// A name is resolved first, then refused at connect time.
		{name: "localhost name", url: fmt.Sprintf("http://localhost:%d/", port), kind: tools.KindExecutionFailed, want: "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := callFetch(t, tool, tt.url, 0)
			wantKind(t, err, tt.kind, tt.want)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}

	// The same server is reachable once the private network is allowed.
	res, err := callFetch(t, NewFetch(FetchConfig{AllowPrivateNetwork: true}), srv.URL, 0)
	if err != nil {
		t.Fatalf("with AllowPrivateNetwork: %v", err)
	}
	if !strings.Contains(res.Text, "secret") {
		t.Errorf("got text %q, want it to contain the body", res.Text)
	}
}

func TestFetchContent(t *testing.T) {
	page := readTestdata(t, "page.html")
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		case "/sniffed":
			w.Header()["Content-Type"] = nil // no type: sniffed as HTML
			w.Write(page)
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, "plain *text* <b>kept</b>")
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"a": [1, 2], "b": "<x>"}`)
		case "/problem":
			w.Header().Set("Content-Type", "application/problem+json")
			fmt.Fprint(w, `{"title": "ok"}`)
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		case "/pdf":
			w.Header().Set("Content-Type", "application/pdf")
			fmt.Fprint(w, "%PDF-1.4")
		case "/missing":
			http.Error(w, "no such page here", http.StatusNotFound)
		case "/gone":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "<html><head><style>p{}</style><script>x()</script></head><body><h1>Down for maintenance</h1><p>Back &amp; better soon</p></body></html>")
		case "/broken":
			http.Error(w, "upstream   database\n is down", http.StatusInternalServerError)
		}
	})
	tool := NewFetch(FetchConfig{AllowPrivateNetwork: true})

	tests := []struct {
		name        string
		path        string
		contains    []string
		notContains []string
		contentType string
		title       string
		errKind     tools.Kind
		errWant     string
		errCode     int
	}{
		{
			name:        "html to markdown",
			path:        "/page",
			contains:    []string{"URL: " + srv.URL + "/page\nTitle: Test Page\n\n", "# Hello, reader", "**bold**", "[relative link](" + srv.URL + "/docs/guide.html)", "- first item", "fmt.Println(\"hi\")"},
			notContains: []string{"do-not-show", "color: red", "<p>"},
			contentType: "text/html",
			title:       "Test Page",
		},
		{name: "html sniffed", path: "/sniffed", contains: []string{"# Hello, reader"}, contentType: "text/html", title: "Test Page"},
		{name: "text passthrough", path: "/text", contains: []string{"plain *text* <b>kept</b>"}, contentType: "text/plain"},
		{name: "text charset decoded", path: "/latin1", contains: []string{"café"}, contentType: "text/plain"},
		{name: "json passthrough", path: "/json", contains: []string{`{"a": [1, 2], "b": "<x>"}`}, contentType: "application/json"},
		{name: "json suffix passthrough", path: "/problem", contains: []string{`{"title": "ok"}`}, contentType: "application/problem+json"},
		{name: "png refused", path: "/png", errKind: tools.KindExecutionFailed, errWant: `content type "image/png" is not supported`},
		{name: "pdf refused", path: "/pdf", errKind: tools.KindExecutionFailed, errWant: `"application/pdf"`},
		{name: "404", path: "/missing", errKind: tools.KindExecutionFailed, errWant: "HTTP 404: no such page here", errCode: 404},
		{name: "503 html snippet", path: "/gone", errKind: tools.KindExecutionFailed, errWant: "HTTP 503: Down for maintenance Back & better soon", errCode: 503},
		{name: "500", path: "/broken", errKind: tools.KindExecutionFailed, errWant: "HTTP 500: upstream database is down", errCode: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := callFetch(t, tool, srv.URL+tt.path, 0)
			if tt.errKind != "" {
				wantKind(t, err, tt.errKind, tt.errWant)
				if tt.errCode != 0 && tools.AsError(err).Code != tt.errCode {
					t.Errorf("got code %d, want %d", tools.AsError(err).Code, tt.errCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want success", err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(res.Text, s) {
					t.Errorf("text does not contain %q:\n%s", s, res.Text)
				}
			}
			for _, s := range tt.notContains {
				if strings.Contains(res.Text, s) {
					t.Errorf("text contains %q, want it dropped:\n%s", s, res.Text)
				}
			}
			out := fetchOutput(t, res)
			if out.URL != srv.URL+tt.path || out.Status != 200 || out.ContentType != tt.contentType || out.Title != tt.title || out.Truncated {
				t.Errorf("got structured %+v, want url %s, status 200, type %s, title %q, not truncated", out, srv.URL+tt.path, tt.contentType, tt.title)
			}
			if out.Length == 0 {
				t.Errorf("got length 0, want the content's length")
			}
		})
	}
}

func TestFetchInvalidURL(t *testing.T) {
	tool := NewFetch(FetchConfig{AllowPrivateNetwork: true})
	tests := []struct {
		name string
		url  string
		want string
	}{
		{name: "relative", url: "/just/a/path", want: "not an absolute URL"},
		{name: "garbage", url: "::not a url", want: "not an absolute URL"},
		{name: "ftp", url: "ftp://example.com/file", want: "only http and https"},
		{name: "javascript", url: "javascript:alert(1)", want: "only http and https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := callFetch(t, tool, tt.url, 0)
			wantKind(t, err, tools.KindInvalidArguments, tt.want)
		})
	}
}

// redirector serves /hop/N, which redirects to /hop/N-1, down to /hop/0,
// which answers "arrived"; /loop redirects to itself.
func redirector(w http.ResponseWriter, r *http.Request) {
	var n int
	switch {
	case r.URL.Path == "/loop":
		http.Redirect(w, r, "/loop", http.StatusFound)
	case r.URL.Path == "/long":
		// A target far longer than a url the tool accepts as input.
		http.Redirect(w, r, "/hop/0?pad="+strings.Repeat("x", 64<<10), http.StatusFound)
	case r.URL.Path == "/hop/0":
		fmt.Fprint(w, "arrived")
	default:
		if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err != nil {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	}
}

func TestFetchRedirects(t *testing.T) {
	srv, _ := serve(t, redirector)
	tests := []struct {
		name string
		cfg  FetchConfig
		path string
		want string // error substring, or "" for success
	}{
		{name: "five redirects followed", path: "/hop/5"},
		{name: "six redirects refused", path: "/hop/6", want: "stopped after 5 redirects"},
		{name: "loop refused", path: "/loop", want: "stopped after 5 redirects"},
		{name: "MaxRedirects lowers the limit", cfg: FetchConfig{MaxRedirects: 2}, path: "/hop/3", want: "stopped after 2 redirects"},
		{name: "MaxRedirects within limit", cfg: FetchConfig{MaxRedirects: 2}, path: "/hop/2"},
		{name: "negative MaxRedirects follows none", cfg: FetchConfig{MaxRedirects: -1}, path: "/hop/1", want: "stopped after 0 redirects"},
		// The final URL is in the result: a redirect target is held to
		// the input's limit.
		{name: "redirect target too long", path: "/long", want: "the redirect target is 65"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.AllowPrivateNetwork = true
			res, err := callFetch(t, NewFetch(tt.cfg), srv.URL+tt.path, 0)
			if tt.want != "" {
				wantKind(t, err, tools.KindExecutionFailed, tt.want)
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want success", err)
			}
			if out := fetchOutput(t, res); out.URL != srv.URL+"/hop/0" {
				t.Errorf("got final URL %s, want %s", out.URL, srv.URL+"/hop/0")
			}
			if !strings.Contains(res.Text, "arrived") {
				t.Errorf("got text %q, want it to contain arrived", res.Text)
			}
		})
	}
}

func TestFetchRedirectToPrivateRefused(t *testing.T) {
	// 127.0.0.2 plays an internal host: the guard is told that only
	// 127.0.0.1 is public. Linux answers on all of 127/8.
	internal, internalHits := serveOn(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "internal secret")
	})
	public, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-internal":
			http.Redirect(w, r, internal.URL+"/", http.StatusFound)
		case "/to-decimal":
			http.Redirect(w, r, "http://2130706434/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-gopher":
			http.Redirect(w, r, "gopher://example.com/", http.StatusFound)
		default:
			fmt.Fprint(w, "public page")
		}
	})
	f := newFetcher(FetchConfig{})
	f.guard.allowIP = func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }
	tool := f.tool()

	if res, err := callFetch(t, tool, public.URL+"/", 0); err != nil || !strings.Contains(res.Text, "public page") {
		t.Fatalf("fetch of the allowed server: got %q, %v; want public page", res.Text, err)
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{name: "redirect to internal address", path: "/to-internal", want: "127.0.0.2"},
		{name: "redirect to decimal spelling", path: "/to-decimal", want: "dotted-decimal"},
		{name: "redirect to file scheme", path: "/to-file", want: "only http and https"},
		{name: "redirect to gopher scheme", path: "/to-gopher", want: "only http and https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := callFetch(t, tool, public.URL+tt.path, 0)
			wantKind(t, err, tools.KindExecutionFailed, tt.want)
			if err != nil && !strings.Contains(err.Error(), "redirect target") {
				t.Errorf("got %q, want it to say the redirect target was refused", err)
			}
		})
	}
	// A name that resolves to the internal address is refused at connect
	// time, before a request is sent.
	port := internal.Listener.Addr().(*net.TCPAddr).Port
	if _, err := callFetch(t, tool, fmt.Sprintf("http://127.0.0.2:%d/", port), 0); err == nil {
		t.Errorf("direct fetch of 127.0.0.2 succeeded, want refusal")
	}
	if n := internalHits.Load(); n != 0 {
		t.Errorf("internal server got %d requests, want 0", n)
	}
}

func TestFetchBodyLimit(t *testing.T) {
	body := strings.Repeat("x", 5000)
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, body)
	})
	tests := []struct {
		name    string
		max     int64
		wantLen int
		cut     bool
	}{
		{name: "over the limit is cut", max: 1000, wantLen: 1000, cut: true},
		{name: "at the limit is whole", max: 5000, wantLen: 5000},
		{name: "default limit", max: 0, wantLen: 5000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := callFetch(t, NewFetch(FetchConfig{AllowPrivateNetwork: true, MaxBodyBytes: tt.max}), srv.URL, 0)
			if err != nil {
				t.Fatal(err)
			}
			out := fetchOutput(t, res)
			if out.Length != tt.wantLen || out.BodyTruncated != tt.cut || out.Truncated != tt.cut {
				t.Errorf("got length %d, body_truncated %v, truncated %v; want %d, %v, %v", out.Length, out.BodyTruncated, out.Truncated, tt.wantLen, tt.cut, tt.cut)
			}
			if got := strings.Contains(res.Text, "only that much was read"); got != tt.cut {
				t.Errorf("body-limit note present %v, want %v:\n%.200s", got, tt.cut, res.Text)
			}
		})
	}
}

func TestFetchMaxLength(t *testing.T) {
	content := strings.Repeat("é", 300) // multi-byte: counted in characters
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, content)
	})
	tests := []struct {
		name      string
		cfg       FetchConfig
		maxLength int
		wantChars int
		marker    string // "" when not truncated
	}{
		{name: "max_length cuts", maxLength: 10, wantChars: 10, marker: "[truncated at 10 of 300 characters"},
		{name: "max_length above length", maxLength: 1000, wantChars: 300},
		{name: "DefaultMaxLength applies without max_length", cfg: FetchConfig{DefaultMaxLength: 50}, wantChars: 50, marker: "[truncated at 50 of 300 characters"},
		{name: "MaxLengthLimit caps max_length", cfg: FetchConfig{DefaultMaxLength: 20, MaxLengthLimit: 100}, maxLength: 250, wantChars: 100, marker: "[truncated at 100 of 300 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.AllowPrivateNetwork = true
			res, err := callFetch(t, NewFetch(tt.cfg), srv.URL, tt.maxLength)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(res.Text, "é"); got != tt.wantChars {
				t.Errorf("got %d characters of content, want %d", got, tt.wantChars)
			}
			out := fetchOutput(t, res)
			if out.Length != 300 {
				t.Errorf("got length %d, want 300 (the whole content)", out.Length)
			}
			if out.Truncated != (tt.marker != "") {
				t.Errorf("got truncated %v, want %v", out.Truncated, tt.marker != "")
			}
			if tt.marker != "" && !strings.Contains(res.Text, tt.marker) {
				t.Errorf("text lacks marker %q:\n%s", tt.marker, res.Text)
			}
			if tt.marker == "" && strings.Contains(res.Text, "[truncated") {
				t.Errorf("text has a truncation marker, want none:\n%s", res.Text)
			}
		})
	}
}

func TestFetchUserAgent(t *testing.T) {
	var got atomic.Value
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.UserAgent())
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "ok")
	})
	tests := []struct {
		name string
		cfg  FetchConfig
		path string
		want string
	}{
		{name: "default", want: "mcp-tools/dev (+MCP web_fetch)"},
		{name: "version", cfg: FetchConfig{Version: "1.2.3"}, want: "mcp-tools/1.2.3 (+MCP web_fetch)"},
		{name: "custom", cfg: FetchConfig{UserAgent: "probe/9", Version: "1.2.3"}, want: "probe/9"},
		{name: "after redirect", cfg: FetchConfig{Version: "2.0"}, path: "/redirect", want: "mcp-tools/2.0 (+MCP web_fetch)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.AllowPrivateNetwork = true
			if _, err := callFetch(t, NewFetch(tt.cfg), srv.URL+tt.path, 0); err != nil {
				t.Fatal(err)
			}
			if ua := got.Load(); ua != tt.want {
				t.Errorf("server saw User-Agent %q, want %q", ua, tt.want)
			}
		})
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release) // runs before srv.Close, which waits for handlers
	tool := NewFetch(FetchConfig{AllowPrivateNetwork: true, Timeout: 50 * time.Millisecond})
	_, err := callFetch(t, tool, srv.URL, 0)
	wantKind(t, err, tools.KindExecutionFailed, "timed out: no complete response within 50ms")
}

func TestFetchCallerCancel(t *testing.T) {
	release := make(chan struct{})
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tool := NewFetch(FetchConfig{AllowPrivateNetwork: true})
	_, err := tool.Call(ctx, json.RawMessage(fmt.Sprintf(`{"url": %q}`, srv.URL)))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want an error wrapping context.Canceled", err)
	}
}

func TestFetchLogs(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	var buf bytes.Buffer
	log := newTestLogger(&buf)
	if _, err := callFetch(t, NewFetch(FetchConfig{AllowPrivateNetwork: true, Logger: log}), srv.URL, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "status=200") {
		t.Errorf("log %q lacks the fetch record", buf.String())
	}
}
