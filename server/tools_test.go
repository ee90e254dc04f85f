package server_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

// Tools served by the tests: one of each behaviour the server must handle.

type echoIn struct {
	Text string `json:"text" jsonschema:"description=Text to send back"`
}

type addIn struct {
	A int `json:"a" jsonschema:"description=First addend"`
	B int `json:"b" jsonschema:"description=Second addend,maximum=1000"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type loginIn struct {
	User     string `json:"user"`
	Password string `json:"password" secret:"true"`
}

type sleepIn struct {
	Millis int `json:"millis" jsonschema:"minimum=0,maximum=60000"`
}

type floodIn struct {
	N int `json:"n"`
}

type bigIn struct {
	N int `json:"n"`
}

func testTools() []tools.Tool {
	return []tools.Tool{
		typed.MustNew("echo", "Echo the text.", func(_ context.Context, in echoIn) (string, error) { return in.Text, nil },
			typed.WithAnnotations(tools.Annotations{ReadOnly: true})),
		typed.MustNew("add", "Add two integers.", func(_ context.Context, in addIn) (addOut, error) { return addOut{in.A + in.B}, nil }),
		typed.MustNew("fail", "Always fails.", func(_ context.Context, _ struct{}) (string, error) {
			return "", tools.Failed("the disk is full").WithCode(28)
		}),
		typed.MustNew("boom", "Always panics.", func(_ context.Context, _ struct{}) (string, error) {
			panic("secret panic detail")
		}),
		typed.MustNew("goexit", "Ends its goroutine.", func(_ context.Context, _ struct{}) (string, error) {
			runtime.Goexit()
			return "", nil
		}),
		typed.MustNew("login", "Pretend to log in.", func(_ context.Context, in loginIn) (string, error) { return "welcome " + in.User, nil }),
		typed.MustNew("sleep", "Sleep, or stop when cancelled.", func(ctx context.Context, in sleepIn) (string, error) {
			select {
			case <-time.After(time.Duration(in.Millis) * time.Millisecond):
				return "slept", nil
			case <-ctx.Done():
				return "", errors.New("interrupted")
			}
		}),
		typed.MustNew("whoami", "Report the session.", func(ctx context.Context, _ struct{}) (string, error) {
			s, _ := tools.SessionFrom(ctx)
			return s.ID + "|" + s.ClientName, nil
		}),
		tools.NewPlain(tools.Info{Name: "shout", Description: "Upper-case the input."}, func(_ context.Context, in string) (tools.Result, error) {
			return tools.Result{Text: in + "!", Audience: tools.ForUser}, nil
		}),
		typed.MustNew("flood", "Report progress n times as fast as it can, then return.", func(ctx context.Context, in floodIn) (string, error) {
			for i := 1; i <= in.N; i++ {
				tools.ReportProgress(ctx, float64(i), float64(in.N), "step")
			}
			return "flooded", nil
		}),
		typed.MustNew("big", "Return n bytes of text.", func(_ context.Context, in bigIn) (string, error) {
			return strings.Repeat("x", in.N), nil
		}),
		typed.MustNew("progress", "Report progress twice.", func(ctx context.Context, _ struct{}) (string, error) {
			tools.ReportProgress(ctx, 1, 2, "half")
			tools.ReportProgress(ctx, 2, 2, "done")
			return "ok", nil
		}),
	}
}
