package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/server"
)

// errHelp is returned when --help was asked for and printed.
var errHelp = errors.New("help printed")

// tokenEnv names the environment variable that holds the HTTP bearer token.
const tokenEnv = "MCP_TOOLS_TOKEN"

func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

const serveUsage = `Usage: mcp-tools [serve] [flags]

Serve the tools to an MCP client. stdio (the default) is what Claude Desktop and
IDEs launch; http is streamable HTTP at /mcp; sse is the legacy HTTP+SSE transport
at /sse. HTTP listens on 127.0.0.1:8080 unless --addr says otherwise. Set
` + tokenEnv + ` in the environment to require "Authorization: Bearer <token>".

Examples:
  mcp-tools serve
  mcp-tools serve --builtins calculator,datetime --log-level debug
  mcp-tools serve --transport http --addr 127.0.0.1:9000
  ` + tokenEnv + `=s3cret mcp-tools serve --transport http --addr 0.0.0.0:8080 --allowed-origin https://app.example.com
`

func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var c setup
	fs := newFlagSet("serve", serveUsage, stderr)
	c.register(fs, true)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	srv, log, err := c.server(fs, stderr, "")
	if err != nil {
		return err
	}
	// Building the tools leaves garbage (reflection, schema compilation)
	// that a long-lived server would otherwise keep mapped until its first
	// GC: hand it back before serving.
	debug.FreeOSMemory()
	switch c.transport {
	case server.TransportStdio:
		log.Info("serving", "transport", "stdio", "tools", len(srv.Tools()))
		return srv.ServeStdio(ctx, stdin, stdout)
	case server.TransportHTTP, server.TransportSSE:
		ln, err := net.Listen("tcp", c.addr)
		if err != nil {
			return err
		}
		return srv.ServeHTTP(ctx, ln, c.transport)
	}
	return fmt.Errorf("%w: unknown transport %q: use stdio, sse or http", errUsage, c.transport)
}

const listUsage = `Usage: mcp-tools list [--json] [flags]

Print the tools the same flags would serve. --json prints the descriptors exactly
as tools/list publishes them.

Examples:
  mcp-tools list
  mcp-tools list --json --root ./data
`

func list(args []string, stdout, stderr io.Writer) error {
	var c setup
	var asJSON bool
	fs := newFlagSet("list", listUsage, stderr)
	c.register(fs, false)
	fs.BoolVar(&asJSON, "json", false, "print the descriptors as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	srv, _, err := c.server(fs, stderr, "warn")
	if err != nil {
		return err
	}
	descs := srv.Tools()
	if asJSON {
		b, err := json.MarshalIndent(descs, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	for _, d := range descs {
		desc, _, _ := strings.Cut(d.Description, "\n")
		fmt.Fprintf(stdout, "%-14s %s\n", d.Name, desc)
	}
	return nil
}

const callUsage = `Usage: mcp-tools call [flags] NAME ['ARGUMENTS-JSON']

Run one tool locally, through the same validation and error path as a client's
tools/call, and print its result. The exit status is 1 when the result is an
error.

Examples:
  mcp-tools call calculator '{"input": "2 ** 10"}'
  mcp-tools call --json datetime '{"input": "weekday of 2024-07-04"}'
  mcp-tools call --root ./data file_read '{"path": "notes.txt"}'
`

func call(ctx context.Context, args []string, stdout, stderr io.Writer) (failed bool, err error) {
	var c setup
	var asJSON bool
	fs := newFlagSet("call", callUsage, stderr)
	c.register(fs, false)
	fs.BoolVar(&asJSON, "json", false, "print the whole CallToolResult as JSON")
	if err := parse(fs, args); err != nil {
		return false, err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return false, fmt.Errorf("%w: want a tool name and, optionally, its arguments as JSON", errUsage)
	}
	name := fs.Arg(0)
	rawArgs := json.RawMessage("{}")
	if fs.NArg() == 2 {
		rawArgs = json.RawMessage(fs.Arg(1))
		if !json.Valid(rawArgs) {
			return false, fmt.Errorf("%w: arguments are not valid JSON: %s", errUsage, fs.Arg(1))
		}
	}
	srv, _, err := c.server(fs, stderr, "warn")
	if err != nil {
		return false, err
	}
	res, err := callInProcess(ctx, srv, name, rawArgs)
	if err != nil {
		return false, err
	}
	if asJSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return false, err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return res.IsError, nil
	}
	for _, content := range res.Content {
		if t, ok := mcp.AsTextContent(content); ok {
			fmt.Fprintln(stdout, t.Text)
		}
	}
	return res.IsError, nil
}

// callInProcess runs one tools/call through mcp-go's in-process client, so
// the call takes exactly the path a client's call takes.
func callInProcess(ctx context.Context, srv *server.Server, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	c, err := client.NewInProcessClient(srv.MCP())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-tools call", Version: version}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	return res, nil
}

const validateUsage = `Usage: mcp-tools validate --config FILE [flags]

Check a configuration file without serving: every problem is listed, with its
key path and line, and the exit status is 2 when there is any. The tools are
built too, so a subprocess tool whose settings are wrong is caught here.

Examples:
  mcp-tools validate --config tools.yaml
`

func validate(args []string, stdout, stderr io.Writer) error {
	var c setup
	fs := newFlagSet("validate", validateUsage, stderr)
	c.register(fs, false)
	if err := parse(fs, args); err != nil {
		return err
	}
	if c.configPath == "" {
		fs.Usage()
		return fmt.Errorf("%w: --config FILE is required", errUsage)
	}
	srv, _, err := c.server(fs, stderr, "error")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok, %d tools\n", c.configPath, len(srv.Tools()))
	return nil
}
