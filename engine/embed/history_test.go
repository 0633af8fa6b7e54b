package embed

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/embed/bertgen"
	"github.com/recallhq/recall/engine/index"
	rmodel "github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/redact"
	"github.com/recallhq/recall/engine/source/opencode"
)

// The history-text set: what the engine's embedding queue would hand the
// model for the public corpus (testdata/corpus/public/opencode.db). The rules
// copy engine/semantic.go (embeddedKinds, maxEmbedBytes, maxEmbedToolBytes,
// embedText) and engine/index/text.go (partDocs); this package cannot import
// the engine, which imports it.
const (
	historyMaxBytes     = 2048 // engine.maxEmbedBytes
	historyMaxToolBytes = 512  // engine.maxEmbedToolBytes
)

// historyDB is the public corpus, relative to this package; RECALL_EMBED_DB
// names another opencode.db (a bigger clone from make bench).
func historyDB() string {
	if p := os.Getenv("RECALL_EMBED_DB"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "testdata", "corpus", "public", "opencode.db")
}

var (
	historyModelOnce sync.Once
	historyModelDir  string
	historyModelErr  error
)

// historyModel is a random all-MiniLM-L6-v2-shaped model (as miniLMModel)
// with the real model's vocabulary (testdata/bert-base-uncased), so history
// text becomes as many tokens as it would for all-MiniLM-L6-v2. It lives
// under miniLMDir, which TestMain removes.
func historyModel(tb testing.TB) string {
	tb.Helper()
	base := miniLMModel(tb)
	historyModelOnce.Do(func() {
		historyModelDir = filepath.Join(base, "history-model")
		vocab, err := loadVocab(filepath.Join("testdata", "bert-base-uncased", "vocab.txt"))
		if err != nil {
			historyModelErr = err
			return
		}
		m, err := bertgen.Generate(bertgen.MiniLM(1))
		if err != nil {
			historyModelErr = err
			return
		}
		if len(vocab) != len(m.Vocab) {
			historyModelErr = fmt.Errorf("bert-base-uncased vocabulary has %d tokens, the MiniLM shape %d", len(vocab), len(m.Vocab))
			return
		}
		m.Vocab = vocab
		if err = m.WriteDir(historyModelDir, bertgen.Safetensors); err == nil {
			err = convert(historyModelDir)
		}
		historyModelErr = err
	})
	if historyModelErr != nil {
		tb.Fatal(historyModelErr)
	}
	return historyModelDir
}

var (
	historyOnce  sync.Once
	historyCache []string
	historyErr   error
)

// historyTexts returns the distinct texts the queue would embed, in the
// order the history lists them (the queue also embeds each distinct text once).
func historyTexts(tb testing.TB) []string {
	tb.Helper()
	historyOnce.Do(func() { historyCache, historyErr = loadHistoryTexts(historyDB()) })
	if historyErr != nil {
		tb.Fatalf("history texts from %s: %v", historyDB(), historyErr)
	}
	if len(historyCache) == 0 {
		tb.Fatalf("history texts from %s: none", historyDB())
	}
	return historyCache
}

func loadHistoryTexts(path string) ([]string, error) {
	ctx := context.Background()
	src, err := opencode.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	red := redact.Default()
	seen := map[string]bool{}
	var out []string
	add := func(kind rmodel.Kind, text string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		text = red.Redact(text)
		limit := historyMaxBytes
		if kind == rmodel.KindTool {
			limit = historyMaxToolBytes
		}
		if len(text) > limit {
			cut := limit
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut]
		}
		if !seen[text] {
			seen[text] = true
			out = append(out, text)
		}
	}
	sessions, err := src.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sessions {
		add(rmodel.KindTitle, s.Title)
		err := src.Messages(ctx, s, func(m *rmodel.Message) error {
			for i := range m.Parts {
				p := &m.Parts[i]
				switch p.Kind {
				case rmodel.KindText, rmodel.KindReasoning, rmodel.KindSubtask, rmodel.KindSummary:
					add(p.Kind, p.Text)
				case rmodel.KindTool:
					add(p.Kind, index.ToolDocText(p.Tool, p.Title, p.Input))
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TestHistoryTextsMatchReference: the batched forward pass agrees with a
// plain one (each chunk alone; attention, softmax, GELU, layer norm and
// pooling written out in float64 from the HF definitions; only the linear
// layers share the matmul kernel, which TestMatmulOddShapes checks against
// float64) on every text of the history set: minimum cosine >= 0.999.
func TestHistoryTextsMatchReference(t *testing.T) {
	texts := historyTexts(t)
	e, err := load(historyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("RECALL_EMBED_ALL") == "" {
		// The reference costs as much as the model (~90 s for every text on
		// 2 cores); the longest texts (most chunks, longest attention) and
		// every 10th of the rest keep the check within a few seconds.
		// RECALL_EMBED_ALL=1 checks them all.
		texts = referenceSample(e, texts)
	}
	got := make([][]float32, 0, len(texts))
	for b0 := 0; b0 < len(texts); b0 += historyBatch {
		vecs, err := e.Embed(context.Background(), texts[b0:min(b0+historyBatch, len(texts))])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, vecs...)
	}
	cos := make([]float64, len(texts))
	parallelTasks(len(texts), runtime.GOMAXPROCS(0), func(i int) {
		cos[i] = cosine(got[i], referenceEmbed(e, texts[i]))
	})
	worst, worstText := 2.0, -1
	for i, c := range cos {
		if c < worst {
			worst, worstText = c, i
		}
	}
	t.Logf("%d texts: minimum cosine 1 - %.2g (text %d, %d tokens)", len(texts), 1-worst, worstText, len(e.tok.IDs(texts[worstText])))
	if worst < 0.999 {
		t.Errorf("minimum cosine to the reference %.6f < 0.999 on text %d: %.80q", worst, worstText, texts[worstText])
	}
}

// referenceSample is the 30 longest texts by tokens and every 10th other.
func referenceSample(e *model, texts []string) []string {
	idx := make([]int, len(texts))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return len(e.tok.IDs(texts[idx[a]])) > len(e.tok.IDs(texts[idx[b]])) })
	var out []string
	for r, i := range idx {
		if r < 30 || r%10 == 0 {
			out = append(out, texts[i])
		}
	}
	return out
}

func cosine(a []float32, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * b[i]
		aa += float64(a[i]) * float64(a[i])
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

// referenceEmbed embeds one text as model.Embed defines it (windows of
// MaxTokens-2 tokens, window vectors averaged), one window at a time.
func referenceEmbed(m *model, text string) []float64 {
	ids := m.tok.IDs(text)
	step := m.info.MaxTokens - 2
	out := make([]float64, m.weights.hidden)
	for start := 0; start == 0 || start < len(ids); start += step {
		end := min(start+step, len(ids))
		seq := append(append([]int{m.tok.clsID}, ids[start:end]...), m.tok.sepID)
		for j, z := range referenceForward(m.weights, seq, m.pool) {
			out[j] += z
		}
	}
	var n float64
	for _, z := range out {
		n += z * z
	}
	for j := range out {
		out[j] /= math.Sqrt(n)
	}
	return out
}

// referenceForward is BERT on one sequence, unpacked and unbatched.
func referenceForward(w *bertWeights, seq []int, pool pooling) []float64 {
	h, n, inter := w.hidden, len(seq), w.intermediate
	rows := roundUp(n, kernelRows) + kernelRows
	x := make([]float32, rows*h)
	for i, id := range seq {
		for j := 0; j < h; j++ {
			x[i*h+j] = w.word[id*h+j] + w.pos[i*h+j] + w.tokenType0[j]
		}
	}
	refNorm(x[:n*h], h, w.embNorm)
	qkv := make([]float32, rows*3*h)
	ctx := make([]float32, rows*h)
	tmp := make([]float32, rows*h)
	ff := make([]float32, rows*inter)
	dh := h / w.heads
	for li := range w.layer {
		l := &w.layer[li]
		matmul(x, h, &l.qkv, qkv, 3*h, n, 1)
		for hd := 0; hd < w.heads; hd++ {
			refAttentionHead(qkv, ctx, n, h, hd*dh, dh)
		}
		matmul(ctx, h, &l.attnOut, tmp, h, n, 1)
		for i := range x[:n*h] {
			x[i] += tmp[i]
		}
		refNorm(x[:n*h], h, l.norm1)
		matmul(x, h, &l.ff1, ff, inter, n, 1)
		for i, z := range ff[:n*inter] {
			zf := float64(z)
			if w.geluTanh {
				ff[i] = float32(0.5 * zf * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(zf+0.044715*zf*zf*zf))))
			} else {
				ff[i] = float32(0.5 * zf * (1 + math.Erf(zf/math.Sqrt2)))
			}
		}
		matmul(ff, inter, &l.ff2, tmp, h, n, 1)
		for i := range x[:n*h] {
			x[i] += tmp[i]
		}
		refNorm(x[:n*h], h, l.norm2)
	}
	v := make([]float64, h)
	if pool == poolCLS {
		for j := range v {
			v[j] = float64(x[j])
		}
	} else {
		for i := 0; i < n; i++ {
			for j := range v {
				v[j] += float64(x[i*h+j]) / float64(n)
			}
		}
	}
	var s float64
	for _, z := range v {
		s += z * z
	}
	for j := range v {
		v[j] /= math.Sqrt(s)
	}
	return v
}

// refAttentionHead computes one head's softmax(Q·Kᵀ/√d)·V for a sequence
// of n rows: both products through packMatrix and matmul, the softmax in
// float64.
func refAttentionHead(qkv, ctx []float32, n, h, col, dh int) {
	rows := roundUp(n, kernelRows) + kernelRows
	q := make([]float32, rows*dh)
	k := make([]float32, n*dh)
	vt := make([]float32, dh*n)
	for i := 0; i < n; i++ {
		copy(q[i*dh:(i+1)*dh], qkv[i*3*h+col:])
		copy(k[i*dh:(i+1)*dh], qkv[i*3*h+h+col:])
		for d := 0; d < dh; d++ {
			vt[d*n+i] = qkv[i*3*h+2*h+col+d]
		}
	}
	scores := make([]float32, rows*n)
	km := packMatrix(k, make([]float32, n), n, dh)
	matmul(q, dh, &km, scores, n, n, 1)
	scale := 1 / math.Sqrt(float64(dh))
	for i := 0; i < n; i++ {
		row := scores[i*n : (i+1)*n]
		maxv := math.Inf(-1)
		for _, z := range row {
			maxv = math.Max(maxv, float64(z)*scale)
		}
		var sum float64
		e := make([]float64, n)
		for j, z := range row {
			e[j] = math.Exp(float64(z)*scale - maxv)
			sum += e[j]
		}
		for j := range row {
			row[j] = float32(e[j] / sum)
		}
	}
	out := make([]float32, rows*dh)
	vm := packMatrix(vt, make([]float32, dh), dh, n)
	matmul(scores, n, &vm, out, dh, n, 1)
	for i := 0; i < n; i++ {
		copy(ctx[i*h+col:i*h+col+dh], out[i*dh:(i+1)*dh])
	}
}

// refNorm is LayerNorm over each h-wide row, in float64.
func refNorm(x []float32, h int, nw normWeights) {
	for r := 0; r < len(x); r += h {
		row := x[r : r+h]
		var mean, variance float64
		for _, z := range row {
			mean += float64(z)
		}
		mean /= float64(h)
		for _, z := range row {
			variance += (float64(z) - mean) * (float64(z) - mean)
		}
		inv := 1 / math.Sqrt(variance/float64(h)+float64(nw.eps))
		for j, z := range row {
			row[j] = float32((float64(z)-mean)*inv*float64(nw.g[j]) + float64(nw.b[j]))
		}
	}
}
