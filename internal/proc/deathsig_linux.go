package proc

import (
	"os/exec"
	"syscall"
)

// lockThread says whether Start forks on a locked thread (see Start).
const lockThread = true

// setDeathSignal asks the kernel to SIGKILL the child when its parent
// thread ends.
func setDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
