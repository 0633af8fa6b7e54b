package embed

import (
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
