// Command conformance serves, over streamable HTTP on a loopback port, the
// tools the official MCP conformance suite (@modelcontextprotocol/conformance)
// calls in its server scenarios, on mcp-tools' server with its default
// options. `go test ./interop/conformance` runs the suite against it (see
// README.md in this directory); by hand:
//
//	go run ./interop/conformance -addr 127.0.0.1:18600 &
//	cd interop/conformance && npx conformance server --url http://127.0.0.1:18600/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-tools/mcp-tools/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18600", "the address to listen on")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	srv, err := newServer()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, func() { _ = srv.Shutdown(context.Background()) })
	fmt.Fprintf(os.Stderr, "serving http://%s%s\n", ln.Addr(), server.PathMCP)
	return srv.Serve(ln, srv.StreamableHTTPHandler())
}
