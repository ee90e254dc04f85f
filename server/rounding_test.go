package server_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

type boundedIn struct {
	N int64 `json:"n" jsonschema:"maximum=9007199254740992"`
}

// TestMCPGoPathValidatesTheBytesTheToolGets: a call that mcp-go decodes
// (here through Server.Call) is validated against the arguments' bytes,
// which the tool receives, not against mcp-go's float64 reading of them,
// which may be rounded: 2^53+1 is over a maximum of 2^53 though float64
// reads it as 2^53, and 0e700 is beyond the literal limits though float64
// reads it as 0. Both are refused as the fast paths refuse them.
func TestMCPGoPathValidatesTheBytesTheToolGets(t *testing.T) {
	ran := make(chan int64, 10)
	reg, err := tools.NewRegistry(typed.MustNew("bounded", "Take n up to 2^53.", func(_ context.Context, in boundedIn) (string, error) {
		ran <- in.N
		return strconv.FormatInt(in.N, 10), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(reg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args, want string // want: a part of the error, or the result
		isError    bool
	}{
		{`{"n":9007199254740992}`, "9007199254740992", false},
		{`{"n":9007199254740993}`, "must be at most 9007199254740992", true},
		{`{"n":0e700}`, "the number is too long or too large to check", true},
		{`{"n":1e-700}`, "the number is too long or too large to check", true},
	} {
		t.Run(tt.args, func(t *testing.T) {
			res, err := srv.Call(context.Background(), "bounded", json.RawMessage(tt.args), server.CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError || !strings.Contains(res.Text, tt.want) {
				t.Fatalf("got %v %q, want isError %v and %q", res.IsError, res.Text, tt.isError, tt.want)
			}
			if tt.isError && res.Kind != tools.KindInvalidArguments {
				t.Errorf("kind %q, want %q", res.Kind, tools.KindInvalidArguments)
			}
			select {
			case n := <-ran:
				if tt.isError {
					t.Errorf("the tool ran with n=%d", n)
				}
			default:
				if !tt.isError {
					t.Error("the tool did not run")
				}
			}
		})
	}
}
