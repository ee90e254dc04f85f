package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

// Defaults and bounds of web_search.
const (
	DefaultSearchTimeout    = 15 * time.Second
	DefaultMaxResponseBytes = 2 << 20
	DefaultSearchCount      = 5
	MaxSearchCount          = 20 // also the schema's maximum for count
	DefaultBraveURL         = "https://api.search.brave.com"
	// MaxQueryLength is the longest query web_search accepts, in bytes;
	// its input schema publishes it as the query's maxLength, so the
	// validator refuses a longer one before the tool runs, and the tool
	// checks it again.
	MaxQueryLength = 512
)

const (
	searchToolName             = "web_search"
	searchToolDescription      = "Search the web and return a numbered list of results, each with its title, URL and a snippet. Use web_fetch to read a result in full."
	backendErrorSnippetLength  = 300
	searchBackendSearXNG       = "searxng"
	searchBackendBrave         = "brave"
	searchBackendNamesSentence = `"searxng" or "brave"`
)

// SearchConfig configures web_search.
//
// The backend's URL is set by the operator, not by the model, so it is not
// subject to web_fetch's private-network guard: a SearXNG instance on
// localhost or the intranet is fine.
type SearchConfig struct {
	// Backend names the search service: "searxng" or "brave". It is
	// required unless Custom is set.
	Backend string
	// URL is the service's base URL. For "searxng" it is required (the
	// instance, such as http://127.0.0.1:8888); requests go to
	// {URL}/search. For "brave" empty means DefaultBraveURL; requests go
	// to {URL}/res/v1/web/search.
	URL string
	// APIKey is the "brave" subscription token; required for "brave" and
	// unused by "searxng". It is never written to errors or logs.
	APIKey string
	// Custom, when not nil, is the backend used, and Backend, URL and
	// APIKey are ignored.
	Custom Backend
	// Timeout bounds one search. Zero means DefaultSearchTimeout (15s).
	Timeout time.Duration
	// MaxResponseBytes is the largest backend response read; a larger one
	// fails the search. Zero means DefaultMaxResponseBytes (2 MiB).
	MaxResponseBytes int64
	// Logger receives one debug record per search (never the API key).
	// Nil discards.
	Logger *slog.Logger
}

// Backend is a web search service.
type Backend interface {
	// Search returns at most count results for query. It may be called
	// concurrently and must honour ctx.
	Search(ctx context.Context, query string, count int) ([]SearchResult, error)
}

// SearchResult is one hit.
type SearchResult struct {
	// Title is the page's title.
	Title string `json:"title" jsonschema:"description=Title of the page"`
	// URL is the page's address.
	URL string `json:"url" jsonschema:"description=Address of the page"`
	// Snippet is a short extract of the page, or "".
	Snippet string `json:"snippet" jsonschema:"description=Short extract of the page"`
}

// SearchInput is the input of web_search.
type SearchInput struct {
	// Query is what to search for.
	Query string `json:"query" jsonschema:"description=What to search for,minLength=1,maxLength=512"`
	// Count is the number of results wanted.
	Count int `json:"count,omitempty" jsonschema:"description=Number of results (default 5),minimum=1,maximum=20"`
}

// SearchOutput is the structured content of a web_search result.
type SearchOutput struct {
	// Query is the query searched for.
	Query string `json:"query" jsonschema:"description=The query searched for"`
	// Results are the hits, best first; empty when nothing was found.
	Results []SearchResult `json:"results" jsonschema:"description=Results in rank order"`
}

// NewSearch returns the web_search tool. It fails when the configuration
// names no usable backend, saying what is missing.
func NewSearch(cfg SearchConfig) (tools.Tool, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultSearchTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	backend := cfg.Custom
	name := "custom"
	if backend == nil {
		var err error
		backend, err = newBackend(cfg)
		if err != nil {
			return nil, err
		}
		name = cfg.Backend
	}
	s := &searcher{backend: backend, name: name, timeout: cfg.Timeout, secret: cfg.APIKey, log: log}
	t, err := typed.New(searchToolName, searchToolDescription, s.search,
		typed.WithAnnotations(tools.Annotations{Title: "Search the web", ReadOnly: true, OpenWorld: true}))
	if err != nil {
		return nil, fmt.Errorf("web search: %w", err)
	}
	return withOutputSchema(t, reflect.TypeFor[SearchOutput]()), nil
}

func newBackend(cfg SearchConfig) (Backend, error) {
	client := newSearchClient(cfg)
	switch strings.ToLower(cfg.Backend) {
	case searchBackendSearXNG:
		if cfg.URL == "" {
			return nil, errors.New("web search: backend \"searxng\" needs URL, the base URL of the SearXNG instance (such as http://127.0.0.1:8888)")
		}
		base, err := parseBase(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("web search: searxng URL: %w", err)
		}
		return &searxng{base: base, client: client}, nil
	case searchBackendBrave:
		if cfg.APIKey == "" {
			return nil, errors.New("web search: backend \"brave\" needs APIKey, a Brave Search API subscription token")
		}
		raw := cfg.URL
		if raw == "" {
			raw = DefaultBraveURL
		}
		base, err := parseBase(raw)
		if err != nil {
			return nil, fmt.Errorf("web search: brave URL: %w", err)
		}
		return &brave{base: base, key: cfg.APIKey, client: client}, nil
	case "":
		return nil, fmt.Errorf("web search: no Backend set; set it to %s (or set Custom)", searchBackendNamesSentence)
	default:
		return nil, fmt.Errorf("web search: unknown Backend %q; known backends are %s", cfg.Backend, searchBackendNamesSentence)
	}
}

func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q must be an absolute http or https URL", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// searchClient is the HTTP side shared by the built-in backends.
type searchClient struct {
	http     *http.Client
	maxBytes int64
	// secret is the API key, removed from the body of an error response
	// before it is cut to a snippet (redacting after the cut would miss a
	// key that straddles it).
	secret string
}

func newSearchClient(cfg SearchConfig) *searchClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &searchClient{http: &http.Client{Transport: tr, CheckRedirect: checkSearchRedirect}, maxBytes: cfg.MaxResponseBytes, secret: cfg.APIKey}
}

// secretHeaders are the request headers that carry a backend's API key.
var secretHeaders = []string{"X-Subscription-Token"}

// checkSearchRedirect follows up to 10 redirects, as net/http does, but
// drops the API key headers on a redirect to another origin (scheme, host
// and port): net/http drops only Authorization and cookies.
func checkSearchRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
		for _, h := range secretHeaders {
			req.Header.Del(h)
		}
	}
	return nil
}

// get sends req and returns the body of a 2xx response; any other status
// is an error quoting the start of the body.
func (c *searchClient) get(req *http.Request) ([]byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, cut, err := readLimited(resp.Body, c.maxBytes)
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if c.secret != "" {
			body = bytes.ReplaceAll(body, []byte(c.secret), []byte("[redacted]"))
		}
		return nil, &statusError{code: resp.StatusCode, snippet: snippet(body, backendErrorSnippetLength)}
	}
	if cut {
		return nil, fmt.Errorf("response is larger than %d bytes", c.maxBytes)
	}
	return body, nil
}

// statusError is a non-2xx answer from a backend.
type statusError struct {
	code    int
	snippet string
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.snippet) }

// searcher is the state of one web_search tool.
type searcher struct {
	backend Backend
	name    string
	timeout time.Duration
	secret  string
	log     *slog.Logger
}

func (s *searcher) search(ctx context.Context, in SearchInput) (tools.Result, error) {
	if len(in.Query) > MaxQueryLength {
		return tools.Result{}, tools.InvalidArgs("the query is %d bytes; the limit is %d", len(in.Query), MaxQueryLength)
	}
	query := strings.TrimSpace(in.Query)
	if query == "" {
		return tools.Result{}, tools.InvalidArgs("query is empty; give the words to search for")
	}
	count := in.Count
	if count <= 0 {
		count = DefaultSearchCount
	}
	count = min(count, MaxSearchCount)

	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, errSearchTimeout)
	defer cancel()
	results, err := s.backend.Search(ctx, query, count)
	if err != nil {
		msg := err.Error()
		if context.Cause(ctx) == errSearchTimeout {
			msg = fmt.Sprintf("timed out: no answer within %s", s.timeout)
		}
		msg = schema.Clip(s.redact(msg), 4*maxQuoted)
		s.log.DebugContext(ctx, "web_search failed", "backend", s.name, "error", msg)
		return tools.Result{}, tools.Failed("search %s: %s", s.name, msg)
	}
	if len(results) > count {
		results = results[:count]
	}
	s.log.DebugContext(ctx, "web_search", "backend", s.name, "count", count, "results", len(results))

	out := SearchOutput{Query: query, Results: make([]SearchResult, 0, len(results))}
	var b strings.Builder
	for i, r := range results {
		r.Title = oneLine(r.Title)
		r.Snippet = oneLine(r.Snippet)
		out.Results = append(out.Results, r)
		if i > 0 {
			b.WriteString("\n")
		}
		title := r.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, title, r.URL)
		if r.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", r.Snippet)
		}
	}
	if len(results) == 0 {
		fmt.Fprintf(&b, "No results for %q.", query)
	}
	return tools.Result{Text: strings.TrimRight(b.String(), "\n"), Structured: out}, nil
}

var errSearchTimeout = errors.New("search timed out")

// redact removes the API key from msg, should a backend or transport have
// echoed it.
func (s *searcher) redact(msg string) string {
	if s.secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, s.secret, "[redacted]")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
