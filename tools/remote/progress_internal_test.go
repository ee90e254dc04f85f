package remote

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-tools/mcp-tools/tools"
)

func TestCoalescer(t *testing.T) {
	type step struct {
		after time.Duration // wait before the step
		add   float64       // a report to add; 0: none
		close bool          // close the coalescer
	}
	tests := []struct {
		name  string
		steps []step
		want  string // the reports delivered, with their times
	}{
		{"first goes out at once", []step{{add: 1}}, "1@0s"},
		{"a burst: first at once, last at its turn", []step{{add: 1}, {add: 2}, {add: 3}, {after: time.Second}}, "1@0s 3@200ms"},
		{"spaced reports all go out", []step{{add: 1}, {after: 300 * time.Millisecond, add: 2}, {after: 300 * time.Millisecond, add: 3}}, "1@0s 2@300ms 3@600ms"},
		{"close delivers the waiting one", []step{{add: 1}, {add: 2}, {after: 50 * time.Millisecond, close: true}, {after: time.Second}}, "1@0s 2@50ms"},
		{"nothing after close", []step{{add: 1}, {close: true}, {add: 2}, {after: time.Second}}, "1@0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var got []string
				ctx := tools.WithProgress(context.Background(), func(p, _ float64, _ string) {
					got = append(got, fmt.Sprintf("%g@%s", p, time.Since(start)))
				})
				c := &coalescer{ctx: ctx}
				for _, s := range tt.steps {
					time.Sleep(s.after)
					synctest.Wait()
					switch {
					case s.close:
						c.close()
					case s.add != 0:
						c.add(progress{value: s.add})
					}
				}
				c.close()
				if fmt.Sprint(got) != "["+tt.want+"]" {
					t.Errorf("got %v, want [%s]", got, tt.want)
				}
			})
		})
	}

	// A flood over 10 seconds gives at most one report per interval.
	synctest.Test(t, func(t *testing.T) {
		n := 0
		var last float64
		c := &coalescer{ctx: tools.WithProgress(context.Background(), func(p, _ float64, _ string) { n++; last = p })}
		for i := range 10_000 {
			c.add(progress{value: float64(i + 1)})
			time.Sleep(time.Millisecond)
		}
		c.close()
		if limit := 2 + int(10*time.Second/ProgressInterval); n > limit || last != 10_000 {
			t.Errorf("got %d reports ending at %g, want at most %d ending at 10000", n, last, limit)
		}
	})

	// A cancelled call gets no report at close.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		c := &coalescer{ctx: tools.WithProgress(ctx, func(float64, float64, string) { n++ })}
		c.add(progress{value: 1})
		c.add(progress{value: 2})
		cancel()
		c.close()
		if n != 1 {
			t.Errorf("got %d reports, want only the first: the call was cancelled", n)
		}
	})
}
