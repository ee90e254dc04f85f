// Package otlp exports traces and metrics over OTLP, as http/protobuf or
// grpc, with the standard library's HTTP client.
//
// It exists because OpenTelemetry's own OTLP exporters import gRPC even
// for http/protobuf: gRPC alone made the server binary 5 MB larger and its
// idle memory 2.5 MiB higher for every user, exporting or not, and through
// golang.org/x/net/trace it linked html/template's executor, whose method
// lookup by name stops the linker from dropping unused methods (see
// cmd/mcp-tools's TestLinkerDropsUnusedMethods). The requests are
// written here too, with protowire, straight from the SDK's spans and
// metrics (encode*.go), field for field as OpenTelemetry's exporters
// write them (tests compare the bytes): the generated types of
// go.opentelemetry.io/proto/otlp, the protobuf runtime under them and
// the otlptrace exporter cost the idle process about 1.3 MiB and the
// binary about 3 MB (measured by stubbing them out; the runtime leaves
// the binary only when nothing else imports it). Answers (partial
// successes, gRPC statuses and their RetryInfo) are read with protowire
// as well (wire.go).
package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-tools/mcp-tools/internal/httpheader"
)

// DefaultTimeout bounds one export, its retries included, unless
// OTEL_EXPORTER_OTLP_TIMEOUT says otherwise.
const DefaultTimeout = 10 * time.Second

// maxTimeout is the longest OTEL_EXPORTER_OTLP_TIMEOUT taken: a day.
const maxTimeout = 24 * time.Hour

// Protocol names, as OTEL_EXPORTER_OTLP_PROTOCOL spells them.
const (
	HTTPProtobuf = "http/protobuf"
	GRPC         = "grpc"
)

// Settings are one signal's exporter settings.
type Settings struct {
	// Protocol is HTTPProtobuf or GRPC.
	Protocol string
	// URL is where exports go: the full URL of the signal's path for
	// http/protobuf; scheme and host for gRPC (the method's path is
	// added).
	URL *url.URL
	// Headers are sent with every export.
	Headers map[string]string
	// Timeout bounds one export with its retries.
	Timeout time.Duration
	// Gzip compresses each export.
	Gzip bool
	// TLS is the client's TLS configuration for https (nil: the
	// system's roots).
	TLS *tls.Config
}

// FromEnv reads the settings of signal ("TRACES" or "METRICS") from the
// standard OTEL_EXPORTER_OTLP_* variables, the signal's own variable
// first, as the OpenTelemetry specification says. path is the signal's
// http/protobuf path ("/v1/traces"), added to a generic endpoint only.
// An unset endpoint is an error: the caller exports only when one is set.
func FromEnv(getenv func(string) string, signal, path string) (Settings, error) {
	get := func(name string) (string, string) {
		own := "OTEL_EXPORTER_OTLP_" + signal + "_" + name
		if v := strings.TrimSpace(getenv(own)); v != "" {
			return v, own
		}
		generic := "OTEL_EXPORTER_OTLP_" + name
		return strings.TrimSpace(getenv(generic)), generic
	}
	var s Settings
	s.Protocol, _ = get("PROTOCOL")
	if s.Protocol == "" {
		s.Protocol = HTTPProtobuf
	}
	if s.Protocol != HTTPProtobuf && s.Protocol != GRPC {
		return s, fmt.Errorf("protocol %q is not supported: use grpc or http/protobuf", s.Protocol)
	}

	endpoint, name := get("ENDPOINT")
	if endpoint == "" {
		return s, fmt.Errorf("no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_%s_ENDPOINT", signal)
	}
	insecure, _ := get("INSECURE")
	u, err := endpointURL(endpoint, s.Protocol, strings.EqualFold(insecure, "true"))
	if err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	if s.Protocol == HTTPProtobuf && name == "OTEL_EXPORTER_OTLP_ENDPOINT" {
		u.Path, u.RawPath = strings.TrimRight(u.Path, "/")+path, ""
	}
	s.URL = u

	if v, name := get("HEADERS"); v != "" {
		if s.Headers, err = parseHeaders(v); err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
	}
	s.Timeout = DefaultTimeout
	if v, name := get("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 || ms > maxTimeout.Milliseconds() {
			return s, fmt.Errorf("%s: %q is not a number of milliseconds from 1 to %d", name, v, maxTimeout.Milliseconds())
		}
		s.Timeout = time.Duration(ms) * time.Millisecond
	}
	switch v, name := get("COMPRESSION"); strings.ToLower(v) {
	case "", "none":
	case "gzip":
		s.Gzip = true
	default:
		return s, fmt.Errorf("%s: %q is not supported: use gzip or none", name, v)
	}
	if s.TLS, err = tlsFromEnv(get); err != nil {
		return s, err
	}
	return s, nil
}

// endpointURL parses an endpoint. http/protobuf needs an http or https
// URL; gRPC also takes host:port, secure unless insecure says otherwise.
func endpointURL(endpoint, protocol string, insecure bool) (*url.URL, error) {
	if protocol == GRPC && !strings.Contains(endpoint, "://") {
		scheme := "https"
		if insecure {
			scheme = "http"
		}
		endpoint = scheme + "://" + endpoint
	}
	// Neither the value nor url.Parse's error (which quotes it) is shown:
	// a URL may carry a password.
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, errors.New("not a valid http or https URL")
	}
	if protocol == GRPC {
		u.Path, u.RawPath = "", "" // gRPC adds the method's path
	}
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// parseHeaders reads "key=value,key2=value2" with percent-encoded values
// (the W3C baggage form the specification names).
func parseHeaders(v string) (map[string]string, error) {
	// An error names an entry by its place, never by its text: a value,
	// or a key run into one, is often a secret.
	h := map[string]string{}
	for i, pair := range strings.Split(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d is not key=value", i+1)
		}
		if !httpheader.ValidName(k) {
			return nil, fmt.Errorf("entry %d: the key is not a valid header name", i+1)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("header %q: the value is not percent-encoded correctly", k)
		}
		dec = strings.TrimSpace(dec)
		if !httpheader.ValidValue(dec) {
			return nil, fmt.Errorf("header %q: the value holds characters a header cannot carry", k)
		}
		h[k] = dec
	}
	return h, nil
}

// tlsFromEnv reads the CERTIFICATE, CLIENT_CERTIFICATE and CLIENT_KEY
// variables; nil when none is set.
func tlsFromEnv(get func(string) (string, string)) (*tls.Config, error) {
	ca, caName := get("CERTIFICATE")
	cert, certName := get("CLIENT_CERTIFICATE")
	key, keyName := get("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caName, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", caName, ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("%s and %s go together", certName, keyName)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certName, keyName, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
