package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
)

// reuseWriter, on the first response written, sends the filter line, as
// a client does that sends its next call as soon as it has read the
// answer.
type reuseWriter struct {
	f       *stdioFilter
	line    []byte
	once    sync.Once
	refused *frameError
}

func (w *reuseWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { _, w.refused = w.f.admit(w.line) })
	return len(p), nil
}

// TestFastPathFreesItsPlaceBeforeAnswering: once the answer to a fast call
// is out, its id and its place among MaxQueuedCalls are free, as they are
// for a call mcp-go runs (freed as its response is written); a client
// that reuses the id, or sends its next call at the limit, the moment it
// reads the answer is not refused.
func TestFastPathFreesItsPlaceBeforeAnswering(t *testing.T) {
	reg, err := tools.NewRegistry(tools.NewPlain(tools.Info{Name: "shout", Description: "Upper-case the input."},
		func(_ context.Context, in string) (tools.Result, error) { return tools.Result{Text: in + "!"}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(reg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(id int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"shout","arguments":{"input":"x"}}}`, id)
	}
	for _, tt := range []struct{ max, next int }{{1, 6}, {16, 5}} { // at the limit; the same id
		max, line := tt.max, call(5)
		w := &reuseWriter{line: call(tt.next)}
		f := &stdioFilter{max: max, cancelled: &cancelledSet{}, fast: newFastPath(s, context.Background(), w)}
		w.f = f
		base := context.Background()
		f.fast.base.Store(&base) // as if mcp-go had registered the session
		f.initialized.Store(true)
		if _, refused := f.admit(line); refused != nil {
			t.Fatal(refused.msg)
		}
		f.fast.wait()
		if w.refused != nil {
			t.Errorf("max %d: the call sent once the first was answered was refused: %d %s", max, w.refused.code, w.refused.msg)
		}
	}
}
