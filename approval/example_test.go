package approval_test

import (
	"context"
	"fmt"

	"github.com/mcp-tools/mcp-tools/approval"
	"github.com/mcp-tools/mcp-tools/typed"
)

func ExampleGate() {
	type sendIn struct {
		To   string `json:"to" jsonschema:"description=Recipient address"`
		Body string `json:"body"`
	}
	send := approval.Gate(typed.MustNew("send_email", "Send an email.",
		func(_ context.Context, in sendIn) (string, error) { return "sent to " + in.To, nil }))

	fmt.Println("gated:", send.Info().Gated)
	fmt.Println("destructive hint:", send.Info().Annotations.Destructive)
	// Output:
	// gated: true
	// destructive hint: true
}
