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
