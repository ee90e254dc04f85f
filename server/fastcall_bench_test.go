package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

type benchEchoIn struct {
	Text string `json:"text" jsonschema:"description=Text to send back"`
}

// BenchmarkCallFastPath is one tools/call as the stdio and HTTP fast paths
// serve it: the strict frame read, the tool's whole governed chain
// (logging at INFO into io.Discard, recovery, session limit, validation,
// timeout), and the response encoded once. Compare with
// BenchmarkCallBareMCPGo, bare mcp-go's HandleMessage of the same call.
func BenchmarkCallFastPath(b *testing.B) {
	echo := typed.MustNew("echo", "Echo the text.", func(_ context.Context, in benchEchoIn) (string, error) { return in.Text, nil })
	reg, err := tools.NewRegistry(echo)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(reg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f, bad := inspectFrame(msg)
		if bad != nil {
			b.Fatal(bad.msg)
		}
		res, _ := srv.handlers[f.tool](ctx, fastRequest(f))
		if out := encodeResponse(f.id, res); len(out) < 40 {
			b.Fatalf("response %s", out)
		}
	}
}
