package files_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/files"
)

func TestCallsAfterCloseFail(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644))
	sb, err := files.Open(files.Config{Root: root})
	must(t, err)
	ts := sb.Tools()
	if r := call(t, ts[0], map[string]any{"path": "a.txt"}); r.Err != nil {
		t.Fatalf("read before Close: %v", r.Err)
	}
	must(t, sb.Close())
	if err := sb.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	tests := []struct {
		tool int
		args map[string]any
	}{
		{0, map[string]any{"path": "a.txt"}},
		{1, map[string]any{"path": "a.txt", "content": "b\n", "append": true}},
		{1, map[string]any{"path": "new.txt", "content": "b\n"}},
		{2, map[string]any{}},
	}
	for _, tt := range tests {
		name := ts[tt.tool].Info().Name
		t.Run(name, func(t *testing.T) {
			r := call(t, ts[tt.tool], tt.args)
			if r.Err == nil {
				t.Fatalf("%s %v after Close succeeded: %q", name, tt.args, r.Text)
			}
			if r.Err.Kind != tools.KindExecutionFailed || !errors.Is(r.Err, os.ErrClosed) || !strings.Contains(r.Err.Message, "closed") {
				t.Errorf("%s after Close: %s %q (cause %v), want execution_failed saying closed, wrapping os.ErrClosed", name, r.Err.Kind, r.Err.Message, r.Err.Err)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "a\n" {
		t.Errorf("a.txt after writes to a closed sandbox = %q, want %q", b, "a\n")
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a write after Close created a file: %v", err)
	}
}

// TestCloseDuringAppends closes the sandbox while appends run: each append
// either lands or fails as closed, none is lost half-way, and none leaves
// its temporary file behind.
func TestCloseDuringAppends(t *testing.T) {
	root := t.TempDir()
	sb, err := files.Open(files.Config{Root: root})
	must(t, err)
	w := sb.Tools()[1]
	const n = 100
	var landed, refused atomic.Int32
	started := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			started <- struct{}{}
			b, _ := json.Marshal(map[string]any{"path": "log.txt", "content": fmt.Sprintf("line %03d\n", i), "append": true})
			r := tools.Settle(w.Call(context.Background(), b))
			switch {
			case r.Err == nil:
				landed.Add(1)
			case errors.Is(r.Err, os.ErrClosed):
				refused.Add(1)
			default:
				t.Errorf("append %d: %v, want success or closed", i, r.Err)
			}
		})
	}
	for range n / 4 {
		<-started
	}
	must(t, sb.Close())
	waitFor(t, &wg, "appends racing Close")
	if got := landed.Load() + refused.Load(); got != n {
		t.Errorf("%d appends landed or were refused, want %d", got, n)
	}
	b, _ := os.ReadFile(filepath.Join(root, "log.txt"))
	if got := int32(strings.Count(string(b), "\n")); got != landed.Load() {
		t.Errorf("log.txt holds %d lines, want %d (one per append that reported success)", got, landed.Load())
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind by Close: %s", e.Name())
		}
	}
}
