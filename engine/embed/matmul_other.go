//go:build !amd64 || purego

package embed

const useAVX2 = false

var useAVX512 = false

func kernel6x16(a []float32, lda int, b []float32, k int, c []float32, ldc int, bias []float32) {
	kernel6x16Go(a, lda, b, k, c, ldc, bias)
}

func kernelPanel(a []float32, lda int, b []float32, k int, c []float32, ldc int, bias []float32, blocks int) {
	kernelPanelGo(a, lda, b, k, c, ldc, bias, blocks)
}

// kernelPanelPair is never called here (useAVX512 is false); gemmPanels
// names it.
func kernelPanelPair(a []float32, lda int, b []float32, k int, c []float32, ldc int, bias []float32, blocks int) {
	panic("embed: kernelPanelPair without AVX-512")
}
