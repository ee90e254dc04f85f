package server

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/tools"
)

// Descriptor is a tool as tools/list publishes it: the tool's own
// descriptor after the server's settings are applied (Options.Strict's
// additionalProperties, a gated tool marked destructive).
type Descriptor struct {
	// Name and Description are the tool's.
	Name, Description string
	// InputSchema is the JSON Schema every call's arguments are validated
	// against.
	InputSchema json.RawMessage
	// OutputSchema describes the structured result; nil when the tool has
	// none.
	OutputSchema json.RawMessage
	// Annotations are the hints published to clients.
	Annotations tools.Annotations
}

// MarshalJSON encodes d exactly as the MCP tool object tools/list sends:
// name, description, inputSchema, outputSchema when set, and annotations
// with every hint spelled out.
func (d Descriptor) MarshalJSON() ([]byte, error) { return json.Marshal(d.mcpTool()) }

// mcpTool is d as mcp-go publishes it.
func (d Descriptor) mcpTool() mcp.Tool {
	t := mcp.NewToolWithRawSchema(d.Name, d.Description, d.InputSchema)
	if len(d.OutputSchema) > 0 {
		t.RawOutputSchema = d.OutputSchema
	}
	a := d.Annotations
	t.Annotations = mcp.ToolAnnotation{
		Title:           a.Title,
		ReadOnlyHint:    mcp.ToBoolPtr(a.ReadOnly),
		DestructiveHint: mcp.ToBoolPtr(a.Destructive),
		IdempotentHint:  mcp.ToBoolPtr(a.Idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(a.OpenWorld),
	}
	return t
}

// descriptorOf is the Descriptor of the published tool t.
func descriptorOf(t mcp.Tool) Descriptor {
	a := t.Annotations
	return Descriptor{
		Name:         t.Name,
		Description:  t.Description,
		InputSchema:  t.RawInputSchema,
		OutputSchema: t.RawOutputSchema,
		Annotations: tools.Annotations{
			Title:       a.Title,
			ReadOnly:    isTrue(a.ReadOnlyHint),
			Destructive: isTrue(a.DestructiveHint),
			Idempotent:  isTrue(a.IdempotentHint),
			OpenWorld:   isTrue(a.OpenWorldHint),
		},
	}
}

func isTrue(b *bool) bool { return b != nil && *b }
