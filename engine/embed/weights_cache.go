package embed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The packed weights cache (recall_weights.bin beside spago_model.bin) holds
// bertWeights exactly as the forward pass uses them, extracted once from
// cybertron's loaded model. Later loads read it straight into one float32
// array instead of decoding the checkpoint through cybertron again: the
// decode builds a second full copy of the weights and much garbage (peak RSS
// ~290 MB for MiniLM against ~100 MB), and takes most of a cold CLI search.
// The cache names the checkpoint it came from (size and modification time)
// and carries CRCs of its data; anything that does not match is ignored
// and rebuilt from spago_model.bin.
//
// Version 2 checks the word-embedding table (half of MiniLM's 90 MB) a row
// at a time, when a text first uses the row, instead of all of it at load:
// a query reads a dozen of its 30,522 rows, and checking the whole table
// cost a hybrid CLI search ~15 ms of CRC and ~12,000 page faults for pages
// it never needed (the rest is checked at load: the forward pass reads all
// of it anyway).
const (
	fileWeightsCache = "recall_weights.bin"
	cacheMagic       = 0x32574c4352 // "RCLW2"
)

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// cacheHeader lists the ints of a bertWeights in a fixed order; the float
// data follows in the order of weightSlices.
func cacheHeader(w *bertWeights, srcSize, srcMtime int64) []int64 {
	b2i := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	h := []int64{cacheMagic, srcSize, srcMtime, int64(w.hidden), int64(w.heads), int64(w.layers), int64(w.intermediate),
		int64(w.maxPositions), b2i(w.geluTanh), int64(math.Float32bits(w.embNorm.eps))}
	for _, l := range w.layer {
		for _, m := range []packedMatrix{l.qkv, l.attnOut, l.ff1, l.ff2} {
			h = append(h, int64(m.in), int64(m.out), int64(m.panels))
		}
		h = append(h, int64(math.Float32bits(l.norm1.eps)), int64(math.Float32bits(l.norm2.eps)))
	}
	for _, s := range weightSlices(w) {
		h = append(h, int64(len(*s)))
	}
	return h
}

// weightSlices points at every float slice of w in cache order.
func weightSlices(w *bertWeights) []*[]float32 {
	out := []*[]float32{&w.word, &w.pos, &w.tokenType0, &w.embNorm.g, &w.embNorm.b}
	for i := range w.layer {
		l := &w.layer[i]
		for _, m := range []*packedMatrix{&l.qkv, &l.attnOut, &l.ff1, &l.ff2} {
			out = append(out, &m.data, &m.bias)
		}
		out = append(out, &l.norm1.g, &l.norm1.b, &l.norm2.g, &l.norm2.b)
	}
	return out
}

func sourceStamp(dir string) (int64, int64, error) {
	st, err := os.Stat(filepath.Join(dir, fileSpago))
	if err != nil {
		return 0, 0, err
	}
	return st.Size(), st.ModTime().UnixNano(), nil
}

func floatBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*4)
}

// writeWeightsCache stores w beside the checkpoint (best effort: a model
// folder may be read-only). It writes a temporary file and renames it.
func writeWeightsCache(dir string, w *bertWeights) error {
	size, mtime, err := sourceStamp(dir)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".weights-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	hdr := cacheHeader(w, size, mtime)
	crc := crc32.New(castagnoli())
	for _, s := range weightSlices(w)[1:] {
		crc.Write(floatBytes(*s))
	}
	rows := wordRowCRCs(w)
	if err := binary.Write(bw, binary.LittleEndian, int64(len(hdr))); err != nil {
		tmp.Close()
		return err
	}
	if err := binary.Write(bw, binary.LittleEndian, hdr); err != nil {
		tmp.Close()
		return err
	}
	if err := binary.Write(bw, binary.LittleEndian, crc.Sum32()); err != nil {
		tmp.Close()
		return err
	}
	if err := binary.Write(bw, binary.LittleEndian, rows); err != nil {
		tmp.Close()
		return err
	}
	for _, s := range weightSlices(w) {
		if _, err := bw.Write(floatBytes(*s)); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, fileWeightsCache))
}

var errStaleCache = errors.New("weights cache does not match the checkpoint")

// readWeightsCache loads the cache as one float32 array: the file mapped
// read-only where the platform can (unix), else read into memory. Mapped,
// the weights are page cache rather than Go heap: they cost no GC work, and
// the heap's next GC target (twice the live heap by default) no longer
// counts 90 MB of weights, which kept ~90 MB more garbage resident while
// embedding. It returns errStaleCache (or another error) when the cache
// cannot be used.
func readWeightsCache(dir string) (*bertWeights, error) {
	if !littleEndian() {
		return nil, errStaleCache
	}
	size, mtime, err := sourceStamp(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, fileWeightsCache))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var n int64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil || n < 10 || n > 1<<16 {
		return nil, errStaleCache
	}
	hdr := make([]int64, n)
	if err := binary.Read(r, binary.LittleEndian, hdr); err != nil {
		return nil, errStaleCache
	}
	var sum uint32
	if err := binary.Read(r, binary.LittleEndian, &sum); err != nil {
		return nil, errStaleCache
	}
	if hdr[0] != cacheMagic || hdr[1] != size || hdr[2] != mtime {
		return nil, errStaleCache
	}
	w := &bertWeights{hidden: int(hdr[3]), heads: int(hdr[4]), layers: int(hdr[5]), intermediate: int(hdr[6]),
		maxPositions: int(hdr[7]), geluTanh: hdr[8] == 1}
	if w.hidden <= 0 {
		return nil, errStaleCache
	}
	w.embNorm.eps = math.Float32frombits(uint32(hdr[9]))
	pos := 10
	if w.layers < 0 || w.layers > 1024 || pos+w.layers*14 > len(hdr) {
		return nil, errStaleCache
	}
	w.layer = make([]layerWeights, w.layers)
	for i := range w.layer {
		l := &w.layer[i]
		for _, m := range []*packedMatrix{&l.qkv, &l.attnOut, &l.ff1, &l.ff2} {
			m.in, m.out, m.panels = int(hdr[pos]), int(hdr[pos+1]), int(hdr[pos+2])
			pos += 3
		}
		l.norm1.eps, l.norm2.eps = math.Float32frombits(uint32(hdr[pos])), math.Float32frombits(uint32(hdr[pos+1]))
		pos += 2
	}
	slices := weightSlices(w)
	if len(hdr)-pos != len(slices) {
		return nil, errStaleCache
	}
	total := int64(0)
	for i := range slices {
		if hdr[pos+i] < 0 {
			return nil, errStaleCache
		}
		total += hdr[pos+i]
	}
	wordLen := hdr[pos]
	if wordLen%int64(w.hidden) != 0 || wordLen > total {
		return nil, errStaleCache
	}
	nrows := wordLen / int64(w.hidden)
	rowCRC := make([]uint32, nrows)
	if err := binary.Read(r, binary.LittleEndian, rowCRC); err != nil {
		return nil, errStaleCache
	}
	// Header length, header, CRC, row CRCs: each a multiple of 4 bytes,
	// which is all the float32 data needs to be aligned in the mapping.
	dataOff := 8 + 8*n + 4 + 4*nrows
	st, err := f.Stat()
	if err != nil || total <= 0 || total*4 > st.Size()-dataOff {
		return nil, errStaleCache
	}
	var all []float32
	if mem, unmap, err := mapFile(f, st.Size()); err == nil {
		all = unsafe.Slice((*float32)(unsafe.Pointer(&mem[dataOff])), total)
		w.release = unmap
	} else {
		all = make([]float32, total)
		if _, err := io.ReadFull(r, floatBytes(all)); err != nil {
			return nil, errStaleCache
		}
	}
	if crc32.Checksum(floatBytes(all[wordLen:]), castagnoli()) != sum {
		w.close()
		return nil, errStaleCache
	}
	w.rowCRC = rowCRC
	w.rowOK = make([]atomic.Uint32, (nrows+31)/32)
	off := int64(0)
	for i, s := range slices {
		n := hdr[pos+i]
		*s = all[off : off+n : off+n]
		off += n
	}
	return w, nil
}

// wordRowCRCs is the CRC of each row of the word-embedding table.
func wordRowCRCs(w *bertWeights) []uint32 {
	h := w.hidden
	out := make([]uint32, len(w.word)/h)
	for i := range out {
		out[i] = crc32.Checksum(floatBytes(w.word[i*h:(i+1)*h]), castagnoli())
	}
	return out
}

// ErrDamagedWeights says the packed-weights cache failed a row check.
var ErrDamagedWeights = errors.New("the packed weights cache is damaged")

// checkRows verifies the word-embedding rows of ids that no text used
// before (weights from the cache only; decoded weights need no check).
func (w *bertWeights) checkRows(ids []int) error {
	if w.rowCRC == nil {
		return nil
	}
	h := w.hidden
	for _, id := range ids {
		if id < 0 || id >= len(w.rowCRC) {
			continue // the tokenizer's ids are in range; forward would fail loudly anyway
		}
		word, bit := &w.rowOK[id/32], uint32(1)<<(id%32)
		if word.Load()&bit != 0 {
			continue
		}
		if crc32.Checksum(floatBytes(w.word[id*h:(id+1)*h]), castagnoli()) != w.rowCRC[id] {
			return fmt.Errorf("%w (token row %d); delete %s in the model folder and the next load rebuilds it from %s", ErrDamagedWeights, id, fileWeightsCache, fileSpago)
		}
		word.Or(bit)
	}
	return nil
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// weightsFor returns the packed weights of the model in dir: from the cache
// when it matches, else decoded through cybertron (and cached for next time).
func weightsFor(dir string, decode func() (*bertWeights, error)) (*bertWeights, error) {
	if w, err := readWeightsCache(dir); err == nil {
		return w, nil
	}
	w, err := decode()
	if err != nil {
		return nil, err
	}
	// Best effort: a read-only model folder only costs the slower load
	// next time.
	_ = writeWeightsCache(dir, w)
	return w, nil
}
