package server

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// textResults are results in the shape appendTextResult writes itself, and
// some it leaves to json.Marshal.
func textResults(s string) []*mcp.CallToolResult {
	return []*mcp.CallToolResult{
		mcp.NewToolResultText(s),
		mcp.NewToolResultError(s),
		{Content: []mcp.Content{mcp.NewTextContent(s), mcp.NewTextContent("second " + s)}},
		{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: s, Meta: &mcp.Meta{}}}},
		{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: s, Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: ptr(0.5)}}}}},
		{Content: []mcp.Content{mcp.NewTextContent(s)}, StructuredContent: map[string]any{"s": s}},
		{Content: []mcp.Content{mcp.NewImageContent("aGk=", "image/png")}},
		{Content: []mcp.Content{}},
		{Result: mcp.Result{Meta: &mcp.Meta{}}, Content: []mcp.Content{mcp.NewTextContent(s)}},
	}
}

func ptr[T any](v T) *T { return &v }

// TestEncodeResponseAsMCPGo: a fast path's response carries the very bytes
// mcp-go's encoding of the result gives, whatever the text holds.
func TestEncodeResponseAsMCPGo(t *testing.T) {
	for _, s := range []string{"", "hello", `quote " backslash \ slash /`, "<b>&amp;</b>", "\x00\x01\b\f\n\r\t\x1f\x7f",
		"héllo \u2028 \u2029 😀", "bad \xff\xfe utf8 \xe2\x82", "\ufffd", "\x80"} {
		for i, res := range textResults(s) {
			checkEncode(t, i, res)
		}
	}
}

// FuzzEncodeResponse: the same, for arbitrary text.
func FuzzEncodeResponse(f *testing.F) {
	f.Add("hello", false)
	f.Add("<\u2028\xff\"\\>", true)
	f.Fuzz(func(t *testing.T, s string, isErr bool) {
		for i, res := range textResults(s) {
			res.IsError = res.IsError || isErr
			checkEncode(t, i, res)
		}
	})
}

func checkEncode(t *testing.T, i int, res *mcp.CallToolResult) {
	t.Helper()
	body, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":7,"result":` + string(body) + "}\n"
	if got := string(encodeResponse([]byte("7"), res)); got != want {
		t.Errorf("result %d:\n got %s\nwant %s", i, got, want)
	}
}
