package jsontmpl_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// executorSymbols are functions of text/template's executor, and reflect's
// method lookups: when one of the latter is reachable with a name not known
// at compile time, the linker keeps every exported method of every type
// converted to an interface.
var executorSymbols = []string{
	"text/template.(*state).evalField",
	"text/template.(*Template).Execute",
	"text/template.(*Template).execute",
	"reflect.Value.Method",
	"reflect.Value.MethodByName",
	"reflect.(*rtype).Method",
	"reflect.(*rtype).MethodByName",
}

// TestLinkage builds a program that renders a template with jsontmpl and
// checks that its binary holds none of executorSymbols, while a control
// program using text/template holds the ones it must.
func TestLinkage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	dir := t.TempDir()
	symbols := func(pkg string) map[string]bool {
		t.Helper()
		bin := filepath.Join(dir, filepath.Base(pkg))
		if out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/linkage/"+pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		out, err := exec.Command(goTool, "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", pkg, err)
		}
		syms := map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			// address, kind, name; undefined symbols have no address.
			if f := strings.Fields(sc.Text()); len(f) >= 2 {
				syms[f[len(f)-1]] = true
			}
		}
		return syms
	}

	ours := symbols("jsontmpl")
	if !ours["github.com/mcp-tools/mcp-tools/tools/pipeline/internal/jsontmpl.(*Template).Execute"] {
		t.Fatalf("the jsontmpl program's symbols lack jsontmpl.(*Template).Execute; want it there (is nm reading the right binary?)")
	}
	for _, s := range executorSymbols {
		if ours[s] {
			t.Errorf("the jsontmpl program holds %s; want it absent", s)
		}
	}

	std := symbols("stdtemplate")
	for _, s := range []string{"text/template.(*state).evalField", "reflect.Value.MethodByName"} {
		if !std[s] {
			t.Errorf("the text/template program lacks %s; want it there, or the check above proves nothing", s)
		}
	}
}
