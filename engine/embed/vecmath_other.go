//go:build !amd64 || purego

package embed

func expScaled(x []float32, scale, shift float32) {
	for i, z := range x {
		x[i] = expf(z*scale - shift)
	}
}

func geluSlice(x []float32) {
	for i, z := range x {
		x[i] = geluErf(z)
	}
}

func softmaxExp(x []float32, scale float32) float32 { return softmaxExpGo(x, scale) }

func addLayerNorm(x, t []float32, h int, n normWeights) { addLayerNormGo(x, t, h, n) }
