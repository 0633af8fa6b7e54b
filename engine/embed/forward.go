package embed

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// pooling is how token vectors become one sentence vector.
type pooling int

const (
	poolMean pooling = iota // mean over the sequence's tokens (sentence-transformers default)
	poolCLS                 // the raw [CLS] token vector, without BERT's pooler layer
)

func (p pooling) String() string {
	if p == poolCLS {
		return "cls"
	}
	return "mean"
}

// rowChunk is how many rows one matmul task covers when a batch is tall
// enough to split by rows; 96 rows of a 1536-wide input fit in L2.
const rowChunk = 96

// forward runs the encoder over a packed batch: sequences (each already
// wrapped in [CLS] … [SEP]) are laid end to end, every position attends only
// to its own sequence, so there is no padding and no attention mask to apply.
// It returns one L2-normalised vector per sequence.
func (w *bertWeights) forward(seqs [][]int, pool pooling, workers int) [][]float32 {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	h := w.hidden
	offs := make([]int, len(seqs)+1)
	for i, s := range seqs {
		offs[i+1] = offs[i] + len(s)
	}
	total := offs[len(seqs)]
	rows := roundUp(total, kernelRows) + kernelRows // slack: a last block may read past a sequence end
	ws, _ := workspacePool.Get().(*workspace)
	if ws == nil {
		ws = &workspace{}
	}
	defer workspacePool.Put(ws)
	// A batch past a query's size gets buffers for a whole batch at once:
	// growing them batch by batch left each smaller set as garbage, which
	// the GC target (twice the live heap) kept resident.
	full := rows
	if rows > smallBatchRows {
		full = max(rows, roundUp(batchTokens, kernelRows)+kernelRows)
	}
	// Rows past total keep stale finite values from earlier batches; every
	// output row depends only on its own input row, so they never leak in.
	x := ws.x.take(rows*h, full*h)
	qkv := ws.qkv.take(rows*3*h, full*3*h)
	ctx := ws.ctx.take(rows*h, full*h)
	tmp := ws.tmp.take(rows*h, full*h)
	bands := (total + ffnBand - 1) / ffnBand
	banded := bands >= 2*workers || workers == 1
	var inter []float32
	if banded {
		for len(ws.band) < workers {
			ws.band = append(ws.band, nil)
		}
	} else {
		inter = ws.inter.take(rows*w.intermediate, rows*w.intermediate)
	}

	for si, s := range seqs {
		for i, id := range s {
			row := x[(offs[si]+i)*h : (offs[si]+i+1)*h]
			wr, pr := w.word[id*h:(id+1)*h], w.pos[i*h:(i+1)*h]
			for j := range row {
				row[j] = wr[j] + pr[j] + w.tokenType0[j]
			}
		}
	}
	parallelRows(total, workers, func(r0, r1 int) { addLayerNorm(x[r0*h:r1*h], nil, h, w.embNorm) })

	for li := range w.layer {
		l := &w.layer[li]
		matmul(x, h, &l.qkv, qkv, 3*h, total, workers)
		w.attention(qkv, ctx, seqs, offs, workers)
		matmul(ctx, h, &l.attnOut, tmp, h, total, workers)
		parallelRows(total, workers, func(r0, r1 int) { addLayerNorm(x[r0*h:r1*h], tmp[r0*h:r1*h], h, l.norm1) })
		if banded {
			w.ffnBanded(l, x, tmp, ws.band, total, bands, workers)
			continue
		}
		// A short batch (a query): too few rows to split, so each product
		// splits its columns across the workers instead.
		matmul(x, h, &l.ff1, inter, w.intermediate, total, workers)
		parallelRows(total, workers, func(r0, r1 int) { w.gelu(inter[r0*w.intermediate : r1*w.intermediate]) })
		matmul(inter, w.intermediate, &l.ff2, tmp, h, total, workers)
		parallelRows(total, workers, func(r0, r1 int) { addLayerNorm(x[r0*h:r1*h], tmp[r0*h:r1*h], h, l.norm2) })
	}

	out := make([][]float32, len(seqs))
	for si := range seqs {
		v := make([]float32, h)
		if pool == poolCLS {
			copy(v, x[offs[si]*h:(offs[si]+1)*h])
		} else {
			acc := make([]float64, h)
			for r := offs[si]; r < offs[si+1]; r++ {
				for j, z := range x[r*h : (r+1)*h] {
					acc[j] += float64(z)
				}
			}
			n := float64(offs[si+1] - offs[si])
			for j := range v {
				v[j] = float32(acc[j] / n)
			}
		}
		normalize(v)
		out[si] = v
	}
	return out
}

// ffnBand is how many rows one feed-forward task runs through both of its
// products: the band's GELU activations (48 x 1536 floats = 295 KB for
// MiniLM) stay in a 512 KB L2 between them instead of a whole batch's
// (12 MB) going out to memory and back.
const ffnBand = 48

// smallBatchRows bounds a batch that keeps buffers of its own size (a
// query, a few short texts).
const smallBatchRows = 256

// ffnBanded runs the feed-forward block (ff1, GELU, ff2, residual and layer
// norm) over rows [0, total) of x, band by band on workers goroutines, with
// one band buffer per worker.
func (w *bertWeights) ffnBanded(l *layerWeights, x, tmp []float32, band []buffer, total, bands, workers int) {
	h, inter := w.hidden, w.intermediate
	bandRows := roundUp(ffnBand, kernelRows)
	parallelWorkers(bands, workers, func(wk, t int) {
		r0, r1 := t*ffnBand, min((t+1)*ffnBand, total)
		blocks := (r1 - r0 + kernelRows - 1) / kernelRows
		buf := band[wk].take(bandRows*inter, bandRows*inter)
		var scratch [kernelRows * panelWidth]float32
		gemmPanels(x[r0*h:], h, &l.ff1, 0, l.ff1.panels, buf, inter, 0, blocks, h, &scratch)
		w.gelu(buf[:(r1-r0)*inter])
		gemmPanels(buf, inter, &l.ff2, 0, l.ff2.panels, tmp[r0*h:], h, 0, blocks, inter, &scratch)
		addLayerNorm(x[r0*h:r1*h], tmp[r0*h:r1*h], h, l.norm2)
	})
}

// gelu applies the model's GELU in place.
func (w *bertWeights) gelu(v []float32) {
	if !w.geluTanh {
		geluSlice(v)
		return
	}
	for j, z := range v {
		v[j] = geluTanh(z)
	}
}

// workspace holds one forward pass's activations, reused across calls.
type workspace struct {
	x, qkv, ctx, tmp, inter buffer
	band                    []buffer // one per worker (ffnBanded)
}

var workspacePool sync.Pool

type buffer []float32

// take returns n floats; when the buffer is too small it is reallocated
// (zeroed) with room for alloc >= n.
func (b *buffer) take(n, alloc int) []float32 {
	if cap(*b) < n {
		*b = make([]float32, max(n, alloc))
	}
	return (*b)[:n]
}

// matmul computes c[0:rows] = a[0:rows]·Wᵀ + b, a with row stride lda and c
// with row stride ldc; both must have rows rounded up to kernelRows.
func matmul(a []float32, lda int, m *packedMatrix, c []float32, ldc int, rows int, workers int) {
	blocks := (rows + kernelRows - 1) / kernelRows
	blocksPerChunk := rowChunk / kernelRows
	chunks := (blocks + blocksPerChunk - 1) / blocksPerChunk
	var tasks int
	var run func(t int, scratch *[kernelRows * panelWidth]float32)
	if chunks >= 2*workers || workers == 1 {
		// Tall batch: each task owns a band of rows across every panel.
		tasks = chunks
		run = func(t int, scratch *[kernelRows * panelWidth]float32) {
			b0, b1 := t*blocksPerChunk, min((t+1)*blocksPerChunk, blocks)
			gemmPanels(a, lda, m, 0, m.panels, c, ldc, b0, b1, m.in, scratch)
		}
	} else {
		// Short batch (a query): split the output columns instead.
		tasks = min(m.panels, workers*2)
		run = func(t int, scratch *[kernelRows * panelWidth]float32) {
			p0, p1 := t*m.panels/tasks, (t+1)*m.panels/tasks
			gemmPanels(a, lda, m, p0, p1, c, ldc, 0, blocks, m.in, scratch)
		}
	}
	parallelTasks(tasks, workers, func(t int) {
		var scratch [kernelRows * panelWidth]float32
		run(t, &scratch)
	})
}

var scratchPool sync.Pool

// attentionScratch is one worker's buffers for one (sequence, head) pair.
type attentionScratch struct {
	keys, values, scores, out, zero, inv buffer
}

// attention computes ctx = softmax(Q·Kᵀ/√d)·V per sequence and head, using
// the same micro-kernel with K and V packed as panels. The softmax divides
// after the product (n·d divisions per head instead of n·n).
func (w *bertWeights) attention(qkv, ctx []float32, seqs [][]int, offs []int, workers int) {
	h, heads := w.hidden, w.heads
	dh := h / heads
	scale := float32(1 / math.Sqrt(float64(dh)))
	ld := 3 * h
	parallelTasks(len(seqs)*heads, workers, func(t int) {
		si, hd := t/heads, t%heads
		n, off := len(seqs[si]), offs[si]
		s, _ := scratchPool.Get().(*attentionScratch)
		if s == nil {
			s = &attentionScratch{}
		}
		defer scratchPool.Put(s)
		n16, d16 := roundUp(n, panelWidth), roundUp(dh, panelWidth)
		n6 := roundUp(n, kernelRows)
		// K as a [n, dh] "weight": panel p, step k, lane j = K[p*16+j][k].
		// Lanes past n must be zero: their scores are never read, but must
		// stay finite.
		keys := s.keys.take(n16*dh, 0)
		clear(keys[(n16-panelWidth)*dh:])
		for i := 0; i < n; i++ {
			krow := qkv[(off+i)*ld+h+hd*dh : (off+i)*ld+h+(hd+1)*dh]
			panel := keys[(i/panelWidth)*dh*panelWidth+i%panelWidth:]
			for k, z := range krow {
				panel[k*panelWidth] = z
			}
		}
		// Vᵀ as a [dh, n] "weight": panel p, step k, lanes = V[k][p*16 : p*16+16].
		values := s.values.take(d16*n, 0)
		if d16 != dh {
			clear(values)
		}
		for k := 0; k < n; k++ {
			vrow := qkv[(off+k)*ld+2*h+hd*dh : (off+k)*ld+2*h+(hd+1)*dh]
			for p := 0; p*panelWidth < dh; p++ {
				copy(values[(p*n+k)*panelWidth:(p*n+k+1)*panelWidth], vrow[p*panelWidth:min(dh, (p+1)*panelWidth)])
			}
		}
		// Rows n..n6 of scores and out are computed from stale rows and
		// never read.
		scores := s.scores.take(n6*n16+kernelRows*n16, 0)
		zeroBias := s.zero.take(max(n16, d16), 0)
		clear(zeroBias)
		km := packedMatrix{in: dh, out: n16, panels: n16 / panelWidth, data: keys, bias: zeroBias}
		q := qkv[off*ld+hd*dh:]
		var scratch [kernelRows * panelWidth]float32
		gemmPanels(q, ld, &km, 0, km.panels, scores, n16, 0, n6/kernelRows, dh, &scratch)
		inv := s.inv.take(n, 0)
		for i := 0; i < n; i++ {
			inv[i] = 1 / softmaxExp(scores[i*n16:i*n16+n], scale)
		}
		vm := packedMatrix{in: n, out: d16, panels: d16 / panelWidth, data: values, bias: zeroBias}
		out := s.out.take(n6*d16, 0)
		gemmPanels(scores, n16, &vm, 0, vm.panels, out, d16, 0, n6/kernelRows, n, &scratch)
		for i := 0; i < n; i++ {
			dst := ctx[(off+i)*h+hd*dh : (off+i)*h+(hd+1)*dh]
			src := out[i*d16 : i*d16+dh]
			f := inv[i]
			for j := range dst {
				dst[j] = src[j] * f
			}
		}
	})
}

func addInto(dst, src []float32) {
	for i := range dst {
		dst[i] += src[i]
	}
}

// addLayerNormGo is the portable addLayerNorm.
func addLayerNormGo(x, t []float32, h int, n normWeights) {
	if t != nil {
		addInto(x, t[:len(x)])
	}
	for r := 0; r+h <= len(x); r += h {
		row := x[r : r+h]
		var mean float64
		for _, z := range row {
			mean += float64(z)
		}
		mean /= float64(h)
		var variance float64
		for _, z := range row {
			d := float64(z) - mean
			variance += d * d
		}
		variance /= float64(h)
		inv := float32(1 / math.Sqrt(variance+float64(n.eps)))
		m := float32(mean)
		for j, z := range row {
			row[j] = (z-m)*inv*n.g[j] + n.b[j]
		}
	}
}

// normalize scales v to unit L2 norm (a zero vector stays zero).
func normalize(v []float32) {
	var s float64
	for _, z := range v {
		s += float64(z) * float64(z)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// parallelTasks runs fn(0..n-1) on up to workers goroutines.
func parallelTasks(n, workers int, fn func(t int)) {
	parallelWorkers(n, workers, func(_, t int) { fn(t) })
}

// parallelWorkers runs fn(worker, 0..n-1) on up to workers goroutines;
// worker (0..workers-1) names the goroutine, so fn can own per-worker buffers.
func parallelWorkers(n, workers int, fn func(worker, t int)) {
	if n <= 1 || workers <= 1 {
		for t := 0; t < n; t++ {
			fn(0, t)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < min(workers, n); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t := int(next.Add(1)) - 1
				if t >= n {
					return
				}
				fn(g, t)
			}
		}()
	}
	wg.Wait()
}

// parallelRows splits rows [0, n) into one contiguous range per worker.
func parallelRows(n, workers int, fn func(r0, r1 int)) {
	parts := min(workers, max(1, n/32))
	parallelTasks(parts, workers, func(t int) { fn(t*n/parts, (t+1)*n/parts) })
}
