package server_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// childEnv makes the test binary play an mcp-tools stdio server, so that
// the stdio tests drive a real subprocess over a real pipe.
const childEnv = "MCP_TOOLS_TEST_STDIO_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

func runChild() int {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE) // as cmd/mcp-tools does
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := testLogger(os.Stderr, envOr("MCP_TOOLS_TEST_LOG_LEVEL", "debug"), "text")
	var o outbox
	reg, err := tools.NewRegistry(append(testTools(), o.tool())...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	maxMsg, _ := strconv.ParseInt(os.Getenv("MCP_TOOLS_TEST_MAX_MESSAGE"), 10, 64)
	maxInFlight, _ := strconv.Atoi(os.Getenv("MCP_TOOLS_TEST_MAX_IN_FLIGHT"))
	grace, _ := time.ParseDuration(envOr("MCP_TOOLS_TEST_GRACE", "5s"))
	maxQueued, _ := strconv.Atoi(os.Getenv("MCP_TOOLS_TEST_MAX_QUEUED"))
	maxResult, _ := strconv.Atoi(os.Getenv("MCP_TOOLS_TEST_MAX_RESULT"))
	srv, err := server.New(reg, server.Options{Logger: log, MaxMessageBytes: maxMsg, MaxInFlight: maxInFlight, ShutdownGrace: grace,
		MaxQueuedCalls: maxQueued, MaxResultBytes: maxResult})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := srv.ServeStdio(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
