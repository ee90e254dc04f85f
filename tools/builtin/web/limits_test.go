package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// checkShort fails when a refusal is not of kind, or carries 500
// characters or more back to the model.
func checkShort(t *testing.T, err error, kind tools.Kind, substr string) {
	t.Helper()
	wantKind(t, err, kind, substr)
	if err == nil {
		return
	}
	if n := utf8.RuneCountInString(tools.AsError(err).Message); n >= 500 {
		t.Errorf("error is %d characters, want fewer than 500: %.300s", n, err)
	}
}

// maxLength returns the maxLength that tool's input schema publishes for
// the property name.
func maxLength(t *testing.T, tool tools.Tool, name string) any {
	t.Helper()
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(tool.Info().InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	return s.Properties[name]["maxLength"]
}

// TestFetchLongURLs: a long url is refused without the error carrying it
// back, by the validator and by the tool, whichever step refuses it.
func TestFetchLongURLs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens here any more: connections are refused

	long := strings.Repeat("a", 1900)
	tests := []struct {
		name    string
		cfg     FetchConfig
		url     string
		kind    tools.Kind
		want    string
		tooLong bool // refused by the schema's maxLength as well
	}{
		{name: "1 MiB url", url: "https://example.com/" + strings.Repeat("a", 1<<20), kind: tools.KindInvalidArguments, want: "the url is 1048596 bytes; the limit is 2048", tooLong: true},
		{name: "long relative url", url: "/" + long, kind: tools.KindInvalidArguments, want: "is not an absolute URL"},
		{name: "long url of control characters", url: strings.Repeat("\x01", 2000), kind: tools.KindInvalidArguments, want: "is not an absolute URL"},
		{name: "long scheme", url: long + "://x/", kind: tools.KindInvalidArguments, want: "only http and https"},
		{name: "long loopback url", url: "http://127.0.0.1/" + long, kind: tools.KindInvalidArguments, want: "loopback"},
		{name: "long numeric host", url: "http://" + strings.Repeat("1.", 900) + "1/", kind: tools.KindInvalidArguments, want: "not a valid one"},
		{name: "long host name", cfg: FetchConfig{AllowPrivateNetwork: true}, url: "http://" + strings.Repeat("a", 1800) + ".invalid/", kind: tools.KindExecutionFailed, want: "fetch http://aaaa"},
		{name: "long url to a closed port", cfg: FetchConfig{AllowPrivateNetwork: true}, url: "http://" + closed + "/" + long, kind: tools.KindExecutionFailed, want: " bytes in all): dial tcp "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := NewFetch(tt.cfg)
			_, err := callFetch(t, tool, tt.url, 0)
			checkShort(t, err, tt.kind, tt.want)

			args, _ := json.Marshal(FetchInput{URL: tt.url})
			verr := schema.MustCompile(tool.Info().InputSchema).Validate(args)
			if (verr != nil) != tt.tooLong {
				t.Fatalf("validator: got %v, want refused %v", verr, tt.tooLong)
			}
			if verr != nil {
				checkShort(t, verr, tools.KindInvalidArguments, "must be at most 2048 characters long")
			}
		})
	}
	if got := maxLength(t, NewFetch(FetchConfig{}), "url"); got != float64(MaxURLLength) {
		t.Errorf("url maxLength = %v, want %d", got, MaxURLLength)
	}
}

// echoBackend fails with an error that quotes the whole query, as a
// careless backend might.
type echoBackend struct{}

func (echoBackend) Search(_ context.Context, query string, _ int) ([]SearchResult, error) {
	return nil, fmt.Errorf("no results for %q", query)
}

func TestSearchLongQueries(t *testing.T) {
	tool, err := NewSearch(SearchConfig{Custom: echoBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		query   string
		kind    tools.Kind
		want    string
		tooLong bool
	}{
		{name: "1 MiB query", query: strings.Repeat("q", 1<<20), kind: tools.KindInvalidArguments, want: "the query is 1048576 bytes; the limit is 512", tooLong: true},
		{name: "513 bytes", query: strings.Repeat("q", 513), kind: tools.KindInvalidArguments, want: "the query is 513 bytes; the limit is 512", tooLong: true},
		{name: "512 bytes reach the backend, whose echo is cut", query: strings.Repeat("q", 512), kind: tools.KindExecutionFailed, want: "search custom: no results for \"qqq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := callSearch(t, tool, tt.query, 0)
			checkShort(t, err, tt.kind, tt.want)

			args, _ := json.Marshal(SearchInput{Query: tt.query})
			verr := schema.MustCompile(tool.Info().InputSchema).Validate(args)
			if (verr != nil) != tt.tooLong {
				t.Fatalf("validator: got %v, want refused %v", verr, tt.tooLong)
			}
			if verr != nil {
				checkShort(t, verr, tools.KindInvalidArguments, "must be at most 512 characters long")
			}
		})
	}
	if got := maxLength(t, tool, "query"); got != float64(MaxQueryLength) {
		t.Errorf("query maxLength = %v, want %d", got, MaxQueryLength)
	}
}

// TestFetchHostileHTML: HTML whose Markdown costs far more than its size
// (every line indented again at each of many nested quotes or lists, or
// many relative links against a long base URL) is converted only up to
// markdownBudgetPerBodyByte bytes per byte of MaxBodyBytes, and the result
// says it was cut. Without the budget these pages of under 64 KiB became
// megabytes of Markdown, and a 5 MiB one took minutes and gigabytes.
func TestFetchHostileHTML(t *testing.T) {
	const maxBody = 64 << 10
	pages := map[string]string{
		"/quotes": strings.Repeat("<blockquote>", 100) + "<pre>" + strings.Repeat("\n", 50000) + "</pre>",
		"/lists":  strings.Repeat("<ul><li>", 60) + strings.Repeat("x<br>", 10000),
		"/ol":     `<ol start="1000000000000000000"><li><pre>` + strings.Repeat("\n", 60000) + "</pre></ol>",
		"/links":  strings.Repeat("<a href=b>c</a>", 4000),
		"/images": strings.Repeat("<img src=b>", 5500),
	}
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for prefix, page := range pages {
			if strings.HasPrefix(r.URL.Path, prefix) {
				fmt.Fprint(w, page)
				return
			}
		}
		http.NotFound(w, r)
	})
	longDir := "/" + strings.Repeat("d", 1500) + "/" // relative links resolve under it
	tool := NewFetch(FetchConfig{AllowPrivateNetwork: true, MaxBodyBytes: maxBody})
	for path, page := range pages {
		t.Run(path, func(t *testing.T) {
			if len(page) > maxBody {
				t.Fatalf("page is %d bytes, more than the %d read", len(page), maxBody)
			}
			res, err := callFetch(t, tool, srv.URL+path+longDir, 0)
			if err != nil {
				t.Fatal(err)
			}
			out := fetchOutput(t, res)
			if out.Length > maxBody*markdownBudgetPerBodyByte {
				t.Errorf("converted content is %d characters, want at most %d", out.Length, maxBody*markdownBudgetPerBodyByte)
			}
			if !out.Truncated || out.BodyTruncated {
				t.Errorf("got truncated %v, body_truncated %v; want true, false", out.Truncated, out.BodyTruncated)
			}
			if !strings.Contains(res.Text, "the conversion stopped early") {
				t.Errorf("text lacks the note on the conversion:\n%.300s", res.Text)
			}
		})
	}
}

// TestToMarkdownMatchesLibrary: within its budget, toMarkdown writes what
// the library's own ConvertNode writes.
func TestToMarkdownMatchesLibrary(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/a/page.html?q=1#top")
	docs := []string{
		string(readTestdata(t, "page.html")),
		strings.Repeat("<blockquote>", 5) + "<ul><li>one<ol start=7><li><a href=x>two</a><li><b><i>three</i></b></ol></ul><pre>a\n\nb</pre>",
		"<h2>T<code>c</code></h2><p>x<img src=../i.png alt=i>y<br>z</p><ol><li><pre>1\n2</pre><li><kbd>k</kbd><tt>t</tt><samp>s</samp><var>v</var><em>e</em><strong>s</strong>",
		"<a href>empty</a><a href=#>hash</a><a href=' /sp ace '>sp</a><img src=''>",
	}
	for i, doc := range docs {
		r1, err := html.Parse(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		want, err := htmltomarkdown.ConvertNode(r1, converter.WithDomain(origin(base)))
		if err != nil {
			t.Fatal(err)
		}
		r2, _ := html.Parse(strings.NewReader(doc))
		got, cut, err := toMarkdown(context.Background(), r2, base, 1<<20)
		if err != nil || cut {
			t.Fatalf("doc %d: toMarkdown: cut %v, %v", i, cut, err)
		}
		if string(got) != string(want) {
			t.Errorf("doc %d: toMarkdown wrote\n%s\nthe library\n%s", i, got, want)
		}
	}
	// Past the budget, it stops and says so.
	r, _ := html.Parse(strings.NewReader(strings.Repeat("<blockquote>", 50) + "<pre>" + strings.Repeat("\n", 1000) + "</pre>"))
	if md, cut, err := toMarkdown(context.Background(), r, base, 10000); err != nil || !cut || len(md) > 10000 {
		t.Errorf("over budget: got %d bytes, cut %v, %v; want at most 10000, cut", len(md), cut, err)
	}
	// A done context stops it too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, _ = html.Parse(strings.NewReader(strings.Repeat("<p><b>x</b></p>", 5000)))
	if _, cut, err := toMarkdown(ctx, r, base, 1<<30); err != nil || !cut {
		t.Errorf("cancelled: got cut %v, %v; want cut", cut, err)
	}
}

// TestFetchLongTitle: a page's <title> counts against no max_length, so
// it is cut to maxTitleLength characters: a page that was one 3 MiB title
// made a result of twice that (text and structured), past the server's
// result limit.
func TestFetchLongTitle(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>"+strings.Repeat("é ", 1<<20)+"</title><p>body</p>")
	})
	res, err := callFetch(t, NewFetch(FetchConfig{AllowPrivateNetwork: true}), srv.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := fetchOutput(t, res)
	if n := utf8.RuneCountInString(out.Title); n > maxTitleLength+1 {
		t.Errorf("title is %d characters, want at most %d and an ellipsis", n, maxTitleLength)
	}
	if !strings.HasPrefix(out.Title, "é é é") || !strings.HasSuffix(out.Title, "…") {
		t.Errorf("title %.20q…%q, want the start of the title and an ellipsis", out.Title, out.Title[max(0, len(out.Title)-10):])
	}
	if len(res.Text) > 10000 || !strings.Contains(res.Text, "\n\nbody") {
		t.Errorf("text is %d bytes, want the short title and the body:\n%.200s", len(res.Text), res.Text)
	}
}
