package builtin_test

import (
	"slices"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools/builtin"
)

// TestNamesAreCopies: All and Gated hand out fresh slices, so no caller can
// change which built-ins exist or which are gated for anyone else.
func TestNamesAreCopies(t *testing.T) {
	tests := []struct {
		name string
		list func() []string
		want string
	}{
		{name: "All", list: builtin.All, want: "calculator"},
		{name: "Gated", list: builtin.Gated, want: "file_write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.list()
			if !slices.Contains(got, tt.want) {
				t.Fatalf("%s() = %q, want it to contain %q", tt.name, got, tt.want)
			}
			for i := range got {
				got[i] = "changed"
			}
			if again := tt.list(); !slices.Contains(again, tt.want) {
				t.Errorf("%s() = %q after a caller changed its copy, want it to contain %q", tt.name, again, tt.want)
			}
		})
	}
	if builtin.IsWriter("file_write") != true || builtin.IsWriter("file_read") {
		t.Errorf("IsWriter(file_write), IsWriter(file_read) = %v, %v, want true, false", builtin.IsWriter("file_write"), builtin.IsWriter("file_read"))
	}
}
