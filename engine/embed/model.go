package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/spago/nn"
)

// batchTokens bounds the tokens packed into one forward pass: about 13 MB of
// activations for a MiniLM-sized model, and enough rows to keep both cores busy.
const batchTokens = 2048

// model is the Embedder over a converted BERT folder.
type model struct {
	info    Info
	tok     *tokenizer
	pool    pooling
	workers int

	mu      sync.RWMutex
	weights *bertWeights // nil after Close
}

// Load opens a converted model folder (see [Store.Import] and [Store]) and never
// touches the network: cybertron's downloader is not even linked in, only its
// BERT model and gob loader. The folder needs config.json, vocab.txt and
// spago_model.bin; tokenizer_config.json, sentence_bert_config.json,
// 1_Pooling/config.json and manifest.json refine it when present.
func Load(dir string) (Embedder, error) {
	m, err := load(dir)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func load(dir string) (m *model, err error) {
	if _, err := os.Stat(filepath.Join(dir, fileSpago)); errors.Is(err, fs.ErrNotExist) {
		if _, err2 := os.Stat(dir); errors.Is(err2, fs.ErrNotExist) {
			return nil, fmt.Errorf("load model %s: %w", dir, ErrNoModel)
		}
		return nil, fmt.Errorf("load model %s: no %s; install the folder with `recall models import %s`", dir, fileSpago, dir)
	}
	w, err := weightsFor(dir, func() (*bertWeights, error) {
		cb, err := nn.LoadFromFile[*bert.ModelForSequenceEncoding](filepath.Join(dir, fileSpago))
		if err != nil {
			return nil, fmt.Errorf("read %s (re-import or re-pull the model): %w", fileSpago, err)
		}
		return extractWeights(cb.Bert)
	})
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	vocab, err := loadVocab(filepath.Join(dir, fileVocab))
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	if len(vocab)*w.hidden != len(w.word) {
		return nil, fmt.Errorf("load model %s: vocab.txt has %d tokens, the weights %d", dir, len(vocab), len(w.word)/w.hidden)
	}
	var tc struct {
		DoLowerCase    *bool `json:"do_lower_case"`
		ModelMaxLength int64 `json:"model_max_length"`
	}
	if err := readOptionalJSON(filepath.Join(dir, fileTokConfig), &tc); err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	lower := tc.DoLowerCase == nil || *tc.DoLowerCase // BertTokenizer's default
	tok, err := newTokenizer(vocab, lower)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	maxTokens := w.maxPositions
	if tc.ModelMaxLength > 0 && tc.ModelMaxLength < int64(maxTokens) {
		maxTokens = int(tc.ModelMaxLength)
	}
	var st struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if err := readOptionalJSON(filepath.Join(dir, fileSTConfig), &st); err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	if st.MaxSeqLength > 0 && st.MaxSeqLength < maxTokens {
		maxTokens = st.MaxSeqLength // all-MiniLM-L6-v2 was trained on 256-token inputs
	}
	if maxTokens < 3 {
		return nil, fmt.Errorf("load model %s: a chunk of %d tokens cannot hold [CLS], text and [SEP]; check max_seq_length", dir, maxTokens)
	}
	pool, err := readPooling(dir)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	info := Info{ID: filepath.Base(dir), Dims: w.hidden, Pooling: pool.String(), MaxTokens: maxTokens}
	var man Manifest
	if err := readOptionalJSON(filepath.Join(dir, fileManifest), &man); err != nil {
		return nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	if man.Name != "" {
		info.ID, info.Revision = man.Name, man.Revision
	}
	return &model{info: info, tok: tok, pool: pool, weights: w}, nil
}

func readPooling(dir string) (pooling, error) {
	var pc struct {
		CLS      bool `json:"pooling_mode_cls_token"`
		Mean     bool `json:"pooling_mode_mean_tokens"`
		Max      bool `json:"pooling_mode_max_tokens"`
		MeanSqrt bool `json:"pooling_mode_mean_sqrt_len_tokens"`
	}
	if err := readOptionalJSON(filepath.Join(dir, filePooling), &pc); err != nil {
		return 0, err
	}
	switch {
	case pc.Max || pc.MeanSqrt || (pc.CLS && pc.Mean):
		return 0, fmt.Errorf("%s asks for a pooling mode other than mean or cls, which is not supported", filePooling)
	case pc.CLS:
		return poolCLS, nil
	}
	return poolMean, nil
}

func readOptionalJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", filepath.Base(path), err)
	}
	return nil
}

func (m *model) Info() Info { return m.info }

// Close waits for running Embed calls (they hold mu shared) before it
// releases the weights, which may be a mapping that must not be touched
// once unmapped.
func (m *model) Close() error {
	m.mu.Lock()
	w := m.weights
	m.weights = nil
	m.mu.Unlock()
	if w != nil {
		w.close()
	}
	return nil
}

// Embed tokenizes each text, cuts it into windows of MaxTokens-2 tokens, runs
// the windows through the encoder in packed batches, and averages each text's
// window vectors.
func (m *model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.weights == nil {
		return nil, ErrClosed
	}
	var seqs [][]int
	var owner []int
	step := m.info.MaxTokens - 2
	for ti, text := range texts {
		ids := m.tok.IDs(text)
		for start := 0; start == 0 || start < len(ids); start += step {
			end := min(start+step, len(ids))
			seq := make([]int, 0, end-start+2)
			seq = append(seq, m.tok.clsID)
			seq = append(seq, ids[start:end]...)
			seq = append(seq, m.tok.sepID)
			if err := m.weights.checkRows(seq); err != nil {
				return nil, fmt.Errorf("embed: %w", err)
			}
			seqs = append(seqs, seq)
			owner = append(owner, ti)
		}
	}
	out := make([][]float32, len(texts))
	counts := make([]int, len(texts))
	for b0 := 0; b0 < len(seqs); {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		b1, n := b0, 0
		for b1 < len(seqs) && (b1 == b0 || n+len(seqs[b1]) <= batchTokens) {
			n += len(seqs[b1])
			b1++
		}
		vecs := m.weights.forward(seqs[b0:b1], m.pool, m.workers)
		for i, v := range vecs {
			t := owner[b0+i]
			if out[t] == nil {
				out[t] = v
			} else {
				addInto(out[t], v)
			}
			counts[t]++
		}
		b0 = b1
	}
	for t, v := range out {
		if counts[t] > 1 {
			normalize(v)
		}
	}
	return out, nil
}
