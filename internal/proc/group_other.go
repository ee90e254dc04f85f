//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// SetGroup does nothing here: there are no process groups to start the
// child in, so TerminateGroup and KillGroup reach the child alone, not
// what it starts.
func SetGroup(*exec.Cmd) {}

// TerminateGroup ends the process pid at once: there is no signal that
// asks a process to end here.
func TerminateGroup(pid int) error { return KillGroup(pid) }

// KillGroup kills the process pid.
func KillGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// KillRest does nothing here: without process groups only pid was ever
// reached, and once it has been waited for its number may already belong
// to another process, which a kill by number would end.
func KillRest(int) error { return nil }
