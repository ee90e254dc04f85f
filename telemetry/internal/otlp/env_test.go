package otlp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      map[string]string
		protocol string
		url      string
		headers  map[string]string
		timeout  time.Duration
		gzip     bool
		err      string
	}{
		{name: "generic endpoint gets the signal's path",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
			protocol: HTTPProtobuf, url: "http://collector:4318/v1/traces", timeout: DefaultTimeout},
		{name: "generic endpoint with a path and a slash",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector/otlp/"},
			protocol: HTTPProtobuf, url: "https://collector/otlp/v1/traces", timeout: DefaultTimeout},
		{name: "the signal's own endpoint is used as it is, and wins",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:9999/custom"},
			protocol: HTTPProtobuf, url: "http://b:9999/custom", timeout: DefaultTimeout},
		{name: "grpc takes host:port, secure by default",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			protocol: GRPC, url: "https://collector:4317", timeout: DefaultTimeout},
		{name: "grpc host:port insecure",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_INSECURE": "true"},
			protocol: GRPC, url: "http://collector:4317", timeout: DefaultTimeout},
		{name: "grpc drops a path",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317/x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			protocol: GRPC, url: "http://collector:4317", timeout: DefaultTimeout},
		{name: "per-signal insecure wins",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
				"OTEL_EXPORTER_OTLP_INSECURE": "false", "OTEL_EXPORTER_OTLP_TRACES_INSECURE": "true"},
			protocol: GRPC, url: "http://collector:4317", timeout: DefaultTimeout},
		{name: "repeated slashes before the path",
			env:      map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c//"},
			protocol: HTTPProtobuf, url: "http://c/v1/traces", timeout: DefaultTimeout},
		{name: "headers, percent-decoded, timeout, gzip",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%20b%3D, x = %20y%20 ,",
				"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"},
			protocol: HTTPProtobuf, url: "http://c/v1/traces", headers: map[string]string{"api-key": "a b=", "x": "y"}, timeout: 2500 * time.Millisecond, gzip: true},
		{name: "no endpoint", env: map[string]string{}, err: "no OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "bad protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			err: `protocol "http/json" is not supported`},
		{name: "http needs a URL", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
			err: "OTEL_EXPORTER_OTLP_ENDPOINT: "},
		{name: "bad header", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "novalue"},
			err: `OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 1 is not key=value`},
		{name: "bad header name", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "a=b,bad key=v"},
			err: `entry 2: the key is not a valid header name`},
		{name: "header value with a newline", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "k=a%0Ab"},
			err: `header "k": the value holds characters a header cannot carry`},
		{name: "bad header encoding", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "k=%zz"},
			err: `header "k": the value is not percent-encoded correctly`},
		{name: "bad timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
			err: `OTEL_EXPORTER_OTLP_TIMEOUT: "10s" is not a number of milliseconds from 1 to 86400000`},
		{name: "timeout past a day", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "10000000000000"},
			err: `is not a number of milliseconds from 1 to 86400000`},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
			err: `"zstd" is not supported`},
		{name: "missing certificate", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c", "OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(dir, "none.pem")},
			err: "OTEL_EXPORTER_OTLP_CERTIFICATE: "},
		{name: "certificate that is not PEM", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": notPEM},
			err: "holds no PEM certificate"},
		{name: "client certificate without its key", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": notPEM},
			err: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := FromEnv(func(k string) string { return tt.env[k] }, "TRACES", "/v1/traces")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Protocol != tt.protocol || s.URL.String() != tt.url || s.Timeout != tt.timeout || s.Gzip != tt.gzip {
				t.Errorf("got %s %s %v gzip=%v, want %s %s %v gzip=%v", s.Protocol, s.URL, s.Timeout, s.Gzip, tt.protocol, tt.url, tt.timeout, tt.gzip)
			}
			if len(s.Headers) != len(tt.headers) {
				t.Errorf("headers: got %v, want %v", s.Headers, tt.headers)
			}
			for k, v := range tt.headers {
				if s.Headers[k] != v {
					t.Errorf("header %s: got %q, want %q", k, s.Headers[k], v)
				}
			}
		})
	}
}

// TestFromEnvHidesSecrets: no error repeats a header value or a URL's
// password, however the variable is mistyped.
func TestFromEnvHidesSecrets(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "Authorization: Bearer s3cret"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=abc,s3cret"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s3cret%zz"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s3%0Acret"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "s3cret key=v"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:s3cret@collector:4318/a%zz"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "user:s3cret@collector:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://user:s3cret@collector"},
	} {
		_, err := FromEnv(func(k string) string { return env[k] }, "TRACES", "/v1/traces")
		if err == nil {
			t.Errorf("%v: no error", env)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
}
