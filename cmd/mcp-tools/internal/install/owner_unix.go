//go:build unix

package install

import (
	"os"
	"syscall"
)

// keepOwner gives f the owner of the file like, when there is one and it
// is not the current user (root installing into a user's config).
func keepOwner(f *os.File, like string) {
	st, err := os.Stat(like)
	if err != nil {
		return
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		_ = f.Chown(int(sys.Uid), int(sys.Gid))
	}
}
