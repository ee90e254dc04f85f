package web

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/mcp-tools/mcp-tools/tools"
)

// document is a response body made readable.
type document struct {
	mediaType string
	title     string
	content   string
}

// convert makes body readable according to its content type: HTML becomes
// Markdown (links made absolute against base), text and JSON pass through
// (decoded to UTF-8), and anything else is refused. An empty or unparsable
// contentType is sniffed from the body.
func convert(ctx context.Context, contentType string, body []byte, base *url.URL) (document, error) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || contentType == "" {
		contentType = http.DetectContentType(body)
		mediaType, params, _ = mime.ParseMediaType(contentType)
	}
	doc := document{mediaType: mediaType}
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		r, err := charset.NewReader(bytes.NewReader(body), contentType)
		if err != nil {
			r = bytes.NewReader(body)
		}
		root, err := html.Parse(r)
		if err != nil {
			return doc, tools.Failed("parse HTML from %s: %w", base.Redacted(), err)
		}
		doc.title = title(root)
		md, err := htmltomarkdown.ConvertNode(root, converter.WithContext(ctx), converter.WithDomain(origin(base)))
		if err != nil {
			return doc, tools.Failed("convert HTML from %s to Markdown: %w", base.Redacted(), err)
		}
		doc.content = strings.ToValidUTF8(string(md), "\uFFFD")
	case strings.HasPrefix(mediaType, "text/") || isJSON(mediaType):
		doc.content = decodeText(body, params["charset"])
	default:
		return doc, tools.Failed("content type %q is not supported: web_fetch returns HTML (as Markdown), text/* and JSON only", mediaType)
	}
	return doc, nil
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// decodeText converts body from the named charset to UTF-8; an unknown or
// missing charset leaves it as UTF-8, with invalid bytes replaced.
func decodeText(body []byte, label string) string {
	if label != "" {
		if enc, _ := charset.Lookup(label); enc != nil {
			if b, err := io.ReadAll(enc.NewDecoder().Reader(bytes.NewReader(body))); err == nil {
				body = b
			}
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// title returns the text of the document's first <title>, whitespace
// collapsed.
func title(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	if n.Type == html.ElementNode && n.DataAtom == atom.Svg {
		return "" // an SVG <title> is not the page's
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := title(c); t != "" {
			return t
		}
	}
	return ""
}

// origin returns the base the converter resolves relative links against.
func origin(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery, c.Fragment = "", ""
	return c.String()
}
