package files_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcp-tools/mcp-tools/tools/builtin/files"
)

// Open makes the tools; whoever serves them closes the Sandbox at shutdown.
func ExampleOpen() {
	root, _ := os.MkdirTemp("", "files-example")
	defer os.RemoveAll(root)
	_ = os.WriteFile(filepath.Join(root, "todo.txt"), []byte("buy milk\n"), 0o644)

	sb, err := files.Open(files.Config{Root: root})
	if err != nil {
		fmt.Println(err)
		return
	}
	read := sb.Tools()[0]
	res, _ := read.Call(context.Background(), []byte(`{"path":"todo.txt"}`))
	fmt.Println(res.Text)

	_ = sb.Close()
	_, err = read.Call(context.Background(), []byte(`{"path":"todo.txt"}`))
	fmt.Println(err)
	// Output:
	// {"path":"todo.txt","content":"buy milk\n","size":9,"offset":0,"bytes":9,"truncated":false}
	// the file tools are closed
}
