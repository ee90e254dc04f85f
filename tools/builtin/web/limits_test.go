package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"unicode/utf8"

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
