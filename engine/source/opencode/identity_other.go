//go:build !unix

package opencode

import "os"

// devIno has no portable inode to offer here: identity rests on the header,
// and the fingerprint on sizes and times.
func devIno(os.FileInfo) (dev, ino uint64) { return 0, 0 }
