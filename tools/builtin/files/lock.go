package files

import (
	"context"
	"errors"
	"hash/maphash"
	"path"
	"strings"

	"github.com/mcp-tools/mcp-tools/tools"
)

// WriteLockStripes is how many locks serialise file_write calls. Writes to
// the same file always share one; writes to different files share one only
// by chance, which costs parallelism, never correctness. The number is
// fixed, so the locks take the same memory however many paths are written.
const WriteLockStripes = 64

// writeLocks serialises writes to one file: an append reads the old content
// and renames the new over it, and two at once would lose one of them.
//
// A lock is chosen by the file's base name, lower-cased, not by its whole
// path: two paths that reach the same file through a symlinked folder
// (sub/log.txt and alias/log.txt), or that differ only in case on a
// case-insensitive file system, end in the same name and so share a lock.
// Each lock is a channel of capacity one, so a call waiting for it can
// give up when its context ends.
type writeLocks struct {
	seed    maphash.Seed
	stripes [WriteLockStripes]chan struct{}
}

func newWriteLocks() *writeLocks {
	l := &writeLocks{seed: maphash.MakeSeed()}
	for i := range l.stripes {
		l.stripes[i] = make(chan struct{}, 1)
	}
	return l
}

// lock waits for the lock of p, a cleaned path, and returns its unlock. It
// fails only when ctx ends first; the error names shown, the path as the
// model gave it.
func (l *writeLocks) lock(ctx context.Context, p, shown string) (unlock func(), err error) {
	ch := l.stripes[maphash.String(l.seed, strings.ToLower(path.Base(p)))%WriteLockStripes]
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		kind := tools.KindCancelled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			kind = tools.KindTimeout
		}
		return nil, &tools.Error{Kind: kind, Message: "the call ended while waiting for another write to " + quote(shown) + " to finish", Err: ctx.Err()}
	}
}
