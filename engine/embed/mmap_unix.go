//go:build unix

package embed

import (
	"errors"
	"os"
	"syscall"
)

// mapFile maps f's first size bytes read-only and returns them with the
// function that unmaps them.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, errors.New("file too large or empty to map")
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}
