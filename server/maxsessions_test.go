package server_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-tools/mcp-tools/server"
)

// With MaxSessions 2 and no session open, two initializes at once must
// both succeed.
func TestMaxSessionsCountsAnOpeningSessionOnce(t *testing.T) {
	url := startHTTP(t, server.TransportHTTP, server.Options{MaxSessions: 2})
	hc := &http.Client{Transport: soakClientTransport(4)}
	var refused atomic.Int64
	const rounds = 100
	for range rounds {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				c := &soakHTTPClient{hc: hc, url: url + server.PathMCP, streams: new(atomic.Int64)}
				_, status, err := c.post(initBody)
				if err != nil {
					t.Error(err)
					return
				}
				if status == http.StatusServiceUnavailable {
					refused.Add(1)
					return
				}
				if st, err := c.delete(); err != nil || st != 200 {
					t.Errorf("delete %d %v", st, err)
				}
			})
		}
		wg.Wait()
	}
	if n := refused.Load(); n != 0 {
		t.Errorf("got %d of %d initializes refused with 503, want 0: never more than 2 sessions were open", n, 2*rounds)
	}
}
