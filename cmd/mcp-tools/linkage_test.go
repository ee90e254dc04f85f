package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinkerDropsUnusedMethods guards the binary's size, start-up time and
// idle memory. When any reachable code looks a method up by a name known
// only at run time (reflect's Method or MethodByName: text/template's
// executor does), Go's linker keeps every exported method of every type
// that is ever held in an interface. That once made the binary 47 MB
// instead of 30, and its idle memory 5 MiB higher. The canary is a
// go-redis command nothing calls: it is linked only in that case, and
// only the service build links go-redis.
//
// Some libraries are banned outright from both builds, each for what it
// cost every user of the binary, serving over stdio or not (see
// bannedPackages).
func TestLinkerDropsUnusedMethods(t *testing.T) {
	syms := symbols(t, serviceBinary(t))
	if !syms["github.com/redis/go-redis/v9.cmdable.Publish"] { // state/redisstore calls it
		t.Fatal("the service build has no go-redis commands at all: this test no longer checks anything")
	}
	if syms["github.com/redis/go-redis/v9.cmdable.GeoRadius"] {
		t.Error("the linker kept go-redis's unused GeoRadius: some reachable code calls reflect's Method or MethodByName " +
			"with a name known only at run time (text/template's executor does), so every exported method is kept. " +
			"Find it: go build -tags service -ldflags=-dumpdep ./cmd/mcp-tools 2>&1 | grep ReflectMethod")
	}
	for name, bin := range map[string]string{"embedded": binary, "service": serviceBinary(t)} {
		syms := symbols(t, bin)
		for _, s := range []string{"text/template.(*state).evalField", "html/template.(*Template).Execute"} {
			if syms[s] {
				t.Errorf("the %s build links %s: a template executor is reachable (see above)", name, s)
			}
		}
		for _, b := range bannedPackages {
			if got := linked(syms, b.prefix); len(got) > 0 {
				t.Errorf("the %s build links %s (%d symbols, e.g. %s): %s", name, b.prefix, len(got), got[0], b.why)
			}
		}
	}
}

// TestEmbeddedBuildLeavesOutTheServiceLibraries guards the default build's
// idle memory: go-redis and the OpenTelemetry SDK, linked, cost every
// process about 2 MiB (their package initialisers, code and interface
// tables), so only the service build (-tags service) has them.
func TestEmbeddedBuildLeavesOutTheServiceLibraries(t *testing.T) {
	embedded, service := symbols(t, binary), symbols(t, serviceBinary(t))
	for _, prefix := range []string{"github.com/redis/go-redis/", "go.opentelemetry.io/otel/sdk/", "github.com/mcp-tools/mcp-tools/state/redisstore.", "github.com/mcp-tools/mcp-tools/telemetry/otlpexport."} {
		if got := linked(embedded, prefix); len(got) > 0 {
			t.Errorf("the embedded build links %s (%d symbols, e.g. %s): only the service build may (see service.go)", prefix, len(got), got[0])
		}
		if len(linked(service, prefix)) == 0 {
			t.Errorf("the service build does not link %s: it has no Redis state or OTLP export", prefix)
		}
	}
}

// symbols lists the symbols of the binary at bin.
func symbols(t *testing.T, bin string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	syms := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 {
			syms[f[len(f)-1]] = true
		}
	}
	return syms
}

// linked returns the symbols of syms that start with prefix, sorted.
func linked(syms map[string]bool, prefix string) []string {
	var out []string
	for s := range syms {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// bannedPackages are libraries the binary must not link, and why.
var bannedPackages = []struct{ prefix, why string }{
	{"google.golang.org/grpc.", "it brought a reflective method lookup (golang.org/x/net/trace) and 4 MiB of its own; OTLP export needs none of it"},
	{"golang.org/x/net/trace.", "its debug pages look methods up by name (see above)"},
	{"github.com/prometheus/client_golang/", "1.6 MiB of idle memory and 2 ms of start-up; telemetry/internal/prom writes /metrics"},
	{"google.golang.org/protobuf/internal/impl.", "the protobuf runtime (0.9 MiB of idle memory with the OTLP types): the OTLP exporter writes its messages with protowire"},
	{"github.com/goccy/go-yaml", "a second YAML library beside go.yaml.in/yaml/v4, which the config loader uses"},
	{"go.opentelemetry.io/proto/otlp/", "the generated OTLP types register themselves with the protobuf runtime"},
	{"golang.org/x/net/idna.", "a second copy of the IDNA tables beside the standard library's (golang.org/x/net/http/httpguts brought it)"},
}

// TestEarlyStackInitialisesFirst guards the order internal/earlystack
// relies on: it must give the main goroutine its large stack before any
// initialiser outside the runtime's own bootstrap allocates, or the stack
// copies it exists to avoid come back (idle memory +0.5 MiB). Go orders
// initialisers by import path, so renaming or moving the package, or
// giving it an import, can break this.
func TestEarlyStackInitialisesFirst(t *testing.T) {
	cmd := exec.Command(binary, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s version: %v\n%s", binary, err, stderr.String())
	}
	// Lines read "init PKG @T ms, D ms clock, B bytes, A allocs".
	const early = "github.com/mcp-tools/mcp-tools/internal/earlystack"
	var before []string
	found := false
	for _, line := range strings.Split(stderr.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" {
			continue
		}
		if f[1] == early {
			found = true
			break
		}
		if f[7] != "0" { // bytes allocated: an initialiser with real work
			before = append(before, f[1])
		}
	}
	if !found {
		t.Fatalf("no init line for %s in GODEBUG=inittrace=1 output:\n%s", early, stderr.String())
	}
	for _, pkg := range before {
		// The race detector's runtime support initialises first in a -race
		// build; it is not in the binary users run.
		if pkg != "runtime" && !strings.HasPrefix(pkg, "internal/") && !strings.HasPrefix(pkg, "runtime/race") {
			t.Errorf("%s initialised (and allocated) before %s", pkg, early)
		}
	}
}
