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
		// BestSpeed: a small compressor (the default level's keeps some
		// 800 KB of tables), for a text that compresses well anyway.
		w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
		return w
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
// identity as promhttp's negotiation does: the encoding of the highest q
// that names it (or *), identity first on a tie; gzip only with q > 0.
func acceptsGzip(values []string) bool {
	best, bestQ := "identity", -1.0
	specs := parseAccept(values)
	for _, offer := range [...]string{"identity", "gzip"} {
		for _, s := range specs {
			if s.q > bestQ && (s.value == "*" || s.value == offer) {
				best, bestQ = offer, s.q
			}
		}
	}
	return best == "gzip" && bestQ != 0
}

// acceptSpec is one entry of an Accept-Encoding header.
type acceptSpec struct {
	value string
	q     float64
}

// parseAccept parses Accept-style header values as promhttp's copy of
// gddo's httputil/header does: it stops reading a value at the first
// entry it cannot parse.
func parseAccept(values []string) []acceptSpec {
	var specs []acceptSpec
next:
	for _, s := range values {
		for {
			var spec acceptSpec
			spec.value, s = token(s)
			if spec.value == "" {
				continue next
			}
			spec.q = 1
			s = strings.TrimLeft(s, " \t\r\n")
			if strings.HasPrefix(s, ";") {
				s = strings.TrimLeft(s[1:], " \t\r\n")
				if !strings.HasPrefix(s, "q=") {
					continue next
				}
				spec.q, s = quality(s[2:])
				if spec.q < 0 {
					continue next
				}
			}
			specs = append(specs, spec)
			s = strings.TrimLeft(s, " \t\r\n")
			if !strings.HasPrefix(s, ",") {
				continue next
			}
			s = strings.TrimLeft(s[1:], " \t\r\n")
		}
	}
	return specs
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
