package server

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// TestLineLimiterBoundary: a message of exactly max bytes is passed
// whatever ends its line ("\n", "\r\n", or the end of the input), and one
// byte more is refused: the line's end is not part of the message, as an
// HTTP body of max bytes is served. A CRLF line of max bytes used to be
// refused, and a last line of max+1 bytes without a newline passed.
func TestLineLimiterBoundary(t *testing.T) {
	const max = 100
	for _, bufSize := range []int{16, 101, 4096} { // lines read in pieces (101: "\r" and "\n" apart), or whole
		for _, end := range []string{"\n", "\r\n", ""} {
			for _, n := range []int{max, max + 1} {
				msg := strings.Repeat("x", n)
				var oversize int
				var passed []string
				l := &lineLimiter{r: bufio.NewReaderSize(strings.NewReader(msg+end+"ok\n"), bufSize), max: max,
					onOversize: func([]byte, int) { oversize++ },
					onLine:     func(line []byte) bool { passed = append(passed, string(line)); return true }}
				if end == "" {
					l.r = bufio.NewReaderSize(strings.NewReader(msg), bufSize)
				}
				if _, err := io.ReadAll(l); err != nil {
					t.Fatal(err)
				}
				if want := n > max; (oversize == 1) != want || (len(passed) > 0 && strings.TrimRight(passed[0], "\r\n") == msg) == want {
					t.Errorf("buffer %d, %d bytes ended by %q: refused %d times, passed %q; want refused %v", bufSize, n, end, oversize, passed, want)
				}
			}
		}
	}
}
