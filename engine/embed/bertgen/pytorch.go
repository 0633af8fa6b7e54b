package bertgen

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
)

// WritePyTorch writes tensors as torch.save does for a state_dict since
// PyTorch 1.6: a zip archive (stored, 64-byte aligned entries) holding
// archive/data.pkl (pickle protocol 2 of an OrderedDict of
// torch._utils._rebuild_tensor_v2 calls) and one little-endian storage per
// tensor under archive/data/N. extraLong adds int64 tensors such as BERT's
// embeddings.position_ids buffer, which converters must skip.
func WritePyTorch(path string, tensors []Tensor, extraLong map[string][]int64) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write pytorch model: %w", err)
	}
	cw := &countingWriter{w: f}
	zw := zip.NewWriter(cw)
	var p pickler
	p.proto()
	p.global("collections", "OrderedDict")
	p.op(opEmptyTuple)
	p.op(opReduce)
	p.op(opMark)
	key := 0
	var storages [][]byte
	for _, t := range tensors {
		buf := make([]byte, 4*len(t.Data))
		for i, v := range t.Data {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		p.tensor(t.Name, "FloatStorage", key, t.Shape)
		storages = append(storages, buf)
		key++
	}
	for _, name := range sortedKeys(extraLong) {
		vals := extraLong[name]
		buf := make([]byte, 8*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(v))
		}
		p.tensor(name, "LongStorage", key, []int{1, len(vals)})
		storages = append(storages, buf)
		key++
	}
	p.op(opSetItems)
	p.op(opStop)

	entries := []struct {
		name string
		data []byte
	}{{"archive/data.pkl", p.buf.Bytes()}, {"archive/byteorder", []byte("little")}}
	for i, s := range storages {
		entries = append(entries, struct {
			name string
			data []byte
		}{fmt.Sprintf("archive/data/%d", i), s})
	}
	entries = append(entries, struct {
		name string
		data []byte
	}{"archive/version", []byte("3\n")})
	for _, e := range entries {
		if err := writeAligned(zw, cw, e.name, e.data); err != nil {
			f.Close()
			return fmt.Errorf("write pytorch model %s: %w", path, err)
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("write pytorch model %s: %w", path, err)
	}
	return f.Close()
}

// writeAligned stores data uncompressed with its first byte on a 64-byte
// boundary, padding with an "FB" extra field as PyTorch's writer does.
func writeAligned(zw *zip.Writer, cw *countingWriter, name string, data []byte) error {
	if err := zw.Flush(); err != nil {
		return err
	}
	const align = 64
	headerEnd := cw.n + 30 + int64(len(name)) + 4
	pad := int((align - headerEnd%align) % align)
	extra := make([]byte, 4+pad)
	binary.LittleEndian.PutUint16(extra[0:], 0x4246) // "FB"
	binary.LittleEndian.PutUint16(extra[2:], uint16(pad))
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name:               name,
		Method:             zip.Store,
		CRC32:              crc32.ChecksumIEEE(data),
		CompressedSize64:   uint64(len(data)),
		UncompressedSize64: uint64(len(data)),
		Extra:              extra,
	})
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Pickle opcodes (protocol 2) used by torch.save.
const (
	opProto      = 0x80
	opGlobal     = 'c'
	opEmptyTuple = ')'
	opReduce     = 'R'
	opMark       = '('
	opTuple      = 't'
	opBinPersID  = 'Q'
	opBinInt     = 'J'
	opBinInt1    = 'K'
	opBinInt2    = 'M'
	opBinUnicode = 'X'
	opNewFalse   = 0x89
	opSetItems   = 'u'
	opStop       = '.'
)

type pickler struct{ buf bytes.Buffer }

func (p *pickler) op(b byte) { p.buf.WriteByte(b) }

func (p *pickler) proto() { p.buf.Write([]byte{opProto, 2}) }

func (p *pickler) global(module, name string) {
	p.op(opGlobal)
	p.buf.WriteString(module + "\n" + name + "\n")
}

func (p *pickler) str(s string) {
	p.op(opBinUnicode)
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(s)))
	p.buf.Write(n[:])
	p.buf.WriteString(s)
}

func (p *pickler) int(v int) {
	switch {
	case v >= 0 && v < 256:
		p.buf.Write([]byte{opBinInt1, byte(v)})
	case v >= 0 && v < 65536:
		p.buf.Write([]byte{opBinInt2, byte(v), byte(v >> 8)})
	default:
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(int32(v)))
		p.op(opBinInt)
		p.buf.Write(n[:])
	}
}

func (p *pickler) intTuple(vs []int) {
	p.op(opMark)
	for _, v := range vs {
		p.int(v)
	}
	p.op(opTuple)
}

// tensor pickles `name: _rebuild_tensor_v2(storage, 0, shape, stride, False, OrderedDict())`.
func (p *pickler) tensor(name, storageType string, key int, shape []int) {
	p.str(name)
	p.global("torch._utils", "_rebuild_tensor_v2")
	p.op(opMark)
	// persistent id: ('storage', torch.FloatStorage, key, 'cpu', numel)
	p.op(opMark)
	p.str("storage")
	p.global("torch", storageType)
	p.str(fmt.Sprint(key))
	p.str("cpu")
	p.int(numel(shape))
	p.op(opTuple)
	p.op(opBinPersID)
	p.int(0)
	p.intTuple(shape)
	stride := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		stride[i] = s
		s *= shape[i]
	}
	p.intTuple(stride)
	p.op(opNewFalse)
	p.global("collections", "OrderedDict")
	p.op(opEmptyTuple)
	p.op(opReduce)
	p.op(opTuple)
	p.op(opReduce)
}
