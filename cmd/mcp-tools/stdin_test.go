package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOneSocketBothWays: a client that hands the server one socket as both
// stdin and stdout (as inetd does) gets every answer, even when it reads
// nothing until the server's writes have backed up: stdin is then left
// blocking, because making it pollable would make the writes to stdout
// fail with EAGAIN once the socket is full.
func TestOneSocketBothWays(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	client, server := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "server")
	defer client.Close()
	var stderr strings.Builder
	cmd := exec.Command(binary, "serve", "--builtins", "echo", "--log-level", "warn")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = server, server, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	server.Close()

	const calls = 300
	big := strings.Repeat("x", 20000) // 300 answers of 20 kB: far more than the socket holds
	sent := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(client)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i := 1; i <= calls; i++ {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`+"\n", i, big)
		}
		sent <- w.Flush()
	}()
	time.Sleep(time.Second) // let the server's writes back up

	seen := map[int]bool{}
	sc := bufio.NewScanner(client)
	sc.Buffer(nil, 1<<20)
	_ = client.SetReadDeadline(time.Now().Add(60 * time.Second))
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
	_ = syscall.Shutdown(fds[0], syscall.SHUT_WR)
	if code := waitExit(t, cmd, 20*time.Second); code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", code, stderr.String())
	}
}
