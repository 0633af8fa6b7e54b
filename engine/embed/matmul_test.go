package embed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatmulOddShapes covers partial panels (out % 16 != 0) and row counts
// that are not a multiple of the kernel height, for both kernels.
func TestMatmulOddShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range []struct{ rows, in, out int }{{1, 5, 3}, {7, 33, 17}, {13, 64, 48}, {200, 40, 70}} {
		w := make([]float32, sh.out*sh.in)
		b := make([]float32, sh.out)
		for i := range w {
			w[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		rowsPad := roundUp(sh.rows, kernelRows)
		a := make([]float32, rowsPad*sh.in)
		for i := range a[:sh.rows*sh.in] {
			a[i] = float32(rng.NormFloat64())
		}
		pm := packMatrix(w, b, sh.out, sh.in)
		for _, workers := range []int{1, 2} {
			c := make([]float32, rowsPad*sh.out)
			matmul(a, sh.in, &pm, c, sh.out, sh.rows, workers)
			for r := 0; r < sh.rows; r++ {
				for o := 0; o < sh.out; o++ {
					want := float64(b[o])
					for k := 0; k < sh.in; k++ {
						want += float64(a[r*sh.in+k]) * float64(w[o*sh.in+k])
					}
					if d := math.Abs(float64(c[r*sh.out+o]) - want); d > 1e-4*math.Max(1, math.Abs(want)) {
						t.Fatalf("shape %+v workers %d: c[%d][%d] = %v, want %v", sh, workers, r, o, c[r*sh.out+o], want)
					}
				}
			}
		}
		// The portable kernel computes the same block as the assembly one.
		var got, want [kernelRows * panelWidth]float32
		kernel6x16(a, sh.in, pm.data, sh.in, got[:], panelWidth, pm.bias)
		kernel6x16Go(a, sh.in, pm.data, sh.in, want[:], panelWidth, pm.bias)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("shape %+v: kernel %v, portable kernel %v at %d", sh, got[i], want[i], i)
			}
		}
	}
}

// TestKernelPanelPair: the two-panel kernel (AVX-512 where the CPU has it)
// computes what the portable kernel computes on each panel, over several
// row blocks, with row strides wider than the block.
func TestKernelPanelPair(t *testing.T) {
	if !useAVX512 {
		t.Skip("this CPU has no AVX-512F: gemmPanels never calls kernelPanelPair, and TestMatmulOddShapes covers the AVX2 kernel")
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for _, sh := range []struct{ blocks, k, lda, ldc int }{{1, 1, 1, 32}, {3, 32, 40, 48}, {16, 384, 384, 1536}} {
		rows := sh.blocks * kernelRows
		a := make([]float32, rows*sh.lda)
		b := make([]float32, 2*sh.k*panelWidth)
		bias := make([]float32, 2*panelWidth)
		for _, v := range [][]float32{a, b, bias} {
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
		}
		got := make([]float32, rows*sh.ldc)
		want := make([]float32, rows*sh.ldc)
		kernelPanelPair(a, sh.lda, b, sh.k, got, sh.ldc, bias, sh.blocks)
		kernelPanelGo(a, sh.lda, b, sh.k, want, sh.ldc, bias, sh.blocks)
		kernelPanelGo(a, sh.lda, b[sh.k*panelWidth:], sh.k, want[panelWidth:], sh.ldc, bias[panelWidth:], sh.blocks)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("shape %+v: pair kernel %v, portable %v at row %d col %d", sh, got[i], want[i], i/sh.ldc, i%sh.ldc)
			}
		}
	}
}

// BenchmarkMatmul is one MiniLM product per sub-benchmark (a band of 96
// rows, 384 in and 1536 out, then 1536 in and 384 out), single-threaded,
// with and without the AVX-512 kernel.
func BenchmarkMatmul(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, sh := range []struct{ in, out int }{{384, 1536}, {1536, 384}} {
		w := make([]float32, sh.out*sh.in)
		for i := range w {
			w[i] = float32(rng.NormFloat64())
		}
		pm := packMatrix(w, make([]float32, sh.out), sh.out, sh.in)
		a := make([]float32, rowChunk*sh.in)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		c := make([]float32, rowChunk*sh.out)
		for _, kern := range []string{"avx2", "avx512"} {
			if kern == "avx512" && !useAVX512 {
				continue
			}
			b.Run(fmt.Sprintf("%dx%d/%s", sh.in, sh.out, kern), func(b *testing.B) {
				defer func(v bool) { useAVX512 = v }(useAVX512)
				useAVX512 = kern == "avx512"
				for i := 0; i < b.N; i++ {
					matmul(a, sh.in, &pm, c, sh.out, rowChunk, 1)
				}
				b.ReportMetric(float64(b.N)*2*rowChunk*float64(sh.in*sh.out)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
