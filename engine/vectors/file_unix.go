//go:build unix

package vectors

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// checkOwn is the index's rule for its own files (engine/index): a regular
// file, owned by this user, no group or other bits.
func checkOwn(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v); Recall never reads or replaces it: %w", path, fi.Mode().Type(), ErrNotOurs)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you; remove it if you did not create it: %w", path, st.Uid, ErrNotOurs)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o, open to group/others; remove it (Recall rebuilds it): %w", path, fi.Mode().Perm(), ErrNotOurs)
	}
	return nil
}

// FileID is the identity (device, inode) of the file at path: a vector
// file names the index file it was made from.
func FileID(path string) (dev, ino uint64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), nil
	}
	return 0, 0, fmt.Errorf("no file identity for %s", path)
}

// mapFile maps f's first size bytes read-only: the pages are the kernel's
// page cache, shared by every process that maps the file, and only those a
// search touches become resident.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, fmt.Errorf("cannot map %d bytes", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}

var pageSize = os.Getpagesize()

// dropPages tells the kernel this process no longer needs b's pages of a
// shared read-only file mapping: they leave the resident set and are read
// back from the page cache if touched again.
func dropPages(b []byte) {
	_ = unix.Madvise(b, unix.MADV_DONTNEED)
}
