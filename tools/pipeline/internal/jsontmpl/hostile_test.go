package jsontmpl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl"
)

// The regression tests of a review that found templates and data which got
// past the limits: each input hung, crashed or exhausted the process
// before the fix. Each now stops at a limit at once.

// execute parses and runs text on d, and returns the error and the bytes
// the execution allocated.
func execute(t *testing.T, text string, d jsontmpl.Data) (error, uint64) {
	t.Helper()
	tmpl, err := jsontmpl.Parse("adapter", text)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err = tmpl.Execute(t.Context(), io.Discard, d)
	runtime.ReadMemStats(&after)
	return err, after.TotalAlloc - before.TotalAlloc
}

// wantLimit fails t unless err wraps a *LimitError for limit.
func wantLimit(t *testing.T, err error, limit string) {
	t.Helper()
	le, ok := errors.AsType[*jsontmpl.LimitError](err)
	if !ok {
		t.Fatalf("got error %v; want a *LimitError", err)
	}
	if le.Limit != limit {
		t.Errorf("got limit %q (%v); want %q", le.Limit, err, limit)
	}
}

// TestHostileNesting: ifs around a recursive call overflowed the
// goroutine's stack (1 GB) before MaxDepth counted 1000 calls: a fatal
// error no recover catches. The child process runs it, so that a crash
// fails the test rather than ending it.
func TestHostileNesting(t *testing.T) {
	const n = 1500 // 22 KB of template text
	text := `{{define "r"}}` + strings.Repeat("{{if 1}}", n) + `{{template "r"}}` + strings.Repeat("{{end}}", n) + `{{end}}{{template "r"}}`
	if os.Getenv("JSONTMPL_NESTING_CHILD") == "1" {
		err, _ := execute(t, text, jsontmpl.Data{})
		wantLimit(t, err, "depth")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileNesting$", "-test.count=1")
	cmd.Env = append(os.Environ(), "JSONTMPL_NESTING_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		i := max(bytes.Index(out, []byte("fatal error")), 0)
		t.Fatalf("the child running a %d-byte template: %v: %.300s", len(text), err, out[i:])
	}
}

// TestDepthStack: at MaxDepth, the nestings that take the most stack per
// frame stay far from Go's 1 GB maximum.
func TestDepthStack(t *testing.T) {
	wrap := func(open, close string, n int, inner string) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	const maxStack = 64 << 20
	for _, tt := range []struct{ name, text string }{
		{"ranges around a recursive call", `{{define "r"}}` + wrap("{{range 1}}", "{{end}}", 100, `{{template "r"}}`) + `{{end}}{{template "r"}}`},
		{"parentheses", "{{" + wrap("(", ")", 9000, "1") + "}}"},
		{"calls in parentheses", "{{if " + wrap("(slice ", " 0)", 6000, ".Text") + "}}{{end}}"},
		{"chains in parentheses", "{{" + wrap("((", ").Text)", 4000, ".") + "}}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := jsontmpl.Parse("adapter", tt.text)
			if err != nil {
				t.Fatal(err)
			}
			// A new goroutine's stack grows to what the execution needed
			// and stays so until a garbage collection shrinks it.
			stack := make(chan uint64)
			go func() {
				var ms runtime.MemStats
				tmpl.Execute(t.Context(), io.Discard, jsontmpl.Data{Text: "abc"})
				runtime.ReadMemStats(&ms)
				stack <- ms.StackInuse
			}()
			if got := <-stack; got > maxStack {
				t.Errorf("got %d MB of stack in use; want at most %d MB", got>>20, maxStack>>20)
			}
		})
	}
}

// TestHostileMadeBytes: functions made their strings before MaxMadeBytes
// was checked: printf's widths and precisions, and a document printed a
// hundred times, made gigabytes first. Now each call checks an upper bound
// first, and the execution allocates a small part of what it would have.
func TestHostileMadeBytes(t *testing.T) {
	doc := map[string]any{}
	for i := range 20000 {
		doc[fmt.Sprintf("key%06d", i)] = strings.Repeat("v", 50)
	}
	items := make([]any, 100)
	for i := range items {
		items[i] = "x"
	}
	tests := []struct {
		name string
		text string
		data jsontmpl.Data
	}{
		{"widths", `{{printf "` + strings.Repeat("%9999999d", 30) + `" ` + strings.Repeat("0 ", 30) + `}}`, jsontmpl.Data{}},
		{"precisions", `{{printf "` + strings.Repeat("%.9999999f", 30) + `" ` + strings.Repeat("1.5 ", 30) + `}}`, jsontmpl.Data{}},
		{"star widths", `{{printf "` + strings.Repeat("%*d", 30) + `" ` + strings.Repeat("1000000 0 ", 30) + `}}`, jsontmpl.Data{}},
		{"one operand printed by many verbs", `{{printf "` + strings.Repeat("%[1]v", 5000) + `" .Text}}`, jsontmpl.Data{Text: strings.Repeat("a", 100000)}},
		{"widths in a loop", `{{range 100}}{{printf "%9999999d" 0}}{{end}}`, jsontmpl.Data{}},
		{"a width applied to each element", `{{printf "%999999v" .Structured}}`, jsontmpl.Data{Structured: items}},
		{"hex of each byte", `{{range 100}}{{$x := printf "% #x" $.Text}}{{end}}`, jsontmpl.Data{Text: strings.Repeat("a", 1<<20)}},
		{"copies of a document", `{{print ` + strings.Repeat(".Structured ", 100) + `}}`, jsontmpl.Data{Structured: doc}},
		{"copies of a document by println", `{{println ` + strings.Repeat(".Structured ", 100) + `}}`, jsontmpl.Data{Structured: doc}},
		{"escaped copies of a document", `{{html ` + strings.Repeat(".Structured ", 100) + `}}`, jsontmpl.Data{Structured: doc}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err, n := execute(t, tt.text, tt.data)
			wantLimit(t, err, "made bytes")
			if n > 8*jsontmpl.MaxMadeBytes {
				t.Errorf("allocated %d MB; want at most %d MB (8×MaxMadeBytes: fmt grows its buffer by doubling)", n>>20, 8*jsontmpl.MaxMadeBytes>>20)
			}
		})
	}
}

// TestHostileSteps: arguments, fields of a chain and string comparisons
// cost no steps: 2×10^8 argument evaluations ran for a minute, and 10^5
// comparisons of 1 MB strings for longer.
func TestHostileSteps(t *testing.T) {
	long := strings.Repeat("a", 1<<20)
	tests := []struct {
		name string
		text string
		data jsontmpl.Data
	}{
		{"arguments", `{{range 100000}}{{and ` + strings.Repeat("1 ", 2000) + `}}{{end}}`, jsontmpl.Data{}},
		{"fields of a chain", `{{range 1000000}}{{$.Structured` + strings.Repeat(".a", 1000) + `}}{{end}}`, jsontmpl.Data{Structured: chain(1000)}},
		{"string comparisons", `{{$a := .Text}}{{$b := printf "%sb" (slice .Text 1)}}{{range 100000}}{{if eq $a $b}}{{end}}{{end}}`, jsontmpl.Data{Text: long}},
		{"ordering of strings", `{{$b := printf "%sb" (slice .Text 1)}}{{range 100000}}{{if lt $.Text $b}}{{end}}{{end}}`, jsontmpl.Data{Text: long}},
		{"variables far down", `{{$x := 1}}` + strings.Repeat(`{{$y := 1}}`, 5000) + `{{range 1000000}}{{$x}}{{end}}`, jsontmpl.Data{}},
		{"measuring a document", `{{range 100000}}{{$x := printf "%.0s" $.Structured}}{{end}}`, jsontmpl.Data{Structured: emptyStrings(10000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err, _ := execute(t, tt.text, tt.data)
			wantLimit(t, err, "steps")
		})
	}
}

// emptyStrings is n empty strings.
func emptyStrings(n int) []any {
	a := make([]any, n)
	for i := range a {
		a[i] = ""
	}
	return a
}

// chain is n maps, each the value of the key "a" of the one around it.
func chain(n int) any {
	var v any = "end"
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

// TestMadeBytesErrorContext: the made-bytes error pointed at printf's last
// argument instead of the call.
func TestMadeBytesErrorContext(t *testing.T) {
	err, _ := execute(t, `{{printf "%9999999d%9999999d" 7 8}}`, jsontmpl.Data{})
	want := `template: adapter:1:2: executing "adapter" at <printf "%9999999d%9999999d" 7 8>: functions made more than 16777216 bytes of strings`
	if err == nil || err.Error() != want {
		t.Errorf("got error %v; want %s", err, want)
	}
}

// TestParseTooLong: a 10 MB template of nested ifs crashed the parser;
// Parse refuses a text longer than MaxTemplateBytes.
func TestParseTooLong(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		wantErr string
	}{
		{"nested ifs", strings.Repeat("{{if 1}}", 700000) + strings.Repeat("{{end}}", 700000), "template: adapter: the text is 10500000 bytes long; the most allowed is 65536"},
		{"one byte too long", strings.Repeat("x", jsontmpl.MaxTemplateBytes+1), "template: adapter: the text is 65537 bytes long; the most allowed is 65536"},
		{"at the limit", strings.Repeat("x", jsontmpl.MaxTemplateBytes), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jsontmpl.Parse("adapter", tt.text)
			if got := fmt.Sprint(err); tt.wantErr == "" && err != nil || tt.wantErr != "" && got != tt.wantErr {
				t.Errorf("got error %v; want %q", err, tt.wantErr)
			}
		})
	}
}

// TestWithinLimits: a template over a document of a few megabytes renders
// with every limit in place: 40,000 items, two fields of each, by printf.
func TestWithinLimits(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`{"items": [`)
	for i := range 40000 {
		if i > 0 {
			doc.WriteString(",")
		}
		fmt.Fprintf(&doc, `{"name": "item%05d", "qty": %d, "note": "%s"}`, i, i%1000, strings.Repeat("n", 60))
	}
	doc.WriteString("]}")
	if doc.Len() < 3<<20 {
		t.Fatalf("the document is %d bytes; want a few MB", doc.Len())
	}
	v, err := decode([]byte(doc.String()))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := jsontmpl.Parse("adapter", `{{range .Structured.items}}{{printf "%-10s %5d" .name .qty.Int64}}
{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(t.Context(), &out, jsontmpl.Data{Structured: v}); err != nil {
		t.Fatalf("got error %v; want none", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 40000 || lines[39999] != "item39999    999" {
		t.Errorf("got %d lines ending in %q; want 40000 ending in %q", len(lines), lines[len(lines)-1], "item39999    999")
	}
}

// cancelingWriter cancels a context at its first write.
type cancelingWriter struct {
	cancel context.CancelFunc
	n      int
}

func (w *cancelingWriter) Write(p []byte) (int, error) {
	w.cancel()
	w.n += len(p)
	return len(p), nil
}

// TestExecuteCanceled: an execution stops soon after its context is done.
func TestExecuteCanceled(t *testing.T) {
	tmpl, err := jsontmpl.Parse("adapter", `{{range 1000000}}x{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var out bytes.Buffer
		if err := tmpl.Execute(ctx, &out, jsontmpl.Data{}); !errors.Is(err, context.Canceled) || out.Len() != 0 {
			t.Errorf("got error %v and %d bytes; want context.Canceled and none", err, out.Len())
		}
	})
	t.Run("during", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		w := &cancelingWriter{cancel: cancel}
		err := tmpl.Execute(ctx, w, jsontmpl.Data{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got error %v; want one wrapping context.Canceled", err)
		}
		// An iteration takes 3 steps; the context is checked every 1024.
		if w.n == 0 || w.n > 1024 {
			t.Errorf("wrote %d bytes after the cancellation; want 1 to 1024", w.n)
		}
		if !strings.HasPrefix(err.Error(), `template: adapter:1:`) {
			t.Errorf("got error %q; want one that reads like template: adapter:1:...", err)
		}
	})
}
