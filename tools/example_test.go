package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-tools/mcp-tools/tools"
)

func ExampleNewPlain() {
	upper := tools.NewPlain(tools.Info{
		Name:        "upper",
		Description: "Upper-case the input.",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true},
	}, func(ctx context.Context, input string) (tools.Result, error) {
		return tools.Text(strings.ToUpper(input)), nil
	})

	res, err := upper.Call(context.Background(), json.RawMessage(`{"input":"hello, tools"}`))
	fmt.Println(res.Text, err)

	_, err = upper.Call(context.Background(), json.RawMessage(`{}`))
	fmt.Println(err)
	// Output:
	// HELLO, TOOLS <nil>
	// missing required field "input"
}

func ExampleNewRegistry() {
	echo := tools.NewPlain(tools.Info{Name: "echo", Description: "Repeat the input."},
		func(ctx context.Context, input string) (tools.Result, error) { return tools.Text(input), nil })
	now := tools.New(tools.Info{Name: "ping", Description: "Answer pong."},
		func(ctx context.Context, args json.RawMessage) (tools.Result, error) { return tools.Text("pong"), nil })

	r, err := tools.NewRegistry(echo, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Names())
	t, _ := r.Lookup("ping")
	res, _ := t.Call(context.Background(), json.RawMessage(`{}`))
	fmt.Println(res.Text)

	_, err = tools.NewRegistry(echo, echo, tools.New(tools.Info{Name: "bad name"}, nil))
	fmt.Println(err)
	// Output:
	// [echo ping]
	// pong
	// tool "echo": registered more than once; names must be unique across every source (typed, plain, remote, built-in)
	// tool "bad name": name may hold only letters, digits, '_' and '-': a tool name is 1 to 64 characters of letters, digits, '_' and '-' ([A-Za-z0-9_-])
}
