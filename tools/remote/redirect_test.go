package remote_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// keyServer records the X-Api-Key and Authorization each path received;
// /to?u=URL redirects to URL.
type keyServer struct {
	*httptest.Server
	mu   sync.Mutex
	keys map[string]string
}

func newKeyServer(t *testing.T) *keyServer {
	t.Helper()
	s := &keyServer{keys: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.keys[r.URL.Path] = r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Authorization")
		s.mu.Unlock()
		if u := r.URL.Query().Get("u"); u != "" {
			http.Redirect(w, r, u, http.StatusFound)
			return
		}
		io.WriteString(w, "arrived")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *keyServer) key(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[path]
}

func TestHTTPHeadersStayWithTheirOrigin(t *testing.T) {
	a, b := newKeyServer(t), newKeyServer(t) // two ports on 127.0.0.1: two origins
	const sent = "k-123|Bearer t-456"
	tests := []struct {
		name     string
		url      string
		srv      *keyServer
		path     string // where the request ends
		wantKeys string
	}{
		{"same origin keeps them", a.URL + "/to?u=" + a.URL + "/end", a, "/end", sent},
		{"other port drops them", a.URL + "/to?u=" + b.URL + "/end", b, "/end", "|"},
		{"back to the origin after another drops them", a.URL + "/to?u=" + b.URL + "/to%3Fu%3D" + a.URL + "/back", a, "/back", "|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := httpTool(t, remote.HTTPConfig{URL: tt.url, Method: "GET",
				Headers: map[string]string{"X-Api-Key": "k-123", "Authorization": "Bearer t-456"}})
			if r := run(t, h, `{"input":"x"}`); r.Err != nil || r.Text != "arrived" {
				t.Fatalf("got %q %v, want to arrive", r.Text, r.Err)
			}
			if got := tt.srv.key(tt.path); got != tt.wantKeys {
				t.Errorf("got headers %q at the end, want %q", got, tt.wantKeys)
			}
			if got := a.key("/to"); got != sent {
				t.Errorf("got headers %q at the configured URL, want %q", got, sent)
			}
		})
	}
}

func TestHTTPConfiguredQueryWins(t *testing.T) {
	srv, s := recordingServer(t, ok)
	schema := json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"q":{"type":"string"}}}`)
	tests := []struct {
		name, method, args, want string
	}{
		{"GET", "GET", `{"key":"evil","q":"cats"}`, "/s?key=sekrit&q=cats"},
		{"DELETE", "DELETE", `{"key":"evil","q":"cats"}`, "/s?key=sekrit&q=cats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := httpTool(t, remote.HTTPConfig{URL: srv.URL + "/s?key=sekrit", Method: tt.method, Common: remote.Common{InputSchema: schema}})
			if r := run(t, h, tt.args); r.Err != nil {
				t.Fatal(r.Err)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.url != tt.want {
				t.Errorf("got %s, want %s", s.url, tt.want)
			}
		})
	}
	// The URL's own query goes out as written, whatever Go's parser
	// thinks of it: a pair with a semicolon (which url.ParseQuery drops),
	// escapes as the endpoint wants them, its order.
	for _, tt := range []struct {
		name, query, args, want string
		schema                  json.RawMessage
	}{
		{"semicolon kept", "fields=a;b&key=k", `{"input":"x"}`, "/s?fields=a;b&key=k&input=x", nil},
		{"escapes and order kept", "z=1&sig=a%2Fb%20c", `{"input":"x"}`, "/s?z=1&sig=a%2Fb%20c&input=x", nil},
		{"a key of a semicolon pair still wins", "fields=a;b", `{"fields":"evil","q":"cats"}`, "/s?fields=a;b&q=cats", schema},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := httpTool(t, remote.HTTPConfig{URL: srv.URL + "/s?" + tt.query, Method: "GET", Common: remote.Common{InputSchema: tt.schema}})
			if r := run(t, h, tt.args); r.Err != nil {
				t.Fatal(r.Err)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.url != tt.want {
				t.Errorf("got %s, want %s", s.url, tt.want)
			}
		})
	}
	_, err := remote.NewHTTP(remote.HTTPConfig{Common: remote.Common{Name: "x", Description: "d"}, URL: srv.URL + "/s?input=fixed", Method: "GET"})
	if want := `the URL has an "input" parameter`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}
