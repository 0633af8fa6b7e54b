//go:build !amd64 || purego

package vectors

// dotInt8 is the integer dot product of two equal-length int8 vectors.
func dotInt8(a, b []int8) int32 { return dotInt8Go(a, b) }
