package prom

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync"
)

// ContentType is the Content-Type of the text format as promhttp sends it
// (client_golang v1.25, default options).
const ContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// Names of the family the handler counts its errors in, as promhttp's.
const (
	handlerErrorsName = "promhttp_metric_handler_errors_total"
	handlerErrorsHelp = "Total number of internal errors encountered by the promhttp metric handler."
)

// NewHandlerErrors returns the family promhttp keeps in the registry it is
// given, promhttp_metric_handler_errors_total{cause}, with both of its
// series (cause "encoding" and "gathering") at zero. Pass it to Handler to
// count the responses that could not be written.
func NewHandlerErrors() *CounterVec {
	c := NewCounterVec(handlerErrorsName, handlerErrorsHelp, "cause")
	c.With("encoding")
	c.With("gathering")
	return c
}

// Handler returns a handler that serves r in the text format to GET and
// HEAD (other methods get 405), gzipped when the request's
// Accept-Encoding prefers gzip as promhttp reads it. A response that
// cannot be written is cut short and counted in errs (made by
// NewHandlerErrors; nil: not counted).
func Handler(r *Registry, errs *CounterVec) http.Handler {
	h := &handler{r: r}
	if errs != nil {
		h.failed = errs.With("encoding")
	}
	h.gzip.New = func() any {
		// The default level, as promhttp's: its compressor is the smaller
		// (some 0.8 MB; BestSpeed's is 1.2 MB), and the bytes are promhttp's.
		return gzip.NewWriter(io.Discard)
	}
	return h
}

type handler struct {
	r      *Registry
	failed *Counter  // nil: not counted
	gzip   sync.Pool // of *gzip.Writer
}

func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hdr := w.Header()
	hdr.Add("Vary", "Accept")
	hdr.Add("Vary", "Accept-Encoding")
	hdr.Set("Content-Type", ContentType)
	gz := acceptsGzip(req.Header["Accept-Encoding"])
	if gz {
		hdr.Set("Content-Encoding", "gzip")
	}
	if req.Method == http.MethodHead {
		return
	}
	text := h.r.AppendText(nil)
	var err error
	if gz {
		zw := h.gzip.Get().(*gzip.Writer)
		zw.Reset(w)
		if _, err = zw.Write(text); err == nil {
			err = zw.Close()
		}
		zw.Reset(io.Discard) // drop the response writer
		h.gzip.Put(zw)
	} else {
		_, err = w.Write(text)
	}
	if err != nil && h.failed != nil {
		h.failed.Inc()
	}
}

// acceptsGzip reports whether Accept-Encoding values pick gzip over
// identity as promhttp's negotiation does (gddo's NegotiateContentEncoding
// offered identity, then gzip): the encoding of the highest q that names
// it (or *), identity first on a tie; gzip only with q > 0. It keeps the
// two highest q values, not the entries: a header of a megabyte (anyone
// who reaches /metrics chooses it) costs no allocation.
func acceptsGzip(values []string) bool {
	identity, gzip := -1.0, -1.0 // highest q of an entry naming each
	for _, s := range values {
		for s != "" {
			var value string
			var q float64
			if value, q, s = nextAccept(s); q < 0 {
				break // the rest of this value is not read, as in gddo
			}
			// q > max, not max(): a q that overflowed to NaN never wins.
			if (value == "identity" || value == "*") && q > identity {
				identity = q
			}
			if (value == "gzip" || value == "*") && q > gzip {
				gzip = q
			}
		}
	}
	return gzip > identity && gzip != 0
}

// nextAccept reads the first entry of an Accept-style header value as
// promhttp's copy of gddo's httputil/header does: a token (slashes
// allowed), then optionally ";q=" and a quality. It returns the entry's
// value, its q, and what follows its comma ("" when no comma follows:
// the value ends there). q is -1 when the entry cannot be read (no token,
// a parameter other than q, a bad quality): gddo drops it and reads no
// further in the value.
func nextAccept(s string) (value string, q float64, rest string) {
	value, s = token(s)
	if value == "" {
		return "", -1, ""
	}
	q = 1
	s = strings.TrimLeft(s, " \t\r\n")
	if strings.HasPrefix(s, ";") {
		s = strings.TrimLeft(s[1:], " \t\r\n")
		if !strings.HasPrefix(s, "q=") {
			return "", -1, ""
		}
		if q, s = quality(s[2:]); q < 0 {
			return "", -1, ""
		}
	}
	s = strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(s, ",") {
		return value, q, "" // the last entry: counted, and the value ends
	}
	return value, q, strings.TrimLeft(s[1:], " \t\r\n")
}

// token splits s after its leading run of token characters and slashes.
func token(s string) (tok, rest string) {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c != '/' && (c <= 31 || c >= 127 || strings.IndexByte(" \t\"(),/:;<=>?@[]\\{}", c) >= 0) {
			break
		}
	}
	return s[:i], s[i:]
}

// quality parses a q value: 0 or 1, then optionally a dot and digits; -1
// when it starts otherwise.
func quality(s string) (q float64, rest string) {
	switch {
	case s == "":
		return -1, ""
	case s[0] == '0':
		q = 0
	case s[0] == '1':
		q = 1
	default:
		return -1, ""
	}
	s = s[1:]
	if !strings.HasPrefix(s, ".") {
		return q, s
	}
	s = s[1:]
	i, n, d := 0, 0, 1
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
		d *= 10
	}
	return q + float64(n)/float64(d), s[i:]
}
