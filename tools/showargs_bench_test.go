package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
)

// benchShowArgs is the argument display as the server's INFO line takes
// it, at the server's default LogTruncate (200).
func benchShowArgs(b *testing.B, info tools.Info, args json.RawMessage) {
	b.ReportAllocs()
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		if s := tools.ShowArgsN(info, args, 200); len(s) == 0 {
			b.Fatal("nothing shown")
		}
	}
}

// BenchmarkShowArgs: (a) small arguments with a secret field, (b) 4 MiB
// of arguments with a secret field (beside it, and in it), (c) small arguments and no secret.
func BenchmarkShowArgs(b *testing.B) {
	secret := tools.Info{Name: "vault", Secret: []string{"token"}}
	b.Run("small-secret", func(b *testing.B) {
		benchShowArgs(b, secret, json.RawMessage(`{"user":"ann","token":"s3cret","note":"open the vault, please"}`))
	})
	b.Run("4MiB-secret", func(b *testing.B) {
		big := `{"user":"ann","token":"s3cret","data":"` + strings.Repeat("x", 4<<20) + `"}`
		benchShowArgs(b, secret, json.RawMessage(big))
	})
	b.Run("4MiB-in-the-secret", func(b *testing.B) {
		big := `{"user":"ann","token":"` + strings.Repeat("s", 4<<20) + `","note":"open"}`
		benchShowArgs(b, secret, json.RawMessage(big))
	})
	b.Run("small-plain-object", func(b *testing.B) {
		benchShowArgs(b, tools.Info{Name: "echo"}, json.RawMessage(`{"user":"ann","note":"open the vault, please"}`))
	})
}
