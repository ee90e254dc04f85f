// Package testredis runs a real redis-server for tests: on a free port of
// 127.0.0.1, with no persistence, in a temporary directory, stopped when
// the test ends. It can also stop, kill and restart the server, for tests
// of what a client does when Redis goes away and comes back.
//
// When redis-server is not installed the test is skipped, unless the
// environment sets MCP_TOOLS_REQUIRE_SERVERS=1 (as CI does), in which case
// it fails: a required server never silently skips.
package testredis

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/internal/proc"
)

// RequireEnv is the environment variable that turns a missing
// redis-server from a skip into a failure when set to "1".
const RequireEnv = "MCP_TOOLS_REQUIRE_SERVERS"

// startTimeout bounds how long a starting server may take to answer PING.
const startTimeout = 15 * time.Second

// Server is a redis-server started by Start. Its methods may be called
// from any goroutine.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	waited <-chan error
	out    *syncBuffer
}

// Start starts a redis-server on a free port of 127.0.0.1 and waits until
// it answers PING. The server is stopped when the test and its subtests
// end. Start skips the test when redis-server is not in PATH (fails it
// when MCP_TOOLS_REQUIRE_SERVERS=1).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("redis-server not installed (required by %s=1): apt-get install redis-server", RequireEnv)
		}
		t.Skip("redis-server not installed: apt-get install redis-server")
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(s.Stop)
	// A free port found by listening on :0 may be taken again before
	// redis-server binds it; try a few.
	var last error
	for range 3 {
		if s.port, last = freePort(); last != nil {
			continue
		}
		if last = s.start(); last == nil {
			return s
		}
	}
	t.Fatalf("testredis: start: %v", last)
	return nil
}

// Addr returns the server's host:port.
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// URL returns a redis:// URL for the server's database 0.
func (s *Server) URL() string {
	return "redis://" + s.Addr() + "/0"
}

// Stop ends the server with SIGTERM and waits for it to exit. Stopping a
// server that is not running does nothing.
func (s *Server) Stop() {
	s.end(syscall.SIGTERM)
}

// Kill ends the server with SIGKILL, as a crash would, and waits for it to
// exit. Killing a server that is not running does nothing.
func (s *Server) Kill() {
	s.end(syscall.SIGKILL)
}

// Restart starts the server again on the same port, empty, and waits
// until it answers PING. It stops the server first if it is running.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("testredis: restart: %v", err)
	}
}

// start runs redis-server on s.port and waits for PING.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
	)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	waited, err := proc.Start(cmd)
	if err != nil {
		return fmt.Errorf("run %s: %w", s.bin, err)
	}
	deadline := time.Now().Add(startTimeout)
	for {
		if pingErr := ping(s.Addr()); pingErr == nil {
			break
		} else if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-waited
			return fmt.Errorf("no answer to PING after %v (%v); output:\n%s", startTimeout, pingErr, out)
		}
		select {
		case err := <-waited:
			return fmt.Errorf("redis-server exited (%v); output:\n%s", err, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.cmd, s.waited, s.out = cmd, waited, out
	return nil
}

// end sends sig to a running server and waits for it.
func (s *Server) end(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.waited:
	case <-time.After(startTimeout):
		_ = s.cmd.Process.Kill()
		<-s.waited
	}
	s.cmd, s.waited = nil, nil
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ping sends PING to addr and expects +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a child's
// stdout and stderr.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
