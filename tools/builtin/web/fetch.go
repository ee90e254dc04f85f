package web

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/internal/lazyre"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/schema"
	"github.com/mcp-tools/mcp-tools/typed"
)

// Defaults of FetchConfig.
const (
	DefaultFetchTimeout   = 30 * time.Second
	DefaultMaxBodyBytes   = 5 << 20
	DefaultMaxLength      = 20000
	DefaultMaxLengthLimit = 100000
	DefaultMaxRedirects   = 5
	DefaultVersion        = "dev"
)

// MaxURLLength is the longest url web_fetch accepts, in bytes; its input
// schema publishes it as the url's maxLength, so the validator refuses a
// longer one before the tool runs, and the tool checks it again.
const MaxURLLength = 2048

// maxQuoted is the most bytes of a model's input that an error message
// quotes; schema.Quote cuts to the same.
const maxQuoted = schema.MaxQuoted

const (
	errorSnippetLen         = 300
	userAgentFormat         = "mcp-tools/%s (+MCP web_fetch)"
	fetchToolName           = "web_fetch"
	fetchToolDescription    = "Fetch a web page or document over http or https and return its content as readable text: HTML is converted to Markdown, plain text and JSON are returned as they are. Other content types (images, PDFs, archives) are refused. Only public internet addresses can be fetched. Long content is cut at max_length characters."
	truncatedMarkerTemplate = "\n\n[truncated at %d of %d characters; there is no offset parameter, so call again with a larger max_length (at most %d) to read more]"
)

// FetchConfig configures web_fetch. Its zero value is ready to use: public
// addresses only, with the defaults given on each field.
type FetchConfig struct {
	// Timeout bounds a whole fetch: connecting, redirects, and reading the
	// body. Zero means DefaultFetchTimeout (30s).
	Timeout time.Duration
	// MaxBodyBytes is the most body bytes read from the server (after
	// transfer decompression, so a compressed bomb stops here too). A longer
	// body is cut at this size and the result says so; it is not an error.
	// It also bounds the conversion of HTML to Markdown: an HTML page whose
	// conversion would write more than four bytes of Markdown per byte of
	// this limit (deeply nested lists or quotes) is cut short, and the
	// result says so. Zero means DefaultMaxBodyBytes (5 MiB).
	MaxBodyBytes int64
	// DefaultMaxLength is the number of characters of converted content
	// returned when the call gives no max_length. Zero means
	// DefaultMaxLength (20000).
	DefaultMaxLength int
	// MaxLengthLimit is the hard cap on max_length: a larger max_length is
	// lowered to it. Zero means DefaultMaxLengthLimit (100000); it is never
	// below DefaultMaxLength.
	MaxLengthLimit int
	// MaxRedirects is the number of redirects followed before the fetch
	// fails. Zero means DefaultMaxRedirects (5); a negative value follows
	// none.
	MaxRedirects int
	// Version goes into the default User-Agent. Empty means DefaultVersion
	// ("dev").
	Version string
	// UserAgent is sent with every request. Empty means
	// "mcp-tools/<Version> (+MCP web_fetch)".
	UserAgent string
	// AllowPrivateNetwork lets the tool reach loopback, private, link-local
	// and other internal addresses, for intranet use. False (the default)
	// refuses them, at connect time and on every redirect. Unusual numeric
	// spellings of IP addresses, and the cloud metadata services'
	// addresses (169.254.169.254, fd00:ec2::254, 168.63.129.16,
	// 100.100.100.200 and the like), are refused either way.
	AllowPrivateNetwork bool
	// Logger receives one debug record per fetch. Nil discards.
	Logger *slog.Logger
}

// FetchInput is the input of web_fetch.
type FetchInput struct {
	// URL is the page to fetch.
	URL string `json:"url" jsonschema:"description=Absolute http or https URL to fetch,minLength=1,maxLength=2048"`
	// MaxLength caps the characters of content returned.
	MaxLength int `json:"max_length,omitempty" jsonschema:"description=Most characters of content to return (default 20000; larger values are capped),minimum=1"`
}

// FetchOutput is the structured content of a web_fetch result.
type FetchOutput struct {
	// URL is the final URL, after redirects.
	URL string `json:"url" jsonschema:"description=Final URL after redirects"`
	// Status is the HTTP status code.
	Status int `json:"status" jsonschema:"description=HTTP status code"`
	// ContentType is the response's media type, without parameters.
	ContentType string `json:"content_type" jsonschema:"description=Media type of the response"`
	// Title is the HTML document's title, if any, cut to 1000 characters
	// (with "…").
	Title string `json:"title,omitempty" jsonschema:"description=Title of the HTML document"`
	// Truncated reports that the returned content was cut at max_length,
	// that the body was larger than the fetcher reads, or that the HTML was
	// too costly to convert whole and its conversion stopped early.
	Truncated bool `json:"truncated" jsonschema:"description=True when the content was cut"`
	// Length is the number of characters of the whole converted content.
	Length int `json:"length" jsonschema:"description=Characters of the whole converted content"`
	// BodyTruncated reports that the body was cut at the fetcher's byte
	// limit before conversion.
	BodyTruncated bool `json:"body_truncated,omitempty" jsonschema:"description=True when the response body was larger than the byte limit and was cut before conversion"`
}

// fetcher is the state of one web_fetch tool. It is safe for concurrent use.
type fetcher struct {
	cfg       FetchConfig
	guard     *guard
	client    *http.Client
	log       *slog.Logger
	userAgent string
}

// NewFetch returns the web_fetch tool. See FetchConfig for its limits and
// the private-network guard.
func NewFetch(cfg FetchConfig) tools.Tool {
	return newFetcher(cfg).tool()
}

func (f *fetcher) tool() tools.Tool {
	t := typed.MustNew(fetchToolName, fetchToolDescription, f.fetch,
		typed.WithAnnotations(tools.Annotations{Title: "Fetch a web page", ReadOnly: true, OpenWorld: true}))
	return withOutputSchema(t, reflect.TypeFor[FetchOutput]())
}

func newFetcher(cfg FetchConfig) *fetcher {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultFetchTimeout
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.DefaultMaxLength <= 0 {
		cfg.DefaultMaxLength = DefaultMaxLength
	}
	if cfg.MaxLengthLimit <= 0 {
		cfg.MaxLengthLimit = DefaultMaxLengthLimit
	}
	cfg.MaxLengthLimit = max(cfg.MaxLengthLimit, cfg.DefaultMaxLength)
	switch {
	case cfg.MaxRedirects == 0:
		cfg.MaxRedirects = DefaultMaxRedirects
	case cfg.MaxRedirects < 0:
		cfg.MaxRedirects = 0
	}
	if cfg.Version == "" {
		cfg.Version = DefaultVersion
	}
	f := &fetcher{cfg: cfg, log: cfg.Logger, userAgent: cfg.UserAgent}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.userAgent == "" {
		f.userAgent = fmt.Sprintf(userAgentFormat, cfg.Version)
	}
	f.guard = &guard{allowIP: publicOnly}
	if cfg.AllowPrivateNetwork {
		f.guard.allowIP = privateNetwork
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second, Control: f.guard.control}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would make the guard check the proxy, not the target
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	f.client = &http.Client{Transport: transport, CheckRedirect: f.checkRedirect}
	return f
}

// redirectLimitError reports a chain of redirects longer than the limit,
// or (long > 0) a redirect to a URL longer than MaxURLLength.
type redirectLimitError struct{ max, long int }

func (e *redirectLimitError) Error() string {
	if e.long > 0 {
		return fmt.Sprintf("the redirect target is %d bytes long; the limit is %d (as for the url argument); not followed", e.long, MaxURLLength)
	}
	return fmt.Sprintf("stopped after %d redirects (the most followed); the URL may be a redirect loop", e.max)
}

func (f *fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.cfg.MaxRedirects {
		return &redirectLimitError{max: f.cfg.MaxRedirects}
	}
	if n := len(req.URL.String()); n > MaxURLLength {
		// The final URL is in the result and the log: held to the
		// input's limit.
		return &redirectLimitError{long: n}
	}
	if err := f.guard.checkURL(req.URL); err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			re.Reason = "redirect target: " + re.Reason
		}
		return err
	}
	req.Header.Set("User-Agent", f.userAgent)
	return nil
}

func (f *fetcher) fetch(ctx context.Context, in FetchInput) (tools.Result, error) {
	if len(in.URL) > MaxURLLength {
		return tools.Result{}, tools.InvalidArgs("the url is %d bytes; the limit is %d", len(in.URL), MaxURLLength)
	}
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || !u.IsAbs() {
		return tools.Result{}, tools.InvalidArgs("url %s is not an absolute URL; give one such as https://example.com/page", schema.Quote(in.URL))
	}
	if err := f.guard.checkURL(u); err != nil {
		return tools.Result{}, tools.InvalidArgs("%s", err.Error())
	}
	maxLen := in.MaxLength
	if maxLen <= 0 {
		maxLen = f.cfg.DefaultMaxLength
	}
	maxLen = min(maxLen, f.cfg.MaxLengthLimit)

	ctx, cancel := context.WithTimeoutCause(ctx, f.cfg.Timeout, errFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tools.Result{}, tools.InvalidArgs("url %s cannot be requested: %s", schema.Quote(in.URL), schema.Clip(err.Error(), 2*maxQuoted))
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,text/*;q=0.8")

	resp, err := f.client.Do(req)
	if err != nil {
		return tools.Result{}, f.failure(ctx, u, err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL.Redacted()

	body, bodyCut, err := readLimited(resp.Body, f.cfg.MaxBodyBytes)
	if err != nil {
		return tools.Result{}, f.failure(ctx, u, err)
	}
	f.log.DebugContext(ctx, "web_fetch", "url", final, "status", resp.StatusCode, "bytes", len(body), "body_truncated", bodyCut)
	if resp.StatusCode >= 400 {
		return tools.Result{}, tools.Failed("HTTP %d: %s", resp.StatusCode, errorSnippet(resp.Header.Get("Content-Type"), body)).WithCode(resp.StatusCode)
	}

	budget := f.cfg.MaxBodyBytes * markdownBudgetPerBodyByte
	if budget/markdownBudgetPerBodyByte != f.cfg.MaxBodyBytes {
		budget = math.MaxInt64 // overflow: no smaller bound than the body's
	}
	doc, err := convert(ctx, resp.Header.Get("Content-Type"), body, resp.Request.URL, budget)
	if err != nil {
		return tools.Result{}, err
	}
	if ctx.Err() != nil { // the conversion stopped early
		return tools.Result{}, f.failure(ctx, u, ctx.Err())
	}
	content, length, cut := truncateRunes(doc.content, maxLen)

	var b strings.Builder
	b.WriteString("URL: " + final)
	if doc.title != "" {
		b.WriteString("\nTitle: " + doc.title)
	}
	b.WriteString("\n\n")
	b.WriteString(content)
	if cut {
		fmt.Fprintf(&b, truncatedMarkerTemplate, maxLen, length, f.cfg.MaxLengthLimit)
	}
	if bodyCut {
		fmt.Fprintf(&b, "\n\n[the response body was larger than %d bytes; only that much was read, so the end of the document is missing]", f.cfg.MaxBodyBytes)
	}
	if doc.cut {
		b.WriteString("\n\n[the page's HTML was too costly to convert whole (deeply nested lists or quotes, or very many links); the conversion stopped early, so the end of the document is missing]")
	}
	return tools.Result{
		Text: b.String(),
		Structured: FetchOutput{
			URL:           final,
			Status:        resp.StatusCode,
			ContentType:   doc.mediaType,
			Title:         doc.title,
			Truncated:     cut || bodyCut || doc.cut,
			Length:        length,
			BodyTruncated: bodyCut,
		},
	}, nil
}

var errFetchTimeout = errors.New("fetch timed out")

// failure turns a transport error into a message the model can act on. It
// quotes at most maxQuoted bytes of the URL, and cuts the cause's own
// words (a DNS error names the host) to a few hundred.
func (f *fetcher) failure(ctx context.Context, u *url.URL, err error) error {
	var refused *RefusedError
	var tooMany *redirectLimitError
	short := shortURL(u.Redacted())
	switch {
	case errors.As(err, &refused):
		if refused.URL == "" {
			refused.URL = u.Redacted()
		}
		return tools.Failed("%s", refused.Error())
	case errors.As(err, &tooMany):
		return tools.Failed("fetch %s: %s", short, tooMany.Error())
	case context.Cause(ctx) == errFetchTimeout:
		return tools.Failed("fetch %s: timed out: no complete response within %s", short, f.cfg.Timeout)
	case ctx.Err() != nil:
		return tools.Failed("fetch %s: %w", short, ctx.Err())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is already in our message
	}
	msg := err.Error()
	if c := schema.Clip(msg, 3*maxQuoted); c != msg {
		return &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fetch %s: %s", short, c), Err: err}
	}
	return tools.Failed("fetch %s: %w", short, err)
}

// shortURL returns a URL for a message: as it is, or cut to maxQuoted
// bytes with "…" and its whole length.
func shortURL(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	return clipHead(s, maxQuoted) + fmt.Sprintf("… (%d bytes in all)", len(s))
}

// clipHead returns the longest prefix of s of at most n bytes that does not
// split a character.
func clipHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// readLimited reads at most limit bytes of r and reports whether there was
// more.
func readLimited(r io.Reader, limit int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > limit {
		return b[:limit], true, nil
	}
	return b, false, nil
}

// truncateRunes returns the first n characters of s, the number of
// characters in s, and whether it cut anything.
func truncateRunes(s string, n int) (string, int, bool) {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s, total, false
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], total, true
}

var scriptRE = lazyre.New(`(?is)<(script|style)\b.*?</(script|style)\s*>`)

// errorSnippet returns the start of an error response's body as one line,
// with HTML markup removed.
func errorSnippet(contentType string, body []byte) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "text/html" || mt == "application/xhtml+xml" {
		text := tagRE().ReplaceAllString(scriptRE().ReplaceAllString(string(body), " "), " ")
		body = []byte(html.UnescapeString(text))
	}
	return snippet(body, errorSnippetLen)
}

// snippet returns the start of body as one line of at most n characters,
// for error messages.
func snippet(body []byte, n int) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "\uFFFD")), " ")
	if s == "" {
		return "(empty body)"
	}
	if out, _, cut := truncateRunes(s, n); cut {
		return out + "..."
	}
	return s
}

// withOutputSchema publishes the schema of out as t's OutputSchema. The
// tool's results must carry a value of that type as Structured.
func withOutputSchema(t tools.Tool, out reflect.Type) tools.Tool {
	info := t.Info()
	schema, err := typed.Schema(out, false)
	if err != nil {
		panic(fmt.Sprintf("web: output schema of %s: %v", info.Name, err))
	}
	info.OutputSchema = schema
	return tools.New(info, t.Call)
}
