package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
	"github.com/mcp-tools/mcp-tools/typed"
)

// A pipeline of two steps: the first's structured output becomes the
// second's arguments. Served, each step runs through its own tool's
// governed call (CallWith); here Call runs the steps directly.
func ExampleNew() {
	type wordsIn struct {
		Text string `json:"text"`
	}
	type wordsOut struct {
		Words []string `json:"words"`
	}
	type countOut struct {
		Count int `json:"count"`
	}
	split := typed.MustNew("split", "Split a text into words.", func(_ context.Context, in wordsIn) (wordsOut, error) {
		return wordsOut{Words: strings.Fields(in.Text)}, nil
	})
	count := typed.MustNew("count", "Count words.", func(_ context.Context, in wordsOut) (countOut, error) {
		return countOut{Count: len(in.Words)}, nil
	})
	p, err := pipeline.New(pipeline.Config{
		Name:        "word_count",
		Description: "Count the words of a text.",
		Steps:       []pipeline.Step{{Tool: split}, {Tool: count}},
	})
	if err != nil {
		panic(err)
	}
	res, err := p.Call(context.Background(), json.RawMessage(`{"text":"to be or not to be"}`))
	fmt.Println(res.Text, err)
	fmt.Println("steps:", p.Steps())

	// Served, every step goes through the caller the server hands over.
	logged := func(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
		fmt.Println("step", name, string(args))
		t, _ := map[string]tools.Tool{"split": split, "count": count}[name]
		return t.Call(ctx, args)
	}
	res, _ = p.CallWith(context.Background(), json.RawMessage(`{"text":"hello world"}`), logged)
	fmt.Println(res.Text)
	// Output:
	// {"count":6} <nil>
	// steps: [split count]
	// step split {"text":"hello world"}
	// step count {"words":["hello","world"]}
	// {"count":2}
}
