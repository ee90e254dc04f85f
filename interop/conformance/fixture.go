package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// The tools the conformance suite's server scenarios call, by the names and
// shapes its scenario texts ask for. Each goes through the whole governed
// chain of a default server (validation, limits, logging, recovery), as a
// user's tool does.
func fixtureTools() []tools.Tool {
	return []tools.Tool{
		tools.New(tools.Info{
			Name:        "test_simple_text",
			Description: "Returns one text content item.",
			Annotations: tools.Annotations{ReadOnly: true},
		}, func(context.Context, json.RawMessage) (tools.Result, error) {
			return tools.Text("This is a simple text response for testing."), nil
		}),
		tools.New(tools.Info{
			Name:        "test_error_handling",
			Description: "Always fails: the failure reaches the client as an isError result.",
			Annotations: tools.Annotations{ReadOnly: true},
		}, func(context.Context, json.RawMessage) (tools.Result, error) {
			return tools.Result{}, tools.Failed("This tool intentionally returns an error for testing")
		}),
		tools.New(tools.Info{
			Name:        "test_tool_with_progress",
			Description: "Reports progress 0, 50 and 100 of 100, then answers.",
			Annotations: tools.Annotations{ReadOnly: true},
		}, func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			// The server sends at most one progress notification per
			// ProgressInterval and coalesces the rest (the last one is
			// always sent): a tool reporting three steps at once would be
			// heard twice. So the steps are spaced as a real tool's are.
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					select {
					case <-time.After(server.DefaultProgressInterval + 50*time.Millisecond):
					case <-ctx.Done():
						return tools.Result{}, ctx.Err()
					}
				}
				tools.ReportProgress(ctx, p, 100, "")
			}
			return tools.Text("Progress test completed"), nil
		}),
		tools.New(tools.Info{
			Name:        "json_schema_2020_12_tool",
			Description: "Tool with JSON Schema 2020-12 features",
			InputSchema: json.RawMessage(schema2020),
			Annotations: tools.Annotations{ReadOnly: true},
		}, func(_ context.Context, args json.RawMessage) (tools.Result, error) {
			return tools.Text(string(args)), nil
		}),
	}
}

// schema2020 is the input schema the json-schema-2020-12 scenario expects
// tools/list to publish unchanged ($schema, $defs, additionalProperties).
const schema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "type": "object",
      "properties": {
        "street": { "type": "string" },
        "city": { "type": "string" }
      }
    }
  },
  "properties": {
    "name": { "type": "string" },
    "address": { "$ref": "#/$defs/address" }
  },
  "additionalProperties": false
}`

// newServer is a default server (the zero Options) serving the fixture.
func newServer() (*server.Server, error) {
	reg, err := tools.NewRegistry(fixtureTools()...)
	if err != nil {
		return nil, err
	}
	return server.New(reg, server.Options{})
}
