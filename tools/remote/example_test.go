package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/remote"
)

func ExampleNewCommand() {
	// Any program that prints {"output": ..., "success": true} is a tool.
	greet, err := remote.NewCommand(remote.CommandConfig{
		Common:  remote.Common{Name: "greet", Description: "Say hello."},
		Command: []string{"echo", `{"output": "hello from a subprocess", "success": true}`},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := greet.Call(context.Background(), json.RawMessage(`{"input": "anything"}`))
	fmt.Println(res.Text, err)

	fail, _ := remote.NewCommand(remote.CommandConfig{
		Common:  remote.Common{Name: "fail", Description: "Always fails."},
		Command: []string{"sh", "-c", "echo 'model not found' >&2; exit 4"},
	})
	_, err = fail.Call(context.Background(), json.RawMessage(`{"input": ""}`))
	var exit *remote.ExitError
	fmt.Println(err, tools.AsError(err).Code, errors.As(err, &exit))
	// Output:
	// hello from a subprocess <nil>
	// model not found 4 true
}

func ExampleNewHTTP() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s (%s)", strings.ToUpper(string(b)), r.Header.Get("Content-Type"))
	}))
	defer srv.Close()

	upper, err := remote.NewHTTP(remote.HTTPConfig{
		Common: remote.Common{Name: "upper", Description: "Upper-case the input."},
		URL:    srv.URL, // POST is the default method
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := upper.Call(context.Background(), json.RawMessage(`{"input": "hello"}`))
	fmt.Println(res.Text, err)
	// Output:
	// HELLO (text/plain; charset=UTF-8) <nil>
}
