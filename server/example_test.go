package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

// The README's "A typed tool in ten lines".

type WeatherIn struct {
	City  string `json:"city" jsonschema:"description=City name (like Paris)"`
	Units string `json:"units,omitempty" jsonschema:"enum=metric,enum=imperial,default=metric"`
}

var weather = typed.MustNew("weather", "Current weather for a city.",
	func(ctx context.Context, in WeatherIn) (string, error) {
		return fmt.Sprintf("Sunny in %s", in.City), nil
	})

// ExampleNew serves a registry over stdio: here a pipe stands for the
// client, which initializes the session, calls the tool, and hangs up.
func ExampleNew() {
	reg, err := tools.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(reg, server.Options{})
	if err != nil {
		log.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(context.Background(), inR, outW) }()
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Paris"}}}`+"\n")
	}()
	lines := bufio.NewScanner(outR)
	for lines.Scan() {
		var msg struct {
			ID     int
			Result struct {
				Content []struct{ Text string }
				IsError bool
			}
		}
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
			log.Fatal(err)
		}
		if msg.ID == 2 {
			fmt.Println(msg.Result.Content[0].Text, msg.Result.IsError)
			break
		}
	}
	inW.Close() // the client hangs up: ServeStdio returns
	go io.Copy(io.Discard, outR)
	fmt.Println(<-served)
	// Output:
	// Sunny in Paris false
	// <nil>
}

// ExampleServer_Call runs one call in process, through the same
// validation, governance and approval as a client's call.
func ExampleServer_Call() {
	reg, err := tools.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(reg, server.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, args := range []string{`{"city": "Paris"}`, `{"city": "Paris", "units": "kelvin"}`} {
		res, err := srv.Call(context.Background(), "weather", json.RawMessage(args), server.CallOptions{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (error: %v, kind: %q)\n", res.Text, res.IsError, res.Kind)
	}
	// Output:
	// Sunny in Paris (error: false, kind: "")
	// Error: invalid arguments: field "units": must be one of "metric", "imperial" (enum) (error: true, kind: "invalid_arguments")
}

// ExampleServer_Tools prints what tools/list publishes.
func ExampleServer_Tools() {
	reg, err := tools.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(reg, server.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range srv.Tools() {
		fmt.Printf("%s: %s\n%s\n", d.Name, d.Description, d.InputSchema)
	}
	// Output:
	// weather: Current weather for a city.
	// {"properties":{"city":{"type":"string","description":"City name (like Paris)"},"units":{"type":"string","enum":["metric","imperial"],"default":"metric"}},"type":"object","required":["city"]}
}
