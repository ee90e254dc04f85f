package server_test

import (
	"os"
	"syscall"
)

func syscallTERM() os.Signal { return syscall.SIGTERM }
