package embed

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn/linear"
	"github.com/nlpodyssey/spago/nn/normalization/layernorm"
)

// bertWeights are a cybertron BERT's parameters copied into flat float32
// slices and packed for the batched forward pass. Query, key and value
// (which cybertron stores per head) are fused into one [3h, h] matrix.
type bertWeights struct {
	hidden, heads, layers, intermediate, maxPositions int
	word, pos, tokenType0                             []float32
	embNorm                                           normWeights
	layer                                             []layerWeights
	// geluTanh selects the tanh approximation of GELU. Hugging Face's "gelu"
	// is the exact erf form; cybertron computes tanh for it, which changes the
	// last digits of a vector. Tests set it to compare with cybertron exactly.
	geluTanh bool
	// release unmaps the weights when they are a mapped cache file (nil
	// when they live on the Go heap); see close.
	release func()
	// rowCRC and rowOK check the word-embedding table a row at a time
	// (weights read from the cache; see checkRows).
	rowCRC []uint32
	rowOK  []atomic.Uint32
}

// close releases mapped weights; w must not be used after it.
func (w *bertWeights) close() {
	if w.release != nil {
		w.release()
		w.release = nil
	}
}

type normWeights struct {
	g, b []float32
	eps  float32
}

type layerWeights struct {
	qkv, attnOut, ff1, ff2 packedMatrix
	norm1, norm2           normWeights
}

func f32(m mat.Tensor) []float32 { return m.Data().F32() }

func extractWeights(m *bert.Model) (*bertWeights, error) {
	c := m.Config
	act := strings.ToLower(c.HiddenAct)
	if act != "gelu" && act != "gelu_new" && act != "gelu_pytorch_tanh" {
		return nil, fmt.Errorf("hidden_act %q is not supported (want gelu)", c.HiddenAct)
	}
	if c.EmbeddingsSize != 0 && c.EmbeddingsSize != c.HiddenSize {
		return nil, fmt.Errorf("embedding size %d differs from hidden size %d; factorised embeddings are not supported", c.EmbeddingsSize, c.HiddenSize)
	}
	h := c.HiddenSize
	w := &bertWeights{
		hidden: h, heads: c.NumAttentionHeads, layers: c.NumHiddenLayers,
		intermediate: c.IntermediateSize, maxPositions: c.MaxPositionEmbeddings,
		geluTanh: act != "gelu",
	}
	e := m.Embeddings
	w.word = make([]float32, 0, e.Tokens.Size*h)
	for _, p := range e.Tokens.Weights {
		w.word = append(w.word, f32(p)...)
	}
	for _, p := range e.Positions.Weights {
		w.pos = append(w.pos, f32(p)...)
	}
	w.tokenType0 = append([]float32(nil), f32(e.TokenTypes.Weights[0])...)
	w.embNorm = normOf(e.Norm)
	for _, l := range m.Encoder.Layers {
		att := l.SelfAttention.Attention
		qkvW := make([]float32, 0, 3*h*h)
		qkvB := make([]float32, 0, 3*h)
		for part := 0; part < 3; part++ {
			for _, head := range att.Heads {
				lin := [3]*linear.Model{head.Query, head.Key, head.Value}[part]
				qkvW = append(qkvW, f32(lin.W)...)
				qkvB = append(qkvB, f32(lin.B)...)
			}
		}
		ff1 := l.FF.MLP[0].(*linear.Model)
		ff2 := l.FF.MLP[2].(*linear.Model)
		w.layer = append(w.layer, layerWeights{
			qkv:     packMatrix(qkvW, qkvB, 3*h, h),
			attnOut: packMatrix(f32(att.OutputMerge.W), f32(att.OutputMerge.B), h, h),
			ff1:     packMatrix(f32(ff1.W), f32(ff1.B), c.IntermediateSize, h),
			ff2:     packMatrix(f32(ff2.W), f32(ff2.B), h, c.IntermediateSize),
			norm1:   normOf(l.SelfAttention.Norm),
			norm2:   normOf(l.FF.Norm),
		})
	}
	if len(w.word) != c.VocabSize*h || len(w.pos) != c.MaxPositionEmbeddings*h || len(w.layer) != c.NumHiddenLayers {
		return nil, fmt.Errorf("model weights do not match its config (vocab %d, positions %d, layers %d)", c.VocabSize, c.MaxPositionEmbeddings, c.NumHiddenLayers)
	}
	return w, nil
}

func normOf(n *layernorm.Model) normWeights {
	eps := float32(1e-12)
	if n.Eps != nil && n.Eps.Tensor != nil {
		eps = n.Eps.Item().F32()
	}
	return normWeights{g: append([]float32(nil), f32(n.W)...), b: append([]float32(nil), f32(n.B)...), eps: eps}
}
