package typed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

type RepeatIn struct {
	Word  string `json:"word" jsonschema:"description=The word to repeat,minLength=1"`
	Times int    `json:"times,omitempty" jsonschema:"description=How many times (default 2),minimum=1,maximum=10"`
}

type RepeatOut struct {
	Text string `json:"text"`
}

func ExampleNew() {
	repeat, err := typed.New("repeat", "Repeat a word.",
		func(ctx context.Context, in RepeatIn) (RepeatOut, error) {
			if in.Times == 0 {
				in.Times = 2
			}
			return RepeatOut{Text: strings.TrimSpace(strings.Repeat(in.Word+" ", in.Times))}, nil
		},
		typed.WithAnnotations(tools.Annotations{ReadOnly: true, Idempotent: true}))
	if err != nil {
		panic(err)
	}

	fmt.Println(string(repeat.Info().InputSchema))
	res, err := repeat.Call(context.Background(), json.RawMessage(`{"word":"go","times":3}`))
	fmt.Println(res.Text, err)
	// Output:
	// {"properties":{"word":{"type":"string","minLength":1,"description":"The word to repeat"},"times":{"type":"integer","maximum":10,"minimum":1,"description":"How many times (default 2)"}},"type":"object","required":["word"]}
	// {"text":"go go go"} <nil>
}
