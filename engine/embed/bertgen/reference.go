package bertgen

import (
	"fmt"
	"math"
)

// Reference embeds one token-id sequence (already wrapped in [CLS] ... [SEP])
// with a plain float64 BERT forward pass written from Hugging Face's
// BertModel semantics (exact erf GELU, LayerNorm eps 1e-12), then mean-pools
// and L2-normalises. It is slow on purpose: it is the ground truth in tests.
func (m *Model) Reference(ids []int) []float64 {
	c := m.Config
	n, h := len(ids), c.Hidden
	get := func(name string) []float64 {
		t := m.byName[name]
		if t == nil {
			panic(fmt.Sprintf("bertgen: no tensor %s", name))
		}
		out := make([]float64, len(t.Data))
		for i, v := range t.Data {
			out[i] = float64(v)
		}
		return out
	}
	word, pos, typ := get("embeddings.word_embeddings.weight"), get("embeddings.position_embeddings.weight"), get("embeddings.token_type_embeddings.weight")
	x := make([][]float64, n)
	for i, id := range ids {
		x[i] = make([]float64, h)
		for j := 0; j < h; j++ {
			x[i][j] = word[id*h+j] + pos[i*h+j] + typ[j]
		}
	}
	x = layerNorm64(x, get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
	dh := h / c.Heads
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		q := linear64(x, get(p+"attention.self.query.weight"), get(p+"attention.self.query.bias"))
		k := linear64(x, get(p+"attention.self.key.weight"), get(p+"attention.self.key.bias"))
		v := linear64(x, get(p+"attention.self.value.weight"), get(p+"attention.self.value.bias"))
		ctx := make([][]float64, n)
		for i := range ctx {
			ctx[i] = make([]float64, h)
		}
		for hd := 0; hd < c.Heads; hd++ {
			o := hd * dh
			for i := 0; i < n; i++ {
				scores := make([]float64, n)
				maxS := math.Inf(-1)
				for j := 0; j < n; j++ {
					s := 0.0
					for d := 0; d < dh; d++ {
						s += q[i][o+d] * k[j][o+d]
					}
					scores[j] = s / math.Sqrt(float64(dh))
					maxS = math.Max(maxS, scores[j])
				}
				sum := 0.0
				for j := range scores {
					scores[j] = math.Exp(scores[j] - maxS)
					sum += scores[j]
				}
				for j := 0; j < n; j++ {
					for d := 0; d < dh; d++ {
						ctx[i][o+d] += scores[j] / sum * v[j][o+d]
					}
				}
			}
		}
		att := linear64(ctx, get(p+"attention.output.dense.weight"), get(p+"attention.output.dense.bias"))
		x = layerNorm64(add64(x, att), get(p+"attention.output.LayerNorm.weight"), get(p+"attention.output.LayerNorm.bias"))
		inter := linear64(x, get(p+"intermediate.dense.weight"), get(p+"intermediate.dense.bias"))
		for _, row := range inter {
			for j, z := range row {
				row[j] = 0.5 * z * (1 + math.Erf(z/math.Sqrt2))
			}
		}
		out := linear64(inter, get(p+"output.dense.weight"), get(p+"output.dense.bias"))
		x = layerNorm64(add64(x, out), get(p+"output.LayerNorm.weight"), get(p+"output.LayerNorm.bias"))
	}
	mean := make([]float64, h)
	for _, row := range x {
		for j, z := range row {
			mean[j] += z / float64(n)
		}
	}
	norm := 0.0
	for _, z := range mean {
		norm += z * z
	}
	norm = math.Sqrt(norm)
	for j := range mean {
		mean[j] /= norm
	}
	return mean
}

func linear64(x [][]float64, w, b []float64) [][]float64 {
	out := make([][]float64, len(x))
	in := len(x[0])
	for i, row := range x {
		out[i] = make([]float64, len(b))
		for o := range b {
			s := b[o]
			for k := 0; k < in; k++ {
				s += row[k] * w[o*in+k]
			}
			out[i][o] = s
		}
	}
	return out
}

func add64(a, b [][]float64) [][]float64 {
	for i := range a {
		for j := range a[i] {
			a[i][j] += b[i][j]
		}
	}
	return a
}

func layerNorm64(x [][]float64, g, b []float64) [][]float64 {
	for _, row := range x {
		mean, variance := 0.0, 0.0
		for _, z := range row {
			mean += z
		}
		mean /= float64(len(row))
		for _, z := range row {
			variance += (z - mean) * (z - mean)
		}
		variance /= float64(len(row))
		inv := 1 / math.Sqrt(variance+1e-12)
		for j := range row {
			row[j] = (row[j]-mean)*inv*g[j] + b[j]
		}
	}
	return x
}
