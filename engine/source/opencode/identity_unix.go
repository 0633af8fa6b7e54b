//go:build unix

package opencode

import (
	"os"
	"syscall"
)

// devIno is the device and inode of a stat result.
func devIno(st os.FileInfo) (dev, ino uint64) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Dev), uint64(sys.Ino)
	}
	return 0, 0
}
