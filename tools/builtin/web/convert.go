package web

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	baseplugin "github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
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
	// cut reports that the HTML-to-Markdown conversion stopped at its
	// budget (see markdownBudgetPerBodyByte), or because ctx was done, so
	// the end of the document is missing.
	cut bool
}

// markdownBudgetPerBodyByte sets the budget of converting one HTML
// document: toMarkdown may write this many bytes of Markdown per byte of
// FetchConfig.MaxBodyBytes, counted at every element whose renderer copies
// its content into a buffer of its own (lists and their items, quotes,
// links, images, emphasis, headings, code). Nesting those elements
// multiplies that work by the depth, and lists and quotes indent every line
// they hold again at each level, so a few megabytes of hostile HTML (a
// <pre> of newlines under hundreds of <blockquote>s, thousands of relative
// links against a long base URL) would otherwise become gigabytes and
// minutes of CPU. Real pages spend one or two bytes per body byte. Past the
// budget the rest of the document is dropped.
const markdownBudgetPerBodyByte = 4

// maxTitleLength is the most characters of a document's title returned
// (with "…" when cut): the title counts against no max_length.
const maxTitleLength = 1000

// copying reports whether the renderer of the element tag writes its
// content into a buffer of its own before writing it out (counted against
// the budget of toMarkdown). A switch, not a map: a package map is built
// at every start of the server.
func copying(tag string) bool {
	switch tag {
	case "ul", "ol", "li", "blockquote",
		"a", "img", "b", "strong", "em", "i",
		"h1", "h2", "h3", "h4", "h5", "h6",
		"pre", "code", "var", "samp", "kbd", "tt":
		return true
	}
	return false
}

// toMarkdown converts root to Markdown, links made absolute against base.
// It stops, reporting cut, once the elements copying names have
// written more than budget bytes in all, or when ctx is done.
func toMarkdown(ctx context.Context, root *html.Node, base *url.URL, budget int64) (md []byte, cut bool, err error) {
	conv := converter.NewConverter(converter.WithPlugins(baseplugin.NewBasePlugin(), commonmark.NewCommonmarkPlugin()))
	var spent int64
	nodes := 0
	var own *html.Node // the element whose own renderer is to run next
	conv.Register.Renderer(func(c converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
		if nodes++; cut || nodes%1024 == 0 && ctx.Err() != nil {
			cut = true
			return converter.RenderSuccess // render nothing more
		}
		if n == own || n.Type != html.ElementNode || !copying(n.Data) {
			return converter.RenderTryNext
		}
		var buf bytes.Buffer
		outer := own
		own = n
		c.RenderNodes(c, &buf, n)
		own = outer
		if spent += int64(buf.Len()); spent > budget || cut {
			cut = true
			return converter.RenderSuccess
		}
		w.Write(buf.Bytes())
		return converter.RenderSuccess
	}, converter.PriorityEarly)
	md, err = conv.ConvertNode(root, converter.WithContext(ctx), converter.WithDomain(origin(base)))
	return md, cut, err
}

// convert makes body readable according to its content type: HTML becomes
// Markdown (links made absolute against base), text and JSON pass through
// (decoded to UTF-8), and anything else is refused. An empty or unparsable
// contentType is sniffed from the body. The HTML conversion writes at most
// about budget bytes of Markdown (see toMarkdown).
func convert(ctx context.Context, contentType string, body []byte, base *url.URL, budget int64) (document, error) {
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
		if t, _, cut := truncateRunes(doc.title, maxTitleLength); cut {
			doc.title = t + "…"
		}
		md, cut, err := toMarkdown(ctx, root, base, budget)
		if err != nil {
			return doc, tools.Failed("convert HTML from %s to Markdown: %w", base.Redacted(), err)
		}
		doc.cut = cut
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
