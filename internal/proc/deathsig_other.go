//go:build !linux

package proc

import "os/exec"

// lockThread says whether Start forks on a locked thread: only Linux has
// a parent-death signal tied to the forking thread.
const lockThread = false

// setDeathSignal does nothing: there is no parent-death signal here, and a
// child outlives a server that is killed.
func setDeathSignal(*exec.Cmd) {}
