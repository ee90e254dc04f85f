package tools_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyServerKnowsTheSDK fails if any package but server/ and cmd/
// depends on the MCP SDK: the contract, typed, approval and the tools
// must stay servable by any SDK.
func TestOnlyServerKnowsTheSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := []string{"./...", "../typed/...", "../approval/..."}
	for _, p := range pkgs {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", p).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "matched no packages") {
				continue
			}
			t.Fatalf("go list -deps %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/mark3labs/mcp-go") {
				t.Errorf("%s depends on %s: only server/ and cmd/ may import the MCP SDK", p, dep)
			}
		}
	}
}
