package embed

import (
	"math"
	"testing"
)

func TestVectorMathMatchesFloat64(t *testing.T) {
	var xs []float32
	for v := float32(-12); v <= 12; v += 0.0371 {
		xs = append(xs, v)
	}
	xs = append(xs, 0, -100, 100, 1e-8, -1e-8)
	g := append([]float32(nil), xs...)
	geluSlice(g)
	for i, x := range xs {
		want := 0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2))
		if d := math.Abs(float64(g[i]) - want); d > 2e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("gelu(%v) = %v, want %v", x, g[i], want)
		}
		if d := math.Abs(float64(geluErf(x)) - want); d > 2e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("geluErf(%v) = %v, want %v", x, geluErf(x), want)
		}
	}
	e := append([]float32(nil), xs...)
	expScaled(e, 2, 3)
	for i, x := range xs {
		want := math.Exp(float64(x)*2 - 3)
		if want < 1e-30 || want > 1e30 {
			continue
		}
		if d := math.Abs(float64(e[i])-want) / want; d > 1e-6 {
			t.Errorf("exp(%v*2-3) = %v, want %v (rel %.2g)", x, e[i], want, d)
		}
	}
}

// softmaxExp over rows of every length around the 8-wide step, with the
// maximum in the vector part and in the tail.
func TestSoftmaxExpMatchesFloat64(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for _, peak := range []int{0, n - 1, n / 2} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(math.Sin(float64(i*7+n))) * 6
			}
			x[peak] = 9
			want := make([]float64, n)
			var m, sum float64 = math.Inf(-1), 0
			for _, z := range x {
				m = math.Max(m, float64(z)*0.3)
			}
			for i, z := range x {
				want[i] = math.Exp(float64(z)*0.3 - m)
				sum += want[i]
			}
			for _, impl := range []struct {
				name string
				fn   func([]float32, float32) float32
			}{{"softmaxExp", softmaxExp}, {"softmaxExpGo", softmaxExpGo}} {
				got := append([]float32(nil), x...)
				s := impl.fn(got, 0.3)
				if d := math.Abs(float64(s)-sum) / sum; d > 1e-6 {
					t.Fatalf("%s n=%d peak=%d: sum %v, want %v", impl.name, n, peak, s, sum)
				}
				for i := range got {
					if d := math.Abs(float64(got[i]) - want[i]); d > 1e-6 {
						t.Fatalf("%s n=%d peak=%d: x[%d] = %v, want %v", impl.name, n, peak, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// addLayerNorm (AVX2 where available) against float64, with and without the
// residual, on rows with a large offset (where a one-pass variance would
// cancel badly).
func TestAddLayerNormMatchesFloat64(t *testing.T) {
	for _, h := range []int{8, 32, 384, 12} {
		x := make([]float32, 3*h)
		res := make([]float32, 3*h)
		nw := normWeights{g: make([]float32, h), b: make([]float32, h), eps: 1e-12}
		for i := range x {
			x[i] = 100 + float32(math.Sin(float64(i)))*3
			res[i] = float32(math.Cos(float64(i * 3)))
		}
		for j := 0; j < h; j++ {
			nw.g[j] = 1 + float32(j%5)/10
			nw.b[j] = float32(j%3) / 7
		}
		for _, withRes := range []bool{false, true} {
			got := append([]float32(nil), x...)
			var tt []float32
			if withRes {
				tt = res
			}
			addLayerNorm(got, tt, h, nw)
			for r := 0; r < 3; r++ {
				row := make([]float64, h)
				var mean, v float64
				for j := range row {
					row[j] = float64(x[r*h+j])
					if withRes {
						row[j] += float64(res[r*h+j])
					}
					mean += row[j] / float64(h)
				}
				for _, z := range row {
					v += (z - mean) * (z - mean) / float64(h)
				}
				for j, z := range row {
					want := (z-mean)/math.Sqrt(v+1e-12)*float64(nw.g[j]) + float64(nw.b[j])
					if d := math.Abs(float64(got[r*h+j]) - want); d > 2e-4 {
						t.Fatalf("h=%d residual=%v row %d col %d: %v, want %v", h, withRes, r, j, got[r*h+j], want)
					}
				}
			}
		}
	}
}
