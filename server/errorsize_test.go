package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// TestErrorMessageSizeCap: an error's message counts against
// Options.MaxResultBytes as a result's text does: one over it is cut (its
// kind and code kept), never sent whole, and the error the tool returned
// is left as it was.
func TestErrorMessageSizeCap(t *testing.T) {
	huge := &tools.Error{Kind: tools.KindInvalidArguments, Code: 7, Message: "bad input: " + strings.Repeat("é", 1<<20)}
	orig := huge.Message
	reg, err := tools.NewRegistry(
		tools.New(tools.Info{Name: "fails"}, func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Result{}, huge }),
		tools.New(tools.Info{Name: "fails_short"}, func(context.Context, json.RawMessage) (tools.Result, error) {
			return tools.Result{}, tools.Failed("%s", strings.Repeat("x", 993))
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(reg, server.Options{MaxResultBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Call(context.Background(), "fails", nil, server.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Kind != tools.KindInvalidArguments || res.Code != 7 {
		t.Errorf("kind %q code %d, want invalid_arguments and code 7 kept", res.Kind, res.Code)
	}
	if len(res.Text) > 1000 || !strings.HasPrefix(res.Text, "Error: bad input: é") || !strings.Contains(res.Text, "max-result-bytes") {
		t.Errorf("error text of %d bytes %.80q…, want at most 1000 starting with the message and naming the limit", len(res.Text), res.Text)
	}
	if !json.Valid(res.JSON) {
		t.Errorf("the result is not valid JSON (a character cut in two?)")
	}
	if huge.Message != orig {
		t.Error("the tool's own error was changed")
	}
	// Exactly at the limit ("Error: " and 993 bytes): sent whole.
	if res, err := srv.Call(context.Background(), "fails_short", nil, server.CallOptions{}); err != nil || len(res.Text) != 1000 {
		t.Errorf("an error text of exactly the limit: %d bytes, %v; want 1000", len(res.Text), err)
	}
}
