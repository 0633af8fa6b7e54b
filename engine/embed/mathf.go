package embed

import "math"

// expf is exp for float32 inputs with |relative error| < 2e-7 on [-80, 88]:
// range reduction to x = k·ln2 + r, |r| ≤ ln2/2, then a degree-6 Taylor
// polynomial. It is several times faster than math.Exp, which matters because
// softmax and GELU call it once per attention score and per FFN activation.
func expf(x float32) float32 {
	if x < -80 { // below the float32 normal range once scaled; exp(-80) ≈ 1.8e-35
		return 0
	}
	if x > 88 {
		return float32(math.Inf(1))
	}
	const ln2Hi, ln2Lo, log2e = 0.693145751953125, 1.428606765330187e-06, 1.4426950408889634
	k := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - k*ln2Hi - k*ln2Lo
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return math.Float32frombits(math.Float32bits(p) + uint32(int32(k))<<23)
}

// geluErf is Hugging Face's "gelu": 0.5·x·(1 + erf(x/√2)), with erf from
// Abramowitz & Stegun 7.1.26 (absolute error ≤ 1.5e-7).
func geluErf(x float32) float32 {
	z := x * 0.70710678118654752
	s := float32(1)
	if z < 0 {
		s, z = -1, -z
	}
	t := 1 / (1 + 0.3275911*z)
	y := 1 - (((((1.061405429*t-1.453152027)*t)+1.421413741)*t-0.284496736)*t+0.254829592)*t*expf(-z*z)
	return 0.5 * x * (1 + s*y)
}

// geluTanh is the tanh approximation ("gelu_new"), which cybertron uses for "gelu".
func geluTanh(x float32) float32 {
	u := 0.7978845608028654 * (x + 0.044715*x*x*x)
	// tanh(u) = 1 - 2/(exp(2u)+1)
	return 0.5 * x * (2 - 2/(expf(2*u)+1))
}

// softmaxExpGo is the portable softmaxExp.
func softmaxExpGo(x []float32, scale float32) float32 {
	m := x[0]
	for _, z := range x[1:] {
		if z > m {
			m = z
		}
	}
	var sum float32
	for i, z := range x {
		x[i] = expf(z*scale - m*scale)
		sum += x[i]
	}
	return sum
}
