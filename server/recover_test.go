package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// selfPanicker's String panics with the value itself: fmt catches the
// first panic and, printing that panic's value, meets a second one, which
// it lets go.
type selfPanicker struct{}

func (p selfPanicker) String() string { panic(p) }

// blockingError's Error method does not return until release is closed.
type blockingError struct{ release chan struct{} }

func (e blockingError) Error() string { <-e.release; return "released" }

// TestPanicValueMethods: a tool that panics with a value whose String or
// Error method panics in turn, or never returns, still gets an
// internal_error answer, and the server goes on serving (the first used to
// kill the process: fmt re-panics on a panic met while printing a panic).
func TestPanicValueMethods(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	panicWith := func(name string, v any) tools.Tool {
		return tools.New(tools.Info{Name: name}, func(context.Context, json.RawMessage) (tools.Result, error) { panic(v) })
	}
	reg, err := tools.NewRegistry(
		panicWith("self_panicker", selfPanicker{}),
		panicWith("blocking_error", blockingError{release}),
		tools.New(tools.Info{Name: "ok"}, func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Text("fine"), nil }),
	)
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	srv, err := server.New(reg, server.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ tool, typ string }{
		{"self_panicker", "server_test.selfPanicker"},
		{"blocking_error", "server_test.blockingError"},
	} {
		res, err := srv.Call(context.Background(), tt.tool, nil, server.CallOptions{})
		if err != nil || !res.IsError || res.Kind != tools.KindInternal {
			t.Errorf("%s: %+v, %v; want an internal_error result", tt.tool, res, err)
		}
		if !strings.Contains(log.String(), tt.typ) {
			t.Errorf("%s: the log does not name the panic value's type %s:\n%s", tt.tool, tt.typ, log.String())
		}
	}
	if res, err := srv.Call(context.Background(), "ok", nil, server.CallOptions{}); err != nil || res.Text != "fine" {
		t.Errorf("after the panics: %+v, %v", res, err)
	}
}
