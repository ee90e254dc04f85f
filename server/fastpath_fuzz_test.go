package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/server"
)

// pipeSession is one initialized stdio session of ServeStdio over pipes,
// answering one request at a time.
type pipeSession struct {
	in  io.Writer
	out *bufio.Reader
}

func startPipeSession(tb testing.TB) *pipeSession {
	tb.Helper()
	srv := newServer(tb, server.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = srv.ServeStdio(ctx, inR, outW); close(served) }()
	tb.Cleanup(func() {
		cancel()
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-served
	})
	s := &pipeSession{in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
	s.ask(tb, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`, `"init"`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		tb.Fatal(err)
	}
	return s
}

// ask sends one line and returns the answer whose id is id (raw JSON),
// skipping notifications; it fails after 10 s without one.
func (s *pipeSession) ask(tb testing.TB, line, id string) map[string]any {
	tb.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		tb.Fatal(err)
	}
	type read struct {
		m   map[string]any
		err error
	}
	got := make(chan read, 1)
	go func() {
		for {
			l, err := s.out.ReadBytes('\n')
			if err != nil {
				got <- read{err: err}
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(l, &m); err != nil {
				got <- read{err: fmt.Errorf("not JSON: %q", l)}
				return
			}
			if m.Method != "" {
				continue // a notification
			}
			if string(m.ID) != id {
				got <- read{err: fmt.Errorf("got an answer for %s, want %s: %s", m.ID, id, l)}
				return
			}
			var all map[string]any
			got <- read{m: all, err: json.Unmarshal(l, &all)}
			return
		}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			tb.Fatal(r.err)
		}
		return r.m
	case <-time.After(10 * time.Second):
		tb.Fatalf("no answer to %s within 10 s", line)
		return nil
	}
}

// FuzzStdioFastPath: for any well-formed tools/call, the stdio fast path
// answers exactly as mcp-go's path does. Each call is made twice on one
// session: as it is, which the fast path takes, and with an extra member
// in params ("x-slow"), which leaves it to mcp-go.
func FuzzStdioFastPath(f *testing.F) {
	s := startPipeSession(f)
	for _, seed := range append(sameAnswerCalls,
		`"name":"add","arguments":{"a":1e400,"b":2}`,
		`"name":"echo","arguments":{"text":"x","extra":[1,{"y":null}]},"_meta":{"k":"v"}`,
		`"name":"whoami"`,
		`"name":"login","arguments":{"user":"ann","password":"p"}`,
		`"arguments":{},"name":"fail"`,
		`"name":"add","arguments":{"0":0e700,"":0}`, // found by the fuzzer (differOnPurpose)
		`"name":"add","arguments":{"a":1e-700,"b":1}`,
		`"name":"echo","arguments":{"text":"x"},"_meta":{"k":1e400}`,              // mcp-go: unparsable
		`"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":-1e400}`, // mcp-go: unparsable
	) {
		f.Add(seed)
	}
	n := 0
	f.Fuzz(func(t *testing.T, params string) {
		var compact bytes.Buffer
		if json.Compact(&compact, []byte("{"+params+"}")) != nil || strings.Contains(params, "x-slow") {
			return // not one object, or already marked
		}
		var probe struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(compact.Bytes(), &probe)
		switch probe.Name {
		case "sleep", "flood", "big", "goexit":
			return // slow, unbounded, or ends its goroutine (its own tests)
		}
		n++
		inner := compact.String()[1 : compact.Len()-1]
		fastID, slowID := fmt.Sprintf(`"fast-%d"`, n), fmt.Sprintf(`"slow-%d"`, n)
		slowParams := `"x-slow":true`
		if inner != "" {
			slowParams = inner + "," + slowParams
		}
		fast := s.ask(t, `{"jsonrpc":"2.0","id":`+fastID+`,"method":"tools/call","params":{`+inner+`}}`, fastID)
		slow := s.ask(t, `{"jsonrpc":"2.0","id":`+slowID+`,"method":"tools/call","params":{`+slowParams+`}}`, slowID)
		delete(fast, "id")
		delete(slow, "id")
		if differOnPurpose(inner, fast, slow) {
			return
		}
		if !reflect.DeepEqual(fast, slow) {
			fj, _ := json.Marshal(fast)
			sj, _ := json.Marshal(slow)
			t.Errorf("params {%s}:\nfast path: %s\nmcp-go:    %s", inner, fj, sj)
		}
	})
}

// differOnPurpose reports whether the fast path's answer and mcp-go's to
// the call with params (the members of params, without the braces) differ
// in the one way they are meant to: the arguments hold a number past
// float64 (1e400), which mcp-go cannot decode, so it answers a protocol
// error ("unparsable"), where the fast path tells the model why the
// arguments are invalid. (Numbers beyond the literal limits that float64
// holds rounded, 0e700 or 1e-700, are refused alike on both paths: both
// validate the bytes.)
//
// It holds only when the arguments really have such a number: the fast
// path's own message is no evidence.
func differOnPurpose(params string, fast, slow map[string]any) bool {
	r, _ := fast["result"].(map[string]any)
	if r["isError"] != true {
		return false
	}
	e, _ := slow["error"].(map[string]any)
	return e != nil && strings.Contains(fmt.Sprint(e["message"]), "unparsable") && pastFloat64(params)
}

// pastFloat64 reports whether params.arguments hold a number past
// float64.
func pastFloat64(params string) bool {
	d := json.NewDecoder(strings.NewReader("{" + params + "}"))
	d.UseNumber()
	var p struct {
		Arguments any `json:"arguments"`
	}
	if d.Decode(&p) != nil {
		return false
	}
	var past func(any) bool
	past = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				if past(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if past(e) {
					return true
				}
			}
		case json.Number:
			_, err := strconv.ParseFloat(string(v), 64)
			return err != nil
		}
		return false
	}
	return past(p.Arguments)
}
