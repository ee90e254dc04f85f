package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/typed"
)

type vaultArgs struct {
	User  string `json:"user"`
	Token string `json:"token" secret:"true"`
	Data  string `json:"data"`
}

// TestLogLineBoundedSecret is the line a user sees at INFO for a call of a
// tool with a secret field and 4 MiB of arguments: the arguments in their
// own order, the secret hidden where it stands, cut at LogTruncate
// characters with the bytes not shown counted in the arguments.
func TestLogLineBoundedSecret(t *testing.T) {
	const secret = "s3cret-4242"
	vault := typed.MustNew("vault", "Open the vault.", func(_ context.Context, in vaultArgs) (string, error) {
		return "opened for " + in.User, nil
	})
	reg, err := tools.NewRegistry(vault)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	srv, err := New(reg, Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	args := `{"user":"ann","token":"` + secret + `","data":"` + strings.Repeat("x", 4<<20) + `"}`
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault","arguments":` + args + `}}`)
	f, bad := inspectFrame(msg)
	if bad != nil {
		t.Fatal(bad.msg)
	}
	if _, err := srv.handlers[f.tool](context.Background(), fastRequest(f)); err != nil {
		t.Fatal(err)
	}
	var line struct{ Msg string }
	for l := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, `"tool":"vault"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	head := `{"user":"ann","token":"[hidden]","data":"`
	xs := DefaultLogTruncate - len(head)
	shownBytes := len(`{"user":"ann","token":"`+secret+`","data":"`) + xs
	want := `vault(` + head + strings.Repeat("x", xs) + `…(` + strconv.Itoa(len(args)-shownBytes) + ` more bytes)) -> opened for ann`
	if line.Msg != want {
		t.Errorf("the INFO line is\n%.400s\nwant\n%.400s", line.Msg, want)
	}
	if strings.Contains(logs.String(), secret) {
		t.Error("the secret is logged")
	}
}
