// Package earlystack gives the main goroutine a 64 KiB stack before any
// other package initialises, so that its stack is copied once, with five
// frames on it, instead of four times with deep ones.
//
// A goroutine starts with a small stack, and the runtime doubles it by
// copying whenever a call needs more. A copy reads the stack map of every
// frame on the stack, from the binary's function tables; the kernel maps
// 64 KiB of the binary around each page read, and those pages stay
// resident. The main goroutine runs every package initialiser and then
// main: in mcp-tools its stack grew from 2 to 32 KiB in runtime/metrics',
// go.yaml.in/yaml's and santhosh-tekuri/jsonschema's initialisers and in
// the schema compilation of the tools, each copy reading the tables of a
// different deep stack. Growing it here, when only the runtime and this
// package have run, cost the server 0.5 MiB less idle memory and 5–7 ms
// less start-up, measured with bench/mcpbench, alternating spawns of the
// two builds (see the README's Performance section).
//
// The package imports nothing, so it initialises as soon as the runtime's
// own packages have: Go initialises packages in import-path order, each
// after its imports, and this path sorts before every third-party module
// but those under github.com/[A-Za-l]… and before most of the standard
// library. Only the cmd/mcp-tools binary imports it (blank); a program
// that embeds this project's packages decides for itself.
package earlystack

// deep is never true; the compiler cannot know that, so reserve keeps
// its large frame and the stack check on entry grows the stack to fit it.
var deep = false

// frame is reserve's frame size: 40 KiB needs a 64 KiB stack (stacks are
// powers of two and the frame must fit above what is already used).
const frame = 40 << 10

// reserve grows the calling goroutine's stack to 64 KiB without touching
// the memory: the array is only ever zeroed on a path that never runs.
//
//go:noinline
func reserve() byte {
	if deep {
		var buf [frame]byte
		return last(buf[:])
	}
	return 0
}

//go:noinline
func last(b []byte) byte { return b[len(b)-1] }

func init() { reserve() }
