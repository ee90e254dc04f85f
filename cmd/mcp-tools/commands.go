package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mcp-tools/mcp-tools/cmd/mcp-tools/internal/config"
	"github.com/mcp-tools/mcp-tools/server"
)

// loopback reports whether addr is a loopback address.
func loopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// tokenEnv names the environment variable that holds the HTTP bearer token.
const tokenEnv = "MCP_TOOLS_TOKEN"

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
	fs := newFlagSet("serve", serveUsage)
	c.register(fs, true)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	srv, log, err := c.server(fs, stderr, "")
	if err != nil {
		return err
	}
	defer c.store.Close()
	if c.stateURL != "" {
		log.Info("sharing state", "store", redactURL(c.stateURL))
	}
	// Building the tools leaves garbage (reflection, schema compilation)
	// that a long-lived server would otherwise keep mapped until its first
	// GC: hand it back 100 ms from now, by when serving has begun. Not
	// before serving: the collection costs about 1.5 ms, which the client's
	// handshake would wait for.
	freeLater := time.AfterFunc(100*time.Millisecond, debug.FreeOSMemory)
	defer freeLater.Stop()
	if c.tel != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = c.tel.Shutdown(sctx) // flushes the last spans, when exporting
		}()
	}
	// Every Serve returns once the server is shut down: on SIGINT or
	// SIGTERM (ctx), or, for stdio, when the client goes away.
	if c.metricsAddr != "" {
		ln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		log.Info("serving metrics", "url", "http://"+ln.Addr().String()+server.PathMetrics)
		go func() { _ = srv.Serve(ln, srv.OpsHandler(c.tel.Handler())) }()
	}
	switch c.transport {
	case server.TransportStdio:
		log.Info("serving", "transport", "stdio", "tools", len(srv.Tools()))
		return srv.ServeStdio(ctx, stdin, stdout)
	case server.TransportHTTP, server.TransportSSE:
		ln, err := net.Listen("tcp", c.addr)
		if err != nil {
			return err
		}
		if !loopback(ln.Addr()) && len(tokensFromEnv()) == 0 && c.authIssuer == "" && (c.file == nil || c.file.Auth == nil) {
			log.Warn("listening on a non-loopback address with no bearer token: anyone who can reach it can call the tools; set "+tokenEnv,
				"addr", ln.Addr().String())
		}
		h, path := srv.StreamableHTTPHandler(), server.PathMCP
		if c.transport == server.TransportSSE {
			h, path = srv.SSEHandler(), server.PathSSE
		}
		stop := context.AfterFunc(ctx, func() {
			log.Info("shutting down", "reason", context.Cause(ctx))
			_ = srv.Shutdown(context.Background())
		})
		defer stop()
		log.Info("serving", "transport", c.transport, "url", "http://"+ln.Addr().String()+path)
		return srv.Serve(ln, h)
	}
	return usagef("unknown transport %q: use stdio, sse or http", c.transport)
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
	fs := newFlagSet("list", listUsage)
	c.register(fs, false)
	fs.BoolVar(&asJSON, "json", false, "print the descriptors as JSON")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
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
	width := 0
	for _, d := range descs {
		width = max(width, len(d.Name))
	}
	for _, d := range descs {
		desc, _, _ := strings.Cut(d.Description, "\n")
		fmt.Fprintf(stdout, "%-*s  %s\n", width, d.Name, desc)
	}
	return nil
}

const validateUsage = `Usage: mcp-tools validate --config FILE [flags]

Check a configuration file without serving: every problem is listed, in one
pass, with its key path and line, and the exit status is 2 when there is any.
The tools are built too, so a subprocess tool whose settings are wrong is
caught here; each subprocess command must resolve to an executable (the path
it resolves to is printed) and each dir must exist.

Examples:
  mcp-tools validate --config tools.yaml
`

func validate(args []string, stdout, stderr io.Writer) error {
	var c setup
	fs := newFlagSet("validate", validateUsage)
	c.register(fs, false)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("unexpected arguments %q", pos)
	case c.configPath == "":
		return usagef("--config FILE is required")
	}
	srv, _, err := c.server(fs, stderr, "error")
	if err != nil {
		return err
	}
	if !serviceBuild && c.file.Server.State != "" {
		// serve would refuse it (openState): not ok for this build.
		return badConfig(fmt.Errorf("%s: server.state: %w", c.configPath, errNoSharedState))
	}
	fmt.Fprintf(stdout, "%s: ok, %d tools\n", c.configPath, len(srv.Tools()))
	for _, t := range c.file.Tools {
		if t.Process == nil {
			continue
		}
		prog, err := config.ResolveCommand(*t.Process, c.file.Dir)
		if err != nil {
			return err // checked by config.Load already
		}
		fmt.Fprintf(stdout, "  %s runs %s\n", t.Name, prog)
	}
	return nil
}
