// Package proc starts child processes so that they die with the server and
// reaps the orphans a server inherits when it runs as PID 1 (a container
// without an init) or as a child subreaper.
//
// Children are a process-wide resource: wait4 on any pid, or on -1, can
// take an exit status another part of the program is waiting for. So the
// package keeps one process-wide record of the children it started (the
// same way os/signal keeps one set of handlers), and the reaper reaps only
// zombies that are not on it. Every child the program starts must
// therefore go through Start while a reaper runs; a child started with a
// plain exec.Cmd.Start could have its exit status taken, and its Wait would
// fail with ECHILD.
package proc
