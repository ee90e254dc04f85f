package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-tools/mcp-tools/server"
	"github.com/mcp-tools/mcp-tools/tools"
)

// fastAndSlow serves tools/call params over streamable HTTP twice: as they
// are (a plain call the fast path answers) and with one more parameter
// (which leaves the call to mcp-go's handler), and returns both JSON-RPC
// answers, without their ids, and the HTTP statuses.
type fastAndSlow struct {
	h       http.Handler
	session string
}

func newFastAndSlow(t testing.TB) *fastAndSlow {
	t.Helper()
	reg, err := tools.NewRegistry(testTools()...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(reg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.StreamableHTTPHandler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httpReq(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`, ""))
	fs := &fastAndSlow{h: h, session: rec.Header().Get(mcp.HeaderSessionID)}
	if fs.session == "" {
		t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	h.ServeHTTP(httptest.NewRecorder(), httpReq(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, fs.session))
	return fs
}

func httpReq(body, session string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	r.Host = "127.0.0.1"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		r.Header.Set(mcp.HeaderSessionID, session)
		r.Header.Set(mcp.HeaderProtocolVersion, "2025-06-18")
	}
	return r
}

// answer sends one message and returns its answer without the id (nil for
// none) and the HTTP status.
func (fs *fastAndSlow) answer(body string) (map[string]any, int) {
	rec := httptest.NewRecorder()
	fs.h.ServeHTTP(rec, httpReq(body, fs.session))
	m := lastMessage(rec.Body.Bytes())
	delete(m, "id")
	return m, rec.Code
}

func (fs *fastAndSlow) both(id, params string) (fast, slow map[string]any, fastStatus, slowStatus int) {
	fast, fastStatus = fs.answer(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s}}`, id, params))
	slow, slowStatus = fs.answer(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s,"x-slow":true}}`, id, params))
	return
}

func TestHTTPFastPathAnswersAsMCPGo(t *testing.T) {
	fs := newFastAndSlow(t)
	for i, params := range append(slices.Clone(sameAnswerCalls),
		`"name":"nope","arguments":{}`,
		`"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":"p1"}`,
	) {
		fast, slow, fastStatus, slowStatus := fs.both(fmt.Sprint(i+1), params)
		if fast == nil || !reflect.DeepEqual(fast, slow) || fastStatus != slowStatus {
			t.Errorf("params {%s}:\nfast path: %d %v\nmcp-go:    %d %v", params, fastStatus, fast, slowStatus, slow)
		}
	}
}

// FuzzHTTPFastPath: for any well-formed tools/call, the streamable HTTP
// fast path answers exactly as mcp-go's handler does.
func FuzzHTTPFastPath(f *testing.F) {
	fs := newFastAndSlow(f)
	for _, seed := range []string{
		`"name":"echo","arguments":{"text":"hi"}`,
		`"name":"add","arguments":{"a":1,"b":2}`,
		`"name":"add","arguments":{"a":1e400,"b":2}`,
		`"name":"shout","arguments":{"input":""}`,
		`"name":"fail"`,
		`"name":"echo","arguments":{"text":"x","extra":[1,{"y":null}]},"_meta":{"k":"v"}`,
		`"name":"echo","arguments":{"text":"x"},"_meta":{"k":1e400}`, // mcp-go: unparsable
	} {
		f.Add("7", seed)
	}
	f.Fuzz(func(t *testing.T, id, params string) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s}}`, id, params)
		if !json.Valid([]byte(body)) || bytes.Contains([]byte(params), []byte("x-slow")) {
			return
		}
		var probe struct {
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(body), &probe) != nil || probe.Params.Name == "whoami" || probe.Params.Name == "sleep" || probe.Params.Name == "flood" {
			return // answers that differ between two calls, or take long
		}
		fast, slow, fastStatus, slowStatus := fs.both(id, params)
		if fast["result"] == nil && slow["result"] == nil {
			return // refused before any call (both paths' errors are mcp-go's or the guard's)
		}
		if differOnPurpose(params, fast, slow) {
			return
		}
		if !reflect.DeepEqual(fast, slow) || fastStatus != slowStatus {
			t.Errorf("%s\nfast path: %d %v\nmcp-go:    %d %v", body, fastStatus, fast, slowStatus, slow)
		}
	})
}

// TestHTTPFastPathKeepsSessionsAlive: a session used only by calls the
// fast path could answer is not ended as idle by mcp-go's sweeper, and
// one left alone still is.
func TestHTTPFastPathKeepsSessionsAlive(t *testing.T) {
	reg, _ := tools.NewRegistry(testTools()...)
	base := serveRegistry(t, reg, server.TransportHTTP, server.Options{SessionIdleTimeout: 2 * time.Second})
	busy := openFleetSession(t, base, false)
	idle := openFleetSession(t, base, false)
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		if res, status := busy.call(base, "echo", map[string]any{"text": "x"}); status != http.StatusOK || text(res) != "x" {
			t.Fatalf("a session in use was ended: HTTP %d %v", status, res)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if _, status := idle.call(base, "echo", map[string]any{"text": "x"}); status != http.StatusNotFound {
		t.Errorf("a session idle for 6s with a 2s timeout: HTTP %d, want 404", status)
	}
}

// TestHTTPFastPathCancelled: notifications/cancelled cancels a call the
// fast path runs, as it does one mcp-go runs (the answer is then the
// cancelled result, on both paths). The fast path's calls were not known
// to mcp-go's table of calls in flight, and ran on to their end.
func TestHTTPFastPathCancelled(t *testing.T) {
	fs := newFastAndSlow(t)
	for i, extra := range []string{"", `,"x-slow":true`} {
		id := fmt.Sprintf(`"c%d"`, i)
		done := make(chan map[string]any, 1)
		go func() {
			m, _ := fs.answer(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"sleep","arguments":{"millis":60000}` + extra + `}}`)
			done <- m
		}()
		deadline := time.After(20 * time.Second)
		for answered := false; !answered; {
			// Sent until the call ends: one sent before the call starts
			// cancels nothing.
			if _, status := fs.answer(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`); status != http.StatusAccepted {
				t.Fatalf("notifications/cancelled: HTTP %d", status)
			}
			select {
			case m := <-done:
				answered = true
				if r, _ := m["result"].(map[string]any); r == nil || r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "cancelled") {
					t.Errorf("slow %v: answer %v, want the cancelled result", extra != "", m)
				}
			case <-deadline:
				t.Fatalf("slow %v: the call was not cancelled", extra != "")
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
