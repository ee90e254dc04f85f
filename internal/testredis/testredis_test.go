package testredis

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestServerLifecycle(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("after Start: ping: got %v, want nil", err)
	}
	if got, want := s.URL(), "redis://"+s.Addr()+"/0"; got != want {
		t.Errorf("URL: got %q, want %q", got, want)
	}
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Errorf("Addr: got %q, want 127.0.0.1:PORT", s.Addr())
	}
	steps := []struct {
		name string
		do   func()
		up   bool
	}{
		{"stop", s.Stop, false},
		{"stop again", s.Stop, false},
		{"restart", s.Restart, true},
		{"kill", s.Kill, false},
		{"restart after kill", s.Restart, true},
		{"restart while running", s.Restart, true},
	}
	addr := s.Addr()
	for _, step := range steps {
		step.do()
		err := ping(s.Addr())
		if got := err == nil; got != step.up {
			t.Fatalf("after %s: answers PING: got %v (%v), want %v", step.name, got, err, step.up)
		}
		if s.Addr() != addr {
			t.Fatalf("after %s: Addr: got %q, want %q (the same port)", step.name, s.Addr(), addr)
		}
	}
}

func TestStartWithoutRedis(t *testing.T) {
	if os.Getenv("TESTREDIS_CHILD") == "1" {
		Start(t)
		t.Fatal("Start returned without redis-server in PATH")
	}
	tests := []struct {
		name    string
		require string
		wantOK  bool
		want    string
	}{
		{"skips", "", true, "SKIP: TestStartWithoutRedis"},
		{"fails when required", "1", false, "redis-server not installed (required by MCP_TOOLS_REQUIRE_SERVERS=1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartWithoutRedis$", "-test.v")
			cmd.Env = append(os.Environ(), "TESTREDIS_CHILD=1", "PATH="+t.TempDir(), RequireEnv+"="+tt.require)
			out, err := cmd.CombinedOutput()
			if got := err == nil; got != tt.wantOK {
				t.Errorf("child succeeded: got %v (%v), want %v; output:\n%s", got, err, tt.wantOK, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("child output: got\n%s\nwant it to contain %q", out, tt.want)
			}
		})
	}
}
