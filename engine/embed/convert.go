package embed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/cybertron/pkg/vocabulary"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/nn/linear"
	"github.com/nlpodyssey/spago/nn/normalization/layernorm"
)

// File names in a model folder.
const (
	fileConfig      = "config.json"
	fileVocab       = "vocab.txt"
	fileTokConfig   = "tokenizer_config.json"
	fileSafetensors = "model.safetensors"
	filePyTorch     = "pytorch_model.bin"
	fileSpago       = "spago_model.bin"
	fileSTConfig    = "sentence_bert_config.json"
	filePooling     = "1_Pooling/config.json"
	fileManifest    = "manifest.json"
)

// convert writes dir/spago_model.bin, the gob file cybertron loads, from the
// Hugging Face weights in dir (model.safetensors, else pytorch_model.bin).
//
// We build the cybertron model ourselves rather than calling cybertron's
// converter because that converter reads only fp32 pickles (no safetensors,
// panics on fp16), prints to stdout, and hard-codes LayerNorm eps 1e-5; here
// the eps comes from config.json (1e-12 for BERT), as in PyTorch.
func convert(dir string) error {
	cfg, err := bert.ConfigFromFile[bert.Config](filepath.Join(dir, fileConfig))
	if err != nil {
		return fmt.Errorf("convert %s: read config.json: %w", dir, err)
	}
	if cfg.ModelType != "" && cfg.ModelType != "bert" {
		return fmt.Errorf("convert %s: model_type %q is not supported; only BERT models (such as all-MiniLM-L6-v2) are", dir, cfg.ModelType)
	}
	cfg.EmbeddingsSize = cfg.HiddenSize
	cfg.Architectures = []string{"BertModel"}
	ck, err := readCheckpoint(dir)
	if err != nil {
		return fmt.Errorf("convert %s: %w", dir, err)
	}
	vocab, err := vocabulary.NewFromFile(filepath.Join(dir, fileVocab))
	if err != nil {
		return fmt.Errorf("convert %s: read vocab.txt: %w", dir, err)
	}
	m, err := buildCybertron(cfg, ck, vocab)
	if err != nil {
		return fmt.Errorf("convert %s: %w", dir, err)
	}
	tmp := filepath.Join(dir, fileSpago+".tmp")
	if err := nn.DumpToFile(bert.NewModelForSequenceEncoding(m), tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("convert %s: write %s: %w", dir, fileSpago, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, fileSpago)); err != nil {
		return fmt.Errorf("convert %s: %w", dir, err)
	}
	return nil
}

func readCheckpoint(dir string) (checkpoint, error) {
	st := filepath.Join(dir, fileSafetensors)
	if _, err := os.Stat(st); err == nil {
		return readSafetensors(st)
	}
	pt := filepath.Join(dir, filePyTorch)
	if _, err := os.Stat(pt); err == nil {
		return readPyTorch(pt)
	}
	return nil, fmt.Errorf("no %s or %s in the folder", fileSafetensors, filePyTorch)
}

// buildCybertron fills a cybertron BERT with the checkpoint's tensors, using the
// same parameter mapping as cybertron's converter (attention split per head).
func buildCybertron(cfg bert.Config, ck checkpoint, vocab *vocabulary.Vocabulary) (*bert.Model, error) {
	if cfg.HiddenSize <= 0 || cfg.NumAttentionHeads <= 0 || cfg.HiddenSize%cfg.NumAttentionHeads != 0 {
		return nil, fmt.Errorf("config.json: hidden_size %d is not a multiple of num_attention_heads %d", cfg.HiddenSize, cfg.NumAttentionHeads)
	}
	if n := len(vocab.Items()); n != cfg.VocabSize { // not Size(): it returns the last id
		return nil, fmt.Errorf("vocab.txt has %d tokens but config.json says vocab_size %d", n, cfg.VocabSize)
	}
	m := bert.New[float32](cfg)
	m.Embeddings.Vocab = vocab
	var errs []error
	take := func(name string, size int) []float32 {
		d, ok := ck[name]
		if !ok {
			errs = append(errs, fmt.Errorf("missing tensor %s", name))
			return make([]float32, size)
		}
		if len(d) != size {
			errs = append(errs, fmt.Errorf("tensor %s has %d values, want %d", name, len(d), size))
			return make([]float32, size)
		}
		return d
	}
	h := cfg.HiddenSize
	eps := float32(cfg.LayerNormEps)
	if eps == 0 {
		eps = 1e-12
	}
	setNorm := func(n *layernorm.Model, prefix string) {
		mat.SetData(n.W, take(prefix+".weight", h))
		mat.SetData(n.B, take(prefix+".bias", h))
		n.Eps = nn.Buf(mat.Scalar(eps))
	}
	setLinear := func(l *linear.Model, prefix string, out, in int) {
		mat.SetData(l.W, take(prefix+".weight", out*in))
		mat.SetData(l.B, take(prefix+".bias", out))
	}
	emb := m.Embeddings
	word := take("embeddings.word_embeddings.weight", cfg.VocabSize*h)
	for i := 0; i < cfg.VocabSize; i++ {
		mat.SetData(emb.Tokens.Weights[i], word[i*h:(i+1)*h])
	}
	pos := take("embeddings.position_embeddings.weight", cfg.MaxPositionEmbeddings*h)
	for i := 0; i < cfg.MaxPositionEmbeddings; i++ {
		mat.SetData(emb.Positions.Weights[i], pos[i*h:(i+1)*h])
	}
	typ := take("embeddings.token_type_embeddings.weight", cfg.TypeVocabSize*h)
	for i := 0; i < cfg.TypeVocabSize; i++ {
		mat.SetData(emb.TokenTypes.Weights[i], typ[i*h:(i+1)*h])
	}
	setNorm(emb.Norm, "embeddings.LayerNorm")
	dk := h / cfg.NumAttentionHeads
	for l := 0; l < cfg.NumHiddenLayers; l++ {
		layer := m.Encoder.Layers[l]
		p := fmt.Sprintf("encoder.layer.%d.", l)
		att := layer.SelfAttention.Attention
		for _, part := range []string{"query", "key", "value"} {
			w := take(p+"attention.self."+part+".weight", h*h)
			b := take(p+"attention.self."+part+".bias", h)
			for j, head := range att.Heads {
				dst := map[string]*linear.Model{"query": head.Query, "key": head.Key, "value": head.Value}[part]
				mat.SetData(dst.W, w[j*dk*h:(j+1)*dk*h])
				mat.SetData(dst.B, b[j*dk:(j+1)*dk])
			}
		}
		setLinear(att.OutputMerge, p+"attention.output.dense", h, h)
		setNorm(layer.SelfAttention.Norm, p+"attention.output.LayerNorm")
		setLinear(layer.FF.MLP[0].(*linear.Model), p+"intermediate.dense", cfg.IntermediateSize, h)
		setLinear(layer.FF.MLP[2].(*linear.Model), p+"output.dense", h, cfg.IntermediateSize)
		setNorm(layer.FF.Norm, p+"output.LayerNorm")
	}
	if _, ok := ck["pooler.dense.weight"]; ok {
		setLinear(m.Pooler.Model[0].(*linear.Model), "pooler.dense", h, h)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("checkpoint does not match config.json: %w", err)
	}
	return m, nil
}
