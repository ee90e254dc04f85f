// Command mcp-tools serves governed MCP tools: the built-ins, and (with a
// config file) subprocess and HTTP tools, over stdio, SSE or streamable HTTP.
//
//	mcp-tools [serve] [flags]       serve the tools (stdio by default)
//	mcp-tools list [--json]         print the tool descriptors
//	mcp-tools call NAME ARGS        run one tool locally (ARGS: JSON, - for stdin, @FILE)
//	mcp-tools validate --config F   check a configuration file
//	mcp-tools install CLIENT        add mcp-tools to an MCP client's configuration
//	mcp-tools version               print the version (also -v, --version)
//
// Run any command with --help for its flags and examples.
//
// Two builds: the default one (embedded.go) keeps its state in memory and
// exports no OTLP; go build -tags service (service.go) adds shared state in
// Redis (--state redis://...) and OTLP export, and links go-redis and the
// OpenTelemetry SDK, which cost every process about 2 MiB of idle memory.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	// Before any other initialiser runs: fewer stack copies at start-up.
	_ "github.com/mcp-tools/mcp-tools/internal/earlystack"
)

// defaultVersion is version when the build did not set it.
const defaultVersion = "0.1.0-dev"

// version is set at build time with -ldflags "-X main.version=..."; when it
// is not, the module version from the build info is used (see versionLine).
var version = defaultVersion

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

// run is main without the process: it returns the exit status. Every
// problem is printed once, on one line (or one line per problem of a
// configuration), prefixed by the command.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		cmd, args = "help", nil
	case len(args) > 0 && (args[0] == "-v" || args[0] == "--version" || args[0] == "-version"):
		cmd, args = "version", nil
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
		failed, err = call(ctx, args, stdin, stdout, stderr)
		if err == nil && failed {
			return 1
		}
	case "validate":
		err = validate(args, stdout, stderr)
	case "install":
		err = installCmd(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, versionLine())
	case "help":
		fmt.Fprint(stdout, topUsage)
	default:
		fmt.Fprintf(stderr, "mcp-tools: unknown command %q\nRun 'mcp-tools --help' for the commands.\n", cmd)
		return exitUsage
	}
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mcp-tools %s: %v\n", cmd, err)
		if ue.hint {
			fmt.Fprintf(stderr, "Run 'mcp-tools %s --help' for usage.\n", cmd)
		}
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
  mcp-tools call NAME ARGS       run one tool locally and print its result
                                 (ARGS: JSON, - to read stdin, @FILE to read a file)
  mcp-tools validate --config F  check a configuration file without serving
  mcp-tools install CLIENT       add mcp-tools to Claude Desktop, Claude Code, Cursor,
                                 VS Code or Windsurf (--list shows where each writes)
  mcp-tools version              print the version, VCS revision and build (also -v, --version)

Examples:
  mcp-tools                                      # built-ins over stdio
  mcp-tools serve --transport http --addr 127.0.0.1:8080
  mcp-tools serve --root ./data --builtins calculator,file_read
  mcp-tools serve --config tools.yaml
  mcp-tools list --json
  mcp-tools call calculator '{"input": "(178.15 - 150) * 100"}'
  echo '{"input": "2 ** 10"}' | mcp-tools call calculator -
  mcp-tools install claude-desktop -- --root ~/notes

Run 'mcp-tools COMMAND --help' for a command's flags.
`
