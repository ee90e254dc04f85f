package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-tools/mcp-tools/internal/httpheader"
	"github.com/mcp-tools/mcp-tools/tools"
)

// Defaults for HTTPConfig's zero values.
const (
	DefaultMaxResponseBytes = 5 << 20
	DefaultMaxRedirects     = 5
)

// HTTPConfig declares an HTTP endpoint tool.
type HTTPConfig struct {
	Common `yaml:",inline"`
	// URL is the endpoint, http or https. Required.
	URL string `yaml:"url" json:"url"`
	// Method is GET, POST (the default), PUT, PATCH or DELETE.
	Method string `yaml:"method" json:"method,omitempty"`
	// Headers are sent with every request. A value may name environment
	// variables as ${NAME}; they are read once, when the tool is made, and
	// an unset one is an error, and so is a name or value net/http would
	// refuse (a line break in a value). They are not sent on after a
	// redirect to another origin (scheme, host or port), nor on any later
	// hop.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// MaxResponseBytes caps the response body. Zero:
	// DefaultMaxResponseBytes (5 MiB).
	MaxResponseBytes int64 `yaml:"max_response_bytes" json:"max_response_bytes,omitempty"`
	// MaxRedirects is how many redirects are followed, never to another
	// scheme. Zero: DefaultMaxRedirects; negative: none.
	MaxRedirects int `yaml:"max_redirects" json:"max_redirects,omitempty"`
	// LookupEnv reads ${NAME} references. Nil: os.LookupEnv.
	LookupEnv func(string) (string, bool) `yaml:"-" json:"-"`
	// Observer is told the status of every response. Nil: nobody.
	Observer Observer `yaml:"-" json:"-"`
}

// HTTP is an HTTP endpoint tool.
//
//   - GET (and DELETE): the input goes in the query as input=<input>,
//     after the URL's own query, which is kept as written; with an input
//     schema, each top-level argument is a query parameter (objects and
//     arrays as JSON text).
//     The URL's own parameters win: an argument of the same name is
//     dropped, so a model cannot replace a configured key or filter. A
//     URL of a tool without an input schema must not have "input".
//   - POST, PUT, PATCH: the input is the body, sent as application/json
//     when it is valid JSON and text/plain; charset=UTF-8 otherwise; with an
//     input schema, the arguments object is the JSON body.
//   - The response body is the text result; with an output schema, a JSON
//     response is also the structured result. 4xx and 5xx are failures
//     "HTTP 503: <body snippet>" with the status as the code.
//   - When the call is traced, the request is a CLIENT span of its own, and
//     carries its trace context in the traceparent and tracestate headers
//     (W3C Trace Context), which replace configured ones of those names.
//     A client's trace context is passed on even when this server records
//     no span.
type HTTP struct {
	cfg  HTTPConfig
	info tools.Info
	base *url.URL
	// configured holds the names of the URL's own query parameters.
	configured map[string]bool
	headers    http.Header
	client     *http.Client
}

var _ tools.Tool = (*HTTP)(nil)

// NewHTTP checks cfg, reads the header variables, and returns the tool.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote: tool %q: %q is not an http or https URL", cfg.Name, cfg.URL)
	}
	cfg.Method = strings.ToUpper(cfg.Method)
	switch cfg.Method {
	case "":
		cfg.Method = http.MethodPost
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil, fmt.Errorf("remote: tool %q: method %q: use GET, POST, PUT, PATCH or DELETE", cfg.Name, cfg.Method)
	}
	if cfg.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("remote: tool %q: max_response_bytes must not be negative", cfg.Name)
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	configured := queryKeys(u.RawQuery)
	if (cfg.Method == http.MethodGet || cfg.Method == http.MethodDelete) && len(cfg.InputSchema) == 0 && configured["input"] {
		return nil, fmt.Errorf("remote: tool %q: the URL has an \"input\" parameter, where the model's input goes", cfg.Name)
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	lookup := cfg.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	h := http.Header{}
	for k, v := range cfg.Headers {
		v, missing := expand(v, lookup)
		if len(missing) > 0 {
			return nil, fmt.Errorf("remote: tool %q: header %s needs environment variable %s, which is not set", cfg.Name, k, strings.Join(missing, ", "))
		}
		// net/http would refuse such a header on every request; say so
		// now, without quoting the value (it may be a key).
		if !httpheader.ValidName(k) {
			return nil, fmt.Errorf("remote: tool %q: header %q: not a valid header name", cfg.Name, k)
		}
		if !httpheader.ValidValue(v) {
			return nil, fmt.Errorf("remote: tool %q: header %q: its value holds a control character (a line break read from the environment?)", cfg.Name, k)
		}
		h.Set(k, v)
	}
	t := &HTTP{cfg: cfg, info: cfg.info(), base: u, configured: configured, headers: h}
	maxRedirects := cfg.MaxRedirects
	t.client = &http.Client{
		Transport: http.DefaultTransport.(*http.Transport).Clone(),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if maxRedirects < 0 || len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", max(maxRedirects, 0))
			}
			if req.URL.Scheme != via[0].URL.Scheme {
				return fmt.Errorf("a redirect from %s to %s is not followed", via[0].URL.Scheme, req.URL.Scheme)
			}
			// net/http copies every header to each hop (it drops only
			// Authorization and cookies, and only for other domains):
			// the configured ones, which may be keys, stay with the
			// configured origin.
			for _, r := range append(via[1:], req) {
				if origin(r.URL) != origin(via[0].URL) {
					for k := range h {
						req.Header.Del(k)
					}
					break
				}
			}
			return nil
		},
	}
	return t, nil
}

// Info returns the descriptor.
func (t *HTTP) Info() tools.Info { return t.info }

// Call makes one request.
func (t *HTTP) Call(ctx context.Context, args json.RawMessage) (_ tools.Result, err error) {
	name := t.cfg.Name
	input, arguments, err := t.cfg.input(args)
	if err != nil {
		return tools.Result{}, err
	}
	var span trace.Span
	if trace.SpanFromContext(ctx).IsRecording() {
		ctx, span = startSpan(ctx, t.cfg.Method, trace.SpanKindClient, keyToolName.String(name), keyMethod.String(t.cfg.Method),
			keyServer.String(t.base.Hostname()), keyURL.String(t.base.Scheme+"://"+t.base.Host+t.base.Path))
		defer func() { endSpan(span, err) }()
	}

	u := *t.base
	var body io.Reader
	contentType := ""
	switch t.cfg.Method {
	case http.MethodGet, http.MethodDelete:
		// The URL's own query goes out as written (url.Values would drop
		// a pair holding a semicolon, and reorder and re-escape the rest);
		// the call's parameters follow it.
		q := url.Values{}
		if arguments != nil {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(arguments, &m)
			for k, v := range m {
				if t.configured[k] {
					t.cfg.Logger.DebugContext(ctx, "http tool argument dropped: the URL sets it", "tool", name, "param", k)
					continue
				}
				var s string
				if json.Unmarshal(v, &s) != nil {
					s = string(v)
				}
				q.Set(k, s)
			}
		} else {
			q.Set("input", input)
		}
		if add := q.Encode(); add != "" {
			if u.RawQuery != "" && !strings.HasSuffix(u.RawQuery, "&") {
				add = "&" + add
			}
			u.RawQuery += add
		}
	default:
		b := []byte(input)
		if arguments != nil {
			b = arguments
		}
		body = bytes.NewReader(b)
		contentType = "text/plain; charset=UTF-8"
		if json.Valid(b) {
			contentType = "application/json"
		}
	}
	req, err := http.NewRequestWithContext(ctx, t.cfg.Method, u.String(), body)
	if err != nil {
		return tools.Result{}, tools.Failed("tool %q: %v", name, err)
	}
	req.Header = t.headers.Clone()
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	injectHeaders(ctx, propagation.HeaderCarrier(req.Header))
	// Never log the query or header values: they may carry secrets.
	t.cfg.Logger.DebugContext(ctx, "http tool request", "tool", name, "method", t.cfg.Method, "url", t.base.Scheme+"://"+t.base.Host+t.base.Path, "headers", headerNames(req.Header))
	resp, err := t.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ended(name, ctx)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return tools.Result{}, tools.Failed("tool %q: request failed: %v", name, err)
	}
	defer resp.Body.Close()
	if span != nil {
		span.SetAttributes(keyStatus.Int(resp.StatusCode))
	}
	if t.cfg.Observer != nil {
		t.cfg.Observer.Responded(name, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, t.cfg.MaxResponseBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ended(name, ctx)
		}
		return tools.Result{}, tools.Failed("tool %q: reading the response: %v", name, err)
	}
	if resp.StatusCode >= 400 {
		// The status says more than the size of an error page would.
		return tools.Result{}, (&tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, snippet(bytes.TrimSpace(data), 200))}).WithCode(resp.StatusCode)
	}
	if int64(len(data)) > t.cfg.MaxResponseBytes {
		return tools.Result{}, tools.Failed("tool %q: the response exceeds the %s limit (max_response_bytes)", name, size(t.cfg.MaxResponseBytes))
	}
	res := tools.Result{Text: string(data)}
	if len(t.cfg.OutputSchema) > 0 {
		var obj map[string]any
		if json.Unmarshal(data, &obj) == nil && obj != nil {
			res.Structured = obj
		}
	}
	return res, nil
}

// queryKeys lists the parameter names of a raw query, as any endpoint may
// read it: pairs split at "&" and at ";" (which url.ParseQuery refuses,
// dropping the pair), names unescaped where they can be.
func queryKeys(raw string) map[string]bool {
	keys := map[string]bool{}
	for _, pair := range strings.FieldsFunc(raw, func(r rune) bool { return r == '&' || r == ';' }) {
		k, _, _ := strings.Cut(pair, "=")
		if un, err := url.QueryUnescape(k); err == nil {
			k = un
		}
		keys[k] = true
	}
	return keys
}

func headerNames(h http.Header) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	return names
}

// origin is a URL's scheme, host and port (the scheme's default when
// unsaid), as browsers compare them.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
