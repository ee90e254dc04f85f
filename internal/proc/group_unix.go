//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// SetGroup makes cmd start in a process group of its own, led by the
// child, so that TerminateGroup and KillGroup reach whatever it starts too.
func SetGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// TerminateGroup asks every process of the group led by pid to end
// (SIGTERM).
func TerminateGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGTERM) }

// KillGroup kills every process of the group led by pid (SIGKILL).
func KillGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// KillRest kills what is left of the group led by pid once pid itself has
// been waited for: children it started and left behind.
func KillRest(pid int) error { return KillGroup(pid) }
