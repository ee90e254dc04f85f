package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/server"
)

// TestFleetSessionOwnerOnEveryReplica: in a fleet, a session is another
// token's (404) on every replica and every method, including a replica that
// has not served it yet; a GET stream naming an unknown session is 404 there
// too, and the owner's own GET is served by a replica that takes it over.
func TestFleetSessionOwnerOnEveryReplica(t *testing.T) {
	for _, st := range fleetStores {
		t.Run(st.name, func(t *testing.T) {
			f := startFleet(t, 2, st.open(t), server.Options{BearerTokens: []string{"tok-A", "tok-B"}})
			resp := rawPost(t, f.replicas[0]+"/mcp", initBody, map[string]string{"Authorization": "Bearer tok-A"})
			id := resp.Header.Get("Mcp-Session-Id")
			if id == "" {
				t.Fatal("no session id")
			}
			for _, m := range []string{"GET", "POST", "DELETE"} {
				for i, r := range f.replicas {
					req, _ := http.NewRequest(m, r+"/mcp", strings.NewReader(pingBody))
					req.Header.Set("Authorization", "Bearer tok-B")
					req.Header.Set("Mcp-Session-Id", id)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusNotFound {
						t.Errorf("%s on replica %d with another token: status %d, want 404", m, i, resp.StatusCode)
					}
				}
			}
			for i, r := range f.replicas {
				resp := rawPost(t, r+"/mcp", pingBody, map[string]string{"Authorization": "Bearer tok-A", "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
				if resp.StatusCode != http.StatusOK {
					t.Errorf("the owner's ping on replica %d: status %d, want 200", i, resp.StatusCode)
				}
			}
			r := getStream(t, f.replicas[1], map[string]string{"Authorization": "Bearer tok-A", "Mcp-Session-Id": "nope"})
			if r.StatusCode != http.StatusNotFound {
				t.Errorf("GET naming an unknown session: status %d, want 404", r.StatusCode)
			}
			r = getStream(t, f.replicas[1], map[string]string{"Authorization": "Bearer tok-A", "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
			if r.StatusCode != http.StatusOK {
				t.Errorf("the owner's GET on replica 1: status %d, want 200", r.StatusCode)
			}
		})
	}
}
