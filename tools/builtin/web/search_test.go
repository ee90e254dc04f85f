package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
)

const testKey = "sekrit-token-123"

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func callSearch(t *testing.T, tool tools.Tool, query string, count int) (tools.Result, error) {
	t.Helper()
	args := map[string]any{"query": query}
	if count > 0 {
		args["count"] = count
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Call(context.Background(), raw)
}

func searchOutput(t *testing.T, r tools.Result) SearchOutput {
	t.Helper()
	out, ok := r.Structured.(SearchOutput)
	if !ok {
		t.Fatalf("Structured is %T, want SearchOutput", r.Structured)
	}
	return out
}

// fakeSearXNG answers /search like a SearXNG instance; the query decides
// the answer. It returns the instance's base URL and the last request's
// query string.
func fakeSearXNG(t *testing.T) (string, *atomic.Value) {
	t.Helper()
	var last atomic.Value
	body := readTestdata(t, "searxng.json")
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		last.Store(r.URL.RawQuery)
		if r.URL.Path != "/sx/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "wrong path or format", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("q") {
		case "golang":
			w.Write(body)
		case "nothing":
			fmt.Fprint(w, `{"query": "nothing", "results": []}`)
		case "broken":
			http.Error(w, "internal failure", http.StatusInternalServerError)
		case "forbidden":
			http.Error(w, "Forbidden", http.StatusForbidden)
		case "garbage":
			fmt.Fprint(w, `<html>not json`)
		case "huge":
			fmt.Fprintf(w, `{"results": [{"title": %q}]}`, strings.Repeat("a", 4096))
		}
	})
	return srv.URL + "/sx", &last
}

func TestSearXNG(t *testing.T) {
	base, last := fakeSearXNG(t)
	tool, err := NewSearch(SearchConfig{Backend: "searxng", URL: base + "/"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		query    string
		count    int
		wantText string
		wantN    int
		errWant  string
	}{
		{
			name:  "success",
			query: "golang",
			wantText: "1. The Go Programming Language\n   https://go.dev/\n   Go is an open source programming language.\n\n" +
				"2. Go (programming language)\n   https://en.wikipedia.org/wiki/Go_(programming_language)\n   Go is a statically typed, compiled language.\n\n" +
				"3. A Tour of Go\n   https://go.dev/tour/",
			wantN: 3,
		},
		{name: "count honoured", query: "golang", count: 1, wantText: "1. The Go Programming Language\n   https://go.dev/\n   Go is an open source programming language.", wantN: 1},
		{name: "no results", query: "nothing", wantText: `No results for "nothing".`, wantN: 0},
		{name: "http error", query: "broken", errWant: "search searxng: HTTP 500: internal failure"},
		{name: "json disabled hint", query: "forbidden", errWant: "add json to search.formats"},
		{name: "malformed json", query: "garbage", errWant: "not the JSON of a SearXNG search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := callSearch(t, tool, tt.query, tt.count)
			if tt.errWant != "" {
				wantKind(t, err, tools.KindExecutionFailed, tt.errWant)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.wantText {
				t.Errorf("got text\n%s\nwant\n%s", res.Text, tt.wantText)
			}
			out := searchOutput(t, res)
			if out.Query != tt.query || len(out.Results) != tt.wantN || out.Results == nil {
				t.Errorf("got structured %+v, want query %q and %d results (non-nil)", out, tt.query, tt.wantN)
			}
			b, _ := json.Marshal(out)
			if tt.wantN == 0 && !strings.Contains(string(b), `"results":[]`) {
				t.Errorf("got %s, want results as an empty array", b)
			}
		})
	}
	if q := last.Load().(string); !strings.Contains(q, "format=json") {
		t.Errorf("last query string %q lacks format=json", q)
	}
}

func TestBrave(t *testing.T) {
	body := readTestdata(t, "brave.json")
	var gotKey, gotAccept, gotCount atomic.Value
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		gotKey.Store(r.Header.Get("X-Subscription-Token"))
		gotAccept.Store(r.Header.Get("Accept"))
		gotCount.Store(r.URL.Query().Get("count"))
		if r.URL.Path != "/res/v1/web/search" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("X-Subscription-Token") != testKey {
			// A careless API that echoes the token it was sent.
			http.Error(w, "invalid token "+r.Header.Get("X-Subscription-Token"), http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("q") {
		case "golang":
			w.Write(body)
		case "nothing":
			fmt.Fprint(w, `{"type": "search", "query": {"original": "nothing"}}`)
		case "garbage":
			fmt.Fprint(w, `{"web": `)
		case "slow":
			<-r.Context().Done()
		}
	})

	var logs bytes.Buffer
	tool, err := NewSearch(SearchConfig{Backend: "brave", URL: srv.URL, APIKey: testKey, Logger: newTestLogger(&logs), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("success", func(t *testing.T) {
		res, err := callSearch(t, tool, "golang", 0)
		if err != nil {
			t.Fatal(err)
		}
		want := "1. The Go Programming Language\n   https://go.dev/\n   Go is an open source language & toolchain.\n\n2. A Tour of Go\n   https://go.dev/tour/\n   Learn Go step by step."
		if res.Text != want {
			t.Errorf("got text\n%s\nwant\n%s", res.Text, want)
		}
		if k := gotKey.Load(); k != testKey {
			t.Errorf("server got token %q, want %q", k, testKey)
		}
		if a := gotAccept.Load(); a != "application/json" {
			t.Errorf("server got Accept %q, want application/json", a)
		}
		if c := gotCount.Load(); c != "5" {
			t.Errorf("server got count %q, want the default 5", c)
		}
	})
	t.Run("count honoured", func(t *testing.T) {
		res, err := callSearch(t, tool, "golang", 1)
		if err != nil {
			t.Fatal(err)
		}
		if c := gotCount.Load(); c != "1" {
			t.Errorf("server got count %q, want 1", c)
		}
		if out := searchOutput(t, res); len(out.Results) != 1 || out.Results[0].URL != "https://go.dev/" {
			t.Errorf("got results %+v, want the first only", out.Results)
		}
	})
	t.Run("no results", func(t *testing.T) {
		res, err := callSearch(t, tool, "nothing", 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != `No results for "nothing".` {
			t.Errorf("got text %q, want the no-results sentence", res.Text)
		}
	})
	t.Run("malformed json", func(t *testing.T) {
		_, err := callSearch(t, tool, "garbage", 0)
		wantKind(t, err, tools.KindExecutionFailed, "not the JSON of a Brave web search")
	})
	t.Run("timeout", func(t *testing.T) {
		slow, err := NewSearch(SearchConfig{Backend: "brave", URL: srv.URL, APIKey: testKey, Timeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = callSearch(t, slow, "slow", 0)
		wantKind(t, err, tools.KindExecutionFailed, "timed out: no answer within 50ms")
	})
	t.Run("http error never shows the key", func(t *testing.T) {
		wrong := "other-" + testKey
		bad, err := NewSearch(SearchConfig{Backend: "brave", URL: srv.URL, APIKey: wrong, Logger: newTestLogger(&logs)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = callSearch(t, bad, "golang", 0)
		wantKind(t, err, tools.KindExecutionFailed, "HTTP 401: invalid token [redacted]")
		if err != nil && strings.Contains(err.Error(), wrong) {
			t.Errorf("error %q shows the API key", err)
		}
	})
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("logs show the API key:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "web_search") {
		t.Errorf("logs %q lack the search records", logs.String())
	}
}

func TestSearchResponseLimit(t *testing.T) {
	base, _ := fakeSearXNG(t)
	tests := []struct {
		name    string
		max     int64
		wantErr bool
	}{
		{name: "over the limit fails", max: 1024, wantErr: true},
		{name: "default limit", max: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := NewSearch(SearchConfig{Backend: "searxng", URL: base, MaxResponseBytes: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			_, err = callSearch(t, tool, "huge", 0)
			if tt.wantErr {
				wantKind(t, err, tools.KindExecutionFailed, "larger than 1024 bytes")
			} else if err != nil {
				t.Errorf("got %v, want success", err)
			}
		})
	}
}

func TestNewSearchConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  SearchConfig
		want string // error substring, or "" for success
	}{
		{name: "no backend", cfg: SearchConfig{}, want: `no Backend set; set it to "searxng" or "brave"`},
		{name: "unknown backend", cfg: SearchConfig{Backend: "bing"}, want: `unknown Backend "bing"`},
		{name: "searxng without URL", cfg: SearchConfig{Backend: "searxng"}, want: "needs URL"},
		{name: "searxng bad URL", cfg: SearchConfig{Backend: "searxng", URL: "localhost:8888"}, want: "absolute http or https URL"},
		{name: "brave without key", cfg: SearchConfig{Backend: "brave"}, want: "needs APIKey"},
		{name: "brave bad URL does not show key", cfg: SearchConfig{Backend: "brave", APIKey: testKey, URL: "ftp://x"}, want: "absolute http or https URL"},
		{name: "searxng ok", cfg: SearchConfig{Backend: "searxng", URL: "http://127.0.0.1:8888"}},
		{name: "brave ok with default URL", cfg: SearchConfig{Backend: "Brave", APIKey: testKey}},
		{name: "custom ignores backend fields", cfg: SearchConfig{Custom: staticBackend{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := NewSearch(tt.cfg)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
				info := tool.Info()
				if info.Name != "web_search" || !info.Annotations.ReadOnly || !info.Annotations.OpenWorld || len(info.OutputSchema) == 0 {
					t.Errorf("got info %+v, want web_search, read-only, open-world, with an output schema", info)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q shows the API key", err)
			}
		})
	}
}

// staticBackend returns 30 numbered results, or its error.
type staticBackend struct{ err error }

func (b staticBackend) Search(_ context.Context, query string, count int) ([]SearchResult, error) {
	if b.err != nil {
		return nil, b.err
	}
	var out []SearchResult
	for i := range 30 {
		out = append(out, SearchResult{Title: fmt.Sprintf("%s %d", query, i), URL: fmt.Sprintf("https://example.com/%d", i)})
	}
	return out, nil // more than asked: the tool trims
}

func TestSearchCustomBackend(t *testing.T) {
	tool, err := NewSearch(SearchConfig{Custom: staticBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := callSearch(t, tool, "q", 20)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(searchOutput(t, res).Results); n != 20 {
		t.Errorf("got %d results, want 20", n)
	}
	if !strings.HasPrefix(res.Text, "1. q 0\n   https://example.com/0") || !strings.Contains(res.Text, "20. q 19") || strings.Contains(res.Text, "21.") {
		t.Errorf("got text %q, want a numbered list of 20", res.Text)
	}

	failing, err := NewSearch(SearchConfig{Custom: staticBackend{err: errors.New("quota exceeded")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = callSearch(t, failing, "q", 0)
	wantKind(t, err, tools.KindExecutionFailed, "search custom: quota exceeded")

	_, err = callSearch(t, tool, "   ", 0)
	wantKind(t, err, tools.KindInvalidArguments, "query is empty")
}

// TestBraveKeyNotSentAcrossOrigins: a redirect from the configured Brave
// URL to another origin does not carry the subscription token there.
func TestBraveKeyNotSentAcrossOrigins(t *testing.T) {
	body := readTestdata(t, "brave.json")
	var otherKey atomic.Value
	other, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		otherKey.Store(r.Header.Get("X-Subscription-Token"))
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	var sameKey atomic.Value
	api, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/res/v1/web/search":
			target := other.URL + r.URL.Path + "?" + r.URL.RawQuery
			if r.URL.Query().Get("q") == "same" {
				target = "/moved/search?" + r.URL.RawQuery
			}
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
		case "/moved/search":
			sameKey.Store(r.Header.Get("X-Subscription-Token"))
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}
	})
	tool, err := NewSearch(SearchConfig{Backend: "brave", URL: api.URL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := callSearch(t, tool, "golang", 0); err != nil {
		t.Fatal(err)
	}
	if k, _ := otherKey.Load().(string); k != "" {
		t.Errorf("the other origin got the token %q", k)
	}
	// A redirect within the origin keeps it.
	if _, err := callSearch(t, tool, "same", 0); err != nil {
		t.Fatal(err)
	}
	if k, _ := sameKey.Load().(string); k != testKey {
		t.Errorf("the same origin got token %q, want %q", k, testKey)
	}
}

// TestSearchErrorNeverShowsPartOfTheKey: a backend's error body that
// echoes the key where the snippet is cut shows no piece of it.
func TestSearchErrorNeverShowsPartOfTheKey(t *testing.T) {
	const key = "k3y-0123456789abcdefXYZ"
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		// The snippet keeps 300 characters: the key straddles the cut.
		http.Error(w, strings.Repeat("p", 290)+" "+r.Header.Get("X-Subscription-Token"), http.StatusUnauthorized)
	})
	var logs bytes.Buffer
	tool, err := NewSearch(SearchConfig{Backend: "brave", URL: srv.URL, APIKey: key, Logger: newTestLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = callSearch(t, tool, "golang", 0)
	wantKind(t, err, tools.KindExecutionFailed, "HTTP 401: ppp")
	for _, s := range []string{err.Error(), logs.String()} {
		if strings.Contains(s, key[:6]) {
			t.Errorf("%q shows the start of the API key", s)
		}
	}
}
