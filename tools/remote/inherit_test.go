package remote_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/remote"
)

// TestCommandInherit runs a real shell that reports two variables of its
// environment: HOME (in DefaultInherit) and a secret (not in it), under
// each kind of Inherit value.
func TestCommandInherit(t *testing.T) {
	t.Setenv("HOME", "/home/inherit-test")
	t.Setenv("REMOTE_TEST_SECRET", "do-not-leak")
	tests := []struct {
		name    string
		inherit []string
		want    string
	}{
		{name: "nil inherits the defaults", inherit: nil, want: "/home/inherit-test|"},
		{name: "empty inherits nothing", inherit: []string{}, want: "|"},
		{name: "a list inherits exactly it", inherit: []string{"REMOTE_TEST_SECRET"}, want: "|do-not-leak"},
		{name: "an unset name is left out", inherit: []string{"REMOTE_TEST_UNSET"}, want: "|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := remote.NewCommand(remote.CommandConfig{
				Common: remote.Common{Name: "env", Description: "Report the environment."},
				Command: []string{"/bin/sh", "-c",
					`cat >/dev/null; printf '{"success": true, "output": "%s|%s"}' "$HOME" "$REMOTE_TEST_SECRET"`},
				Inherit: tt.inherit,
			})
			if err != nil {
				t.Fatal(err)
			}
			r := tools.Settle(c.Call(context.Background(), json.RawMessage(`{"input":""}`)))
			if r.Err != nil {
				t.Fatalf("call: %v", r.Err)
			}
			if r.Text != tt.want {
				t.Errorf("child saw %q, want %q", r.Text, tt.want)
			}
		})
	}
}

// TestDefaultInheritIsACopy: a caller that changes the list it was given
// changes no later tool's environment.
func TestDefaultInheritIsACopy(t *testing.T) {
	got := remote.DefaultInherit()
	if !slices.Contains(got, "PATH") || slices.Contains(got, "REMOTE_TEST_SECRET") {
		t.Fatalf("DefaultInherit() = %q, want PATH and no secret", got)
	}
	got[0] = "REMOTE_TEST_SECRET"
	if again := remote.DefaultInherit(); again[0] == "REMOTE_TEST_SECRET" {
		t.Errorf("DefaultInherit()[0] = %q after the caller changed its copy, want it unchanged", again[0])
	}
}
