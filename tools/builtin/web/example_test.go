package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcp-tools/mcp-tools/tools/builtin/web"
)

func ExampleNewFetch() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Notes</title></head><body><h2>Today</h2><p>Water the <em>plants</em>.</p></body></html>")
	}))
	defer srv.Close()

	// The test server is on 127.0.0.1, which the guard refuses unless the
	// private network is allowed.
	fetch := web.NewFetch(web.FetchConfig{AllowPrivateNetwork: true})
	args, _ := json.Marshal(map[string]any{"url": srv.URL})
	res, err := fetch.Call(context.Background(), args)
	if err != nil {
		fmt.Println(err)
		return
	}
	out := res.Structured.(web.FetchOutput)
	fmt.Println(out.Status, out.ContentType, out.Title, out.Length)
	fmt.Println(res.Text[len("URL: "+srv.URL):])
	// Output:
	// 200 text/html Notes 29
	//
	// Title: Notes
	//
	// ## Today
	//
	// Water the *plants*.
}

// results is a Backend that always finds the same page.
type results struct{}

func (results) Search(_ context.Context, query string, count int) ([]web.SearchResult, error) {
	return []web.SearchResult{{Title: "Go", URL: "https://go.dev/", Snippet: "The Go language: " + query}}, nil
}

func ExampleNewSearch() {
	search, err := web.NewSearch(web.SearchConfig{Custom: results{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := search.Call(context.Background(), json.RawMessage(`{"query": "generics", "count": 3}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// 1. Go
	//    https://go.dev/
	//    The Go language: generics
}
