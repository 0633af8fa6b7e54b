//go:build amd64 && !purego

package embed

//go:noescape
func expScaledAVX2(x *float32, n int, scale, shift float32)

//go:noescape
func geluAVX2(x *float32, n int)

//go:noescape
func maxAVX2(x *float32, n int) float32

//go:noescape
func expSumAVX2(x *float32, n int, scale, shift float32) float32

// softmaxExp sets x[i] = exp((x[i] - max(x))·scale) and returns Σ x[i]:
// softmax(x·scale) without the division, which the caller folds into what
// it does with the weights next. x must not be empty.
func softmaxExp(x []float32, scale float32) float32 {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		return softmaxExpGo(x, scale)
	}
	m := maxAVX2(&x[0], n)
	for _, z := range x[n:] {
		m = max(m, z)
	}
	sum := expSumAVX2(&x[0], n, scale, m*scale)
	for i := n; i < len(x); i++ {
		x[i] = expf(x[i]*scale - m*scale)
		sum += x[i]
	}
	return sum
}

// expScaled sets x[i] = exp(x[i]·scale - shift).
func expScaled(x []float32, scale, shift float32) {
	n := len(x) &^ 7
	if useAVX2 && n > 0 {
		expScaledAVX2(&x[0], n, scale, shift)
	} else {
		n = 0
	}
	for i := n; i < len(x); i++ {
		x[i] = expf(x[i]*scale - shift)
	}
}

// geluSlice applies Hugging Face's exact-erf GELU in place.
func geluSlice(x []float32) {
	n := len(x) &^ 7
	if useAVX2 && n > 0 {
		geluAVX2(&x[0], n)
	} else {
		n = 0
	}
	for i := n; i < len(x); i++ {
		x[i] = geluErf(x[i])
	}
}
