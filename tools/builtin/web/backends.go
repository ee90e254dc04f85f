package web

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mcp-tools/mcp-tools/internal/lazyre"
)

// searxng queries a SearXNG instance's JSON API. The instance must allow
// the json format (search.formats in its settings.yml).
type searxng struct {
	base   *url.URL
	client *searchClient
}

var _ Backend = (*searxng)(nil)

func (s *searxng) Search(ctx context.Context, query string, count int) ([]SearchResult, error) {
	u := *s.base
	u.Path += "/search"
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	body, err := s.client.get(req)
	if err != nil {
		if se, ok := err.(*statusError); ok && se.code == http.StatusForbidden {
			return nil, fmt.Errorf("%w (the instance may not allow format=json: add json to search.formats in its settings)", err)
		}
		return nil, err
	}
	var r struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("response is not the JSON of a SearXNG search: %w", err)
	}
	out := make([]SearchResult, 0, min(len(r.Results), count))
	for _, x := range r.Results {
		if len(out) == count {
			break
		}
		out = append(out, SearchResult{Title: x.Title, URL: x.URL, Snippet: x.Content})
	}
	return out, nil
}

// brave queries the Brave Search web API.
type brave struct {
	base   *url.URL
	key    string
	client *searchClient
}

var _ Backend = (*brave)(nil)

func (b *brave) Search(ctx context.Context, query string, count int) ([]SearchResult, error) {
	u := *b.base
	u.Path += "/res/v1/web/search"
	u.RawQuery = url.Values{"q": {query}, "count": {strconv.Itoa(count)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	body, err := b.client.get(req)
	if err != nil {
		return nil, err
	}
	var r struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("response is not the JSON of a Brave web search: %w", err)
	}
	out := make([]SearchResult, 0, min(len(r.Web.Results), count))
	for _, x := range r.Web.Results {
		if len(out) == count {
			break
		}
		out = append(out, SearchResult{Title: stripTags(x.Title), URL: x.URL, Snippet: stripTags(x.Description)})
	}
	return out, nil
}

var tagRE = lazyre.New(`<[^>]*>`)

// stripTags removes the highlighting markup (<strong>...) Brave puts in
// titles and descriptions, and decodes entities.
func stripTags(s string) string { return html.UnescapeString(tagRE().ReplaceAllString(s, "")) }
