//go:build !unix

package vectors

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

func checkOwn(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return ErrNotOurs
	}
	return nil
}

// FileID has no portable inode here: the vector file is then never used.
func FileID(string) (uint64, uint64, error) {
	return 0, 0, errors.New("no file identity on this platform")
}

// mapFile reads the file: no mapping here.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}

var pageSize = os.Getpagesize()

// dropPages does nothing here: the file was read, not mapped.
func dropPages([]byte) {}
