package bertgen

import (
	"fmt"
	"math/rand/v2"
)

// Config sizes a generated model.
type Config struct {
	Hidden       int
	Layers       int
	Heads        int
	Intermediate int
	MaxPositions int
	TypeVocab    int
	// VocabSize pads the vocabulary with [unusedN] tokens up to this size;
	// 0 keeps the natural size of the built-in word list (about 1.2k tokens).
	VocabSize int
	// MaxSeqLength is sentence-transformers' max_seq_length (0: MaxPositions).
	MaxSeqLength int
	Seed         uint64
}

// Tiny is the unit-test size: fast to generate, load and run.
func Tiny(seed uint64) Config {
	return Config{Hidden: 32, Layers: 2, Heads: 2, Intermediate: 64, MaxPositions: 64, TypeVocab: 2, MaxSeqLength: 32, Seed: seed}
}

// MiniLM has the shapes of sentence-transformers/all-MiniLM-L6-v2, for benchmarks.
func MiniLM(seed uint64) Config {
	return Config{Hidden: 384, Layers: 6, Heads: 12, Intermediate: 1536, MaxPositions: 512, TypeVocab: 2, VocabSize: 30522, MaxSeqLength: 256, Seed: seed}
}

// Tensor is one named parameter in PyTorch layout (row-major, [out, in] for linear weights).
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// Model is a generated BERT: configuration, vocabulary and parameters.
type Model struct {
	Config  Config
	Vocab   []string
	Tensors []Tensor // in the order BertModel.state_dict() lists them
	byName  map[string]*Tensor
}

// Generate builds a random model. Weights are scaled so activations stay near
// unit variance through every layer (unlike BERT's N(0, 0.02) init, whose tiny
// embeddings would make the result hinge on LayerNorm's epsilon).
func Generate(cfg Config) (*Model, error) {
	if cfg.Hidden <= 0 || cfg.Heads <= 0 || cfg.Hidden%cfg.Heads != 0 || cfg.Layers <= 0 || cfg.Intermediate <= 0 {
		return nil, fmt.Errorf("bertgen: invalid config %+v: hidden must be a positive multiple of heads", cfg)
	}
	if cfg.MaxSeqLength == 0 {
		cfg.MaxSeqLength = cfg.MaxPositions
	}
	vocab := Vocabulary(cfg.VocabSize)
	m := &Model{Config: cfg, Vocab: vocab, byName: map[string]*Tensor{}}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	h, in := cfg.Hidden, cfg.Intermediate
	normal := func(name string, std float64, shape ...int) {
		t := Tensor{Name: name, Shape: shape, Data: make([]float32, numel(shape))}
		for i := range t.Data {
			t.Data[i] = float32(rng.NormFloat64() * std)
		}
		m.Tensors = append(m.Tensors, t)
	}
	layerNorm := func(prefix string) {
		g := Tensor{Name: prefix + ".weight", Shape: []int{h}, Data: make([]float32, h)}
		for i := range g.Data {
			g.Data[i] = float32(1 + 0.1*rng.NormFloat64())
		}
		m.Tensors = append(m.Tensors, g)
		normal(prefix+".bias", 0.05, h)
	}
	linear := func(prefix string, out, inDim int) {
		normal(prefix+".weight", 1/sqrt(float64(inDim)), out, inDim)
		normal(prefix+".bias", 0.02, out)
	}
	normal("embeddings.word_embeddings.weight", 0.5, len(vocab), h)
	normal("embeddings.position_embeddings.weight", 0.2, cfg.MaxPositions, h)
	normal("embeddings.token_type_embeddings.weight", 0.2, cfg.TypeVocab, h)
	layerNorm("embeddings.LayerNorm")
	for l := 0; l < cfg.Layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		linear(p+"attention.self.query", h, h)
		linear(p+"attention.self.key", h, h)
		linear(p+"attention.self.value", h, h)
		linear(p+"attention.output.dense", h, h)
		layerNorm(p + "attention.output.LayerNorm")
		linear(p+"intermediate.dense", in, h)
		linear(p+"output.dense", h, in)
		layerNorm(p + "output.LayerNorm")
	}
	linear("pooler.dense", h, h)
	for i := range m.Tensors {
		m.byName[m.Tensors[i].Name] = &m.Tensors[i]
	}
	return m, nil
}

// Tensor returns the named parameter, or nil.
func (m *Model) Tensor(name string) *Tensor { return m.byName[name] }

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
