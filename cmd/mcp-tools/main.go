// Command mcp-tools serves governed MCP tools: the built-ins, and (with a
// config file) subprocess and HTTP tools, over stdio, SSE or streamable HTTP.
//
//	mcp-tools [serve] [flags]       serve the tools (stdio by default)
//	mcp-tools list [--json]         print the tool descriptors
//	mcp-tools call NAME 'ARGS'      run one tool locally
//	mcp-tools validate --config F   check a configuration file
//	mcp-tools version               print the version
//
// Run any command with --help for its flags and examples.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	// With SIGPIPE caught, a write to a closed stdout fails with EPIPE
	// instead of killing the process: the stdio server then ends the
	// session as if stdin had closed (calls cancelled, tool processes
	// killed) and exits 0. Caught, not ignored: ignored signals would be
	// inherited by tool processes.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// As PID 1 of a container, or as a child subreaper, reap the orphans
	// that tool processes leave behind.
	stopReaper := startReaper(ctx)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	stopReaper()
	os.Exit(code)
}

// exitUsage is the exit status for bad flags or a bad configuration.
const exitUsage = 2

// errUsage marks errors whose exit status is exitUsage.
var errUsage = errors.New("usage")

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		cmd, args = "help", nil
	case len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-':
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args, stdin, stdout, stderr)
	case "list":
		err = list(args, stdout, stderr)
	case "call":
		var failed bool
		failed, err = call(ctx, args, stdout, stderr)
		if err == nil && failed {
			return 1
		}
	case "validate":
		err = validate(args, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "mcp-tools %s\n", version)
	case "help":
		fmt.Fprint(stdout, topUsage)
	default:
		fmt.Fprintf(stderr, "mcp-tools: unknown command %q\n\n%s", cmd, topUsage)
		return exitUsage
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "mcp-tools %s: %v\n", cmd, err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "mcp-tools %s: %v\n", cmd, err)
		return 1
	}
}

const topUsage = `mcp-tools serves governed MCP tools to MCP clients (Claude Desktop, IDEs, agents).

Usage:
  mcp-tools [serve] [flags]      serve the tools (stdio by default)
  mcp-tools list [--json]        print the tool descriptors as tools/list publishes them
  mcp-tools call NAME 'ARGS'     run one tool locally and print its result
  mcp-tools validate --config F  check a configuration file without serving
  mcp-tools version              print the version

Examples:
  mcp-tools                                      # built-ins over stdio
  mcp-tools serve --transport http --addr 127.0.0.1:8080
  mcp-tools serve --root ./data --builtins calculator,file_read
  mcp-tools serve --config tools.yaml
  mcp-tools list --json
  mcp-tools call calculator '{"input": "(178.15 - 150) * 100"}'

Run 'mcp-tools COMMAND --help' for a command's flags.
`
