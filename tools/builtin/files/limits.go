package files

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/mcp-tools/mcp-tools/tools"
)

// Length limits of the tools' string arguments, in characters (Unicode code
// points, as JSON Schema's maxLength counts). Each is published as the
// argument's maxLength, so the server's validator refuses a longer value
// before the tool runs, and each tool checks it again first thing, so a
// direct caller is refused as cheaply.
const (
	// MaxPathLength caps the path of file_read, file_write and file_list
	// (Linux's PATH_MAX).
	MaxPathLength = 4096
	// MaxGlobLength caps file_list's glob.
	MaxGlobLength = 256
	// MaxContentLength caps file_write's content: DefaultMaxWriteBytes
	// characters. Config.MaxWriteBytes caps the file's size in bytes on top
	// of it; a MaxWriteBytes above this lets a file grow past it by appends,
	// not in one call.
	MaxContentLength = DefaultMaxWriteBytes
)

// maxShown is the most characters of an argument that an error message
// quotes; a longer one is cut, with an ellipsis and its full length.
const maxShown = 200

// checkLength refuses s, the argument called name, when it is longer than
// max characters. It reads at most 4*max bytes of s: a longer string has
// more than max characters whatever they are.
func checkLength(name, s string, max int) error {
	if len(s) <= max {
		return nil
	}
	if len(s) > utf8.UTFMax*max || utf8.RuneCountInString(s) > max {
		return tools.InvalidArgs("%s is too long: %d bytes, and the limit is %d characters", name, len(s), max)
	}
	return nil
}

// quote returns s quoted like %q, cut to at most maxShown characters of
// quoted text (plus the quotes) and followed by "… (N bytes)" when cut.
func quote(s string) string {
	if len(s) <= maxShown {
		if q := strconv.Quote(s); len(q) <= maxShown+2 {
			return q
		}
	}
	n := min(len(s), maxShown)
	for {
		for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
			n-- // do not cut a character in two
		}
		q := strconv.Quote(s[:n])
		if len(q) <= maxShown+2 {
			return fmt.Sprintf("%s… (%d bytes)", q, len(s))
		}
		n = n * maxShown / len(q) // escapes made it longer: take fewer bytes
	}
}
