//go:build amd64 && !purego

package embed

import "golang.org/x/sys/cpu"

var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAVX512 picks the two-panel kernel where the CPU (and the OS, which
// x/sys/cpu checks for the ZMM state) has AVX-512F. A variable: tests
// compare it with the AVX2 path.
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F

//go:noescape
func gemm6x16AVX2(a *float32, lda int, b *float32, k int, c *float32, ldc int, bias *float32)

func kernel6x16(a []float32, lda int, b []float32, k int, c []float32, ldc int, bias []float32) {
	if !useAVX2 {
		kernel6x16Go(a, lda, b, k, c, ldc, bias)
		return
	}
	// Bounds the assembly relies on, checked once per block.
	_ = a[(kernelRows-1)*lda+k-1]
	_ = b[k*panelWidth-1]
	_ = c[(kernelRows-1)*ldc+panelWidth-1]
	_ = bias[panelWidth-1]
	gemm6x16AVX2(&a[0], lda, &b[0], k, &c[0], ldc, &bias[0])
}

//go:noescape
func gemmPanelAVX2(a *float32, lda int, b *float32, k int, c *float32, ldc int, bias *float32, blocks int)

// kernelPanel runs kernel6x16 on blocks consecutive row blocks.
func kernelPanel(a []float32, lda int, b []float32, k int, c []float32, ldc int, bias []float32, blocks int) {
	if !useAVX2 {
		kernelPanelGo(a, lda, b, k, c, ldc, bias, blocks)
		return
	}
	if blocks <= 0 {
		return
	}
	rows := blocks * kernelRows
	_ = a[(rows-1)*lda+k-1]
	_ = b[k*panelWidth-1]
	_ = c[(rows-1)*ldc+panelWidth-1]
	_ = bias[panelWidth-1]
	gemmPanelAVX2(&a[0], lda, &b[0], k, &c[0], ldc, &bias[0], blocks)
}

//go:noescape
func gemmPanelPairAVX512(a *float32, lda int, b *float32, k int, c *float32, ldc int, bias *float32, blocks int)

// kernelPanelPair is kernelPanel over two adjacent panels at once: b holds
// them end to end (2*k*panelWidth floats), bias and each row of C 2*panelWidth
// columns. Only gemmPanels calls it, and only when useAVX512.
func kernelPanelPair(a []float32, lda int, b []float32, k int, c []float32, ldc int, bias []float32, blocks int) {
	if blocks <= 0 {
		return
	}
	rows := blocks * kernelRows
	_ = a[(rows-1)*lda+k-1]
	_ = b[2*k*panelWidth-1]
	_ = c[(rows-1)*ldc+2*panelWidth-1]
	_ = bias[2*panelWidth-1]
	gemmPanelPairAVX512(&a[0], lda, &b[0], k, &c[0], ldc, &bias[0], blocks)
}
