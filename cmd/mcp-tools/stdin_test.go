package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStdinKinds drives the binary over the kinds of stdin clients hand it,
// each with 300 pipelined calls whose answers (20 kB each) back up while
// the client reads nothing: pipes (os/exec, most clients), separate
// sockets (Node's child processes), and one socket as both stdin and
// stdout (as inetd does). Every call is answered, and the server exits 0
// when its input ends. The one socket stays blocking: making it pollable
// would make the writes to stdout fail with EAGAIN once it is full.
func TestStdinKinds(t *testing.T) {
	socketPair := func(t *testing.T) (client, server *os.File) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Not inherited by the server: its copy of the client's end
		// would keep its input from ever ending.
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
		return os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "server")
	}
	for _, kind := range []string{"pipes", "sockets", "one socket"} {
		t.Run(kind, func(t *testing.T) {
			var toServer io.WriteCloser
			var fromClient io.ReadCloser
			var serverIn, serverOut *os.File
			switch kind {
			case "pipes":
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				serverIn, toServer = r, w
				r2, w2, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				fromClient, serverOut = r2, w2
			case "sockets":
				c, s := socketPair(t)
				serverIn, toServer = s, c
				c2, s2 := socketPair(t)
				fromClient, serverOut = c2, s2
			case "one socket":
				c, s := socketPair(t)
				serverIn, serverOut, toServer, fromClient = s, s, c, c
			}
			var stderr strings.Builder
			cmd := exec.Command(binary, "serve", "--builtins", "echo", "--log-level", "warn")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = serverIn, serverOut, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			serverIn.Close()
			serverOut.Close()
			defer toServer.Close()
			defer fromClient.Close()

			const calls = 300
			big := strings.Repeat("x", 20000)
			sent := make(chan error, 1)
			go func() {
				w := bufio.NewWriter(toServer)
				fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				for i := 1; i <= calls; i++ {
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`+"\n", i, big)
				}
				sent <- w.Flush()
			}()
			time.Sleep(time.Second) // let the server's writes back up

			seen := map[int]bool{}
			sc := bufio.NewScanner(fromClient)
			sc.Buffer(nil, 1<<20)
			for len(seen) < calls+1 && sc.Scan() {
				var m struct {
					ID     int             `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Result == nil {
					t.Fatalf("not a result: %.200s (%v)", sc.Text(), err)
				}
				seen[m.ID] = true
			}
			if len(seen) != calls+1 {
				t.Fatalf("%d of %d answers (scan: %v); server stderr:\n%s", len(seen), calls+1, sc.Err(), stderr.String())
			}
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			if kind == "one socket" {
				_ = syscall.Shutdown(int(toServer.(*os.File).Fd()), syscall.SHUT_WR)
			} else {
				toServer.Close()
			}
			if code := waitExit(t, cmd, 20*time.Second); code != 0 {
				t.Errorf("exit status %d, want 0; stderr:\n%s", code, stderr.String())
			}
		})
	}
}
