package state_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcp-tools/mcp-tools/state"
	"github.com/mcp-tools/mcp-tools/state/statetest"
)

func TestMemoryConformance(t *testing.T) {
	statetest.Run(t, func(*testing.T) state.Store { return state.NewMemory() })
}

func TestShared(t *testing.T) {
	tests := []struct {
		name  string
		store state.Store
		want  bool
	}{
		{"memory", state.NewMemory(), false},
		{"other", struct{ state.Store }{state.NewMemory()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := state.Shared(tt.store); got != tt.want {
				t.Errorf("Shared: got %v, want %v", got, tt.want)
			}
		})
	}
}

func BenchmarkMemory(b *testing.B) {
	ctx := context.Background()
	m := state.NewMemory()
	keys, counters := make([]string, 1024), make([]string, 1024)
	for i := range keys {
		keys[i], counters[i] = fmt.Sprintf("key-%d", i), fmt.Sprintf("budget-%d", i)
		if err := m.Set(ctx, keys[i], []byte("a session record"), 0); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Take", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := m.Take(ctx, counters[i%len(counters)], 1<<62, 0); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	})
	b.Run("Get", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := m.Get(ctx, keys[i%len(keys)], 0); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	})
}
