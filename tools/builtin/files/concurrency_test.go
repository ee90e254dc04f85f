package files_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/files"
)

// appendAll calls file_write with append once for each path in paths, all
// at once, each adding its own line; it returns the calls' errors.
func appendAll(t *testing.T, w tools.Tool, paths []string) []*tools.Error {
	t.Helper()
	errs := make([]*tools.Error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() {
			b, _ := json.Marshal(map[string]any{"path": p, "content": fmt.Sprintf("line %03d\n", i), "append": true})
			errs[i] = tools.Settle(w.Call(context.Background(), b)).Err
		})
	}
	waitFor(t, &wg, "the appends")
	return errs
}

// waitFor waits for wg, and fails the test if that takes more than a
// generous deadline: a call that hangs is the bug, not a slow machine.
func waitFor(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangDeadline):
		t.Fatalf("%s did not return within %v: a call hangs", what, hangDeadline)
	}
}

// hangDeadline is how long a test waits before it calls a call hung.
const hangDeadline = 30 * time.Second

// checkLines says whether file holds exactly lines 0..n-1, once each, in
// any order.
func checkLines(t *testing.T, file string, n int) {
	t.Helper()
	b, err := os.ReadFile(file)
	must(t, err)
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(got)
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("line %03d", i)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s holds %d lines, want %d (line 000 to line %03d, once each)", filepath.Base(file), len(got), n, n-1)
	}
}

func TestConcurrentAppendsAllLand(t *testing.T) {
	const n = 200
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		paths func(i int) string
		file  string
	}{
		{"one path", nil, func(int) string { return "log.txt" }, "log.txt"},
		{"the same file through a symlinked folder", func(t *testing.T, root string) {
			must(t, os.Symlink("sub", filepath.Join(root, "alias")))
		}, func(i int) string { return []string{"sub/log.txt", "alias/log.txt", "./sub//log.txt"}[i%3] }, "sub/log.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, ts := sandbox(t, files.Config{})
			if tt.setup != nil {
				tt.setup(t, root)
			}
			paths := make([]string, n)
			for i := range paths {
				paths[i] = tt.paths(i)
			}
			for i, err := range appendAll(t, ts["file_write"], paths) {
				if err != nil {
					t.Errorf("append %d to %s: %v", i, paths[i], err)
				}
			}
			checkLines(t, filepath.Join(root, tt.file), n)
		})
	}
}

// TestAppendSurvivesFIFOSwap swaps a FIFO and a regular file at one path
// while appends run: an append that opens the path just as the FIFO is
// there must fail, not block waiting for a writer that never comes.
func TestAppendSurvivesFIFOSwap(t *testing.T) {
	root, ts := sandbox(t, files.Config{})
	target := filepath.Join(root, "swap.txt")
	fifo, regular := filepath.Join(root, "fifo.tmp"), filepath.Join(root, "regular.tmp")
	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.WriteFile(regular, []byte("x\n"), 0o644)
			_ = os.Rename(regular, target)
			_ = syscall.Mkfifo(fifo, 0o644)
			_ = os.Rename(fifo, target)
		}
	})
	defer func() { close(stop); swapper.Wait() }()
	const rounds = 300
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range rounds / 4 {
				b, _ := json.Marshal(map[string]any{"path": "swap.txt", "content": "y\n", "append": true})
				_, _ = ts["file_write"].Call(context.Background(), b)
			}
		})
	}
	waitFor(t, &wg, "appends to a path swapped between a file and a FIFO")
}
