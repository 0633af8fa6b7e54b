//go:build !unix

package embed

import (
	"errors"
	"os"
)

// mapFile is not available here; readWeightsCache then reads the file.
func mapFile(*os.File, int64) ([]byte, func(), error) {
	return nil, nil, errors.New("memory mapping is not supported on this platform")
}
