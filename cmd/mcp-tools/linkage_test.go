package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinkerDropsUnusedMethods guards the binary's size, start-up time and
// idle memory. When any reachable code looks a method up by a name known
// only at run time (reflect's Method or MethodByName: text/template's
// executor does), Go's linker keeps every exported method of every type
// that is ever held in an interface. That once made the binary 47 MB
// instead of 30, and its idle memory 5 MiB higher. The canary is a
// go-redis command nothing calls: it is linked only in that case. gRPC is
// banned outright: it brought such a lookup (golang.org/x/net/trace's
// pages) and 4 MiB of its own, and the OTLP exporters no longer need it.
func TestLinkerDropsUnusedMethods(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", binary).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	syms := map[string]bool{}
	var grpc []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		name := f[len(f)-1]
		syms[name] = true
		if strings.HasPrefix(name, "google.golang.org/grpc.") || strings.HasPrefix(name, "golang.org/x/net/trace.") {
			grpc = append(grpc, name)
		}
	}
	if !syms["github.com/redis/go-redis/v9.cmdable.Get"] {
		t.Fatal("the binary has no go-redis commands at all: this test no longer checks anything")
	}
	if syms["github.com/redis/go-redis/v9.cmdable.GeoRadius"] {
		t.Error("the linker kept go-redis's unused GeoRadius: some reachable code calls reflect's Method or MethodByName " +
			"with a name known only at run time (text/template's executor does), so every exported method is kept. " +
			"Find it: go build -ldflags=-dumpdep ./cmd/mcp-tools 2>&1 | grep ReflectMethod")
	}
	for _, s := range []string{"text/template.(*state).evalField", "html/template.(*Template).Execute"} {
		if syms[s] {
			t.Errorf("the binary links %s: a template executor is reachable (see above)", s)
		}
	}
	if len(grpc) > 0 {
		t.Errorf("the binary links gRPC (%d symbols, e.g. %s); OTLP export needs none of it", len(grpc), grpc[0])
	}
}
