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

//go:noescape
func addNormAVX2(x, t, gamma, beta *float32, h int, invH, eps float32, add bool)

// addLayerNorm adds t (when not nil) to each h-wide row of x and layer
// normalises the row in place.
func addLayerNorm(x, t []float32, h int, n normWeights) {
	if !useAVX2 || h%8 != 0 || h == 0 {
		addLayerNormGo(x, t, h, n)
		return
	}
	_, _ = n.g[h-1], n.b[h-1]
	invH := 1 / float32(h)
	for r := 0; r+h <= len(x); r += h {
		if t == nil {
			addNormAVX2(&x[r], nil, &n.g[0], &n.b[0], h, invH, n.eps, false)
		} else {
			_ = t[r+h-1]
			addNormAVX2(&x[r], &t[r], &n.g[0], &n.b[0], h, invH, n.eps, true)
		}
	}
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
