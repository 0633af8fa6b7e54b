package vectors

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unsafe"
)

// The vector file keeps a Set on disk in the layout it has in memory, so a
// process (a CLI search) maps it instead of reading every vector out of
// SQLite, quantising it and interning its fields again: on a 646-session
// history that read was most of a hybrid CLI search (see docs/semantic.md).
// It is a cache: derived from the index, rebuilt whenever it does not match,
// never the only copy of anything.
//
// The header names what the set was loaded from (Stamp: the index file's
// identity, the vector model, the vector generation and synced_at), so a
// file that was right for another index, another model or an older state
// is never used. Recall writes the file only through a temporary file
// renamed over it, and replaces an existing file only when it is provably
// its own: a regular file (never through a symlink) owned by this user, no
// group or other bits, and this format's magic.

const (
	fileMagic   = "RCLVEC02"
	fileVersion = 2
	// maxStringBytes bounds one string of the file's tables: the longest
	// field a set interns is a directory path.
	maxStringBytes = 1 << 16
)

// ErrStale says the vector file does not match the index as it is now (or
// is damaged): the caller loads from the index and writes it anew.
var ErrStale = errors.New("vector file is stale")

// ErrNotOurs says a file is at the vector file's path that Recall cannot
// prove it wrote: it is neither read nor replaced.
var ErrNotOurs = errors.New("not Recall's vector file")

// Stamp is what a vector file must have been made from to be used.
type Stamp struct {
	Dev, Ino uint64 // the index file's identity (a rebuilt index is a new file)
	Model    string // index.VectorModel key
	Gen      int64  // index vector_gen
	Synced   string // index synced_at
	Embedded int    // documents with a vector (index.VectorCounts)
	Total    int    // documents that could have one
}

// header is the fixed part of the file after the magic.
type header struct {
	Version  uint32
	Dims     uint32
	N        uint64
	Dev, Ino uint64
	Gen      int64
	Embedded uint64
	Total    uint64
	CRC      uint32 // of everything after the header but the int8 slab
	_        uint32
}

// section order in the file; each starts 8-byte aligned.
func (vs *Set) fixedSections() [][]byte {
	return [][]byte{
		sliceBytes(vs.rid), sliceBytes(vs.hash), sliceBytes(vs.scale),
		sliceBytes(vs.sess), sliceBytes(vs.root), sliceBytes(vs.dir), sliceBytes(vs.tool),
		sliceBytes(vs.kind), sliceBytes(vs.role), sliceBytes(vs.time),
	}
}

func sliceBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

func pad8(n int) int { return (n + 7) &^ 7 }

// WriteFile stores the set at path for st (see the file comment). The set
// must be sorted by rid (a full Load is). A file already at path that is
// not provably Recall's is left alone (ErrNotOurs).
func (vs *Set) WriteFile(path string, st Stamp) (err error) {
	if !vs.sortedByRID() {
		return errors.New("write vector file: set is not in rid order")
	}
	if err := checkReplaceable(path); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vectors-*")
	if err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	strs := encodeStrings(st.Model, st.Synced, &vs.ids, &vs.dirs, &vs.tools, &vs.kinds, &vs.roles)
	crc := crc32.New(castagnoli())
	crc.Write(strs)
	for _, s := range vs.fixedSections() {
		crc.Write(s)
	}
	h := header{Version: fileVersion, Dims: uint32(vs.dims), N: uint64(len(vs.rid)), Dev: st.Dev, Ino: st.Ino, Gen: st.Gen,
		Embedded: uint64(st.Embedded), Total: uint64(st.Total), CRC: crc.Sum32()}
	if _, err := bw.WriteString(fileMagic); err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	if err := binary.Write(bw, binary.LittleEndian, &h); err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	var zeros [8]byte
	write := func(b []byte) error {
		if _, err := bw.Write(b); err != nil {
			return err
		}
		_, err := bw.Write(zeros[:pad8(len(b))-len(b)])
		return err
	}
	if err := binary.Write(bw, binary.LittleEndian, uint64(len(strs))); err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	for _, s := range append([][]byte{strs}, vs.fixedSections()...) {
		if err := write(s); err != nil {
			return fmt.Errorf("write vector file: %w", err)
		}
	}
	if err := write(sliceBytes(vs.vec)); err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	// Durable before it is renamed into place: the int8 slab is not under
	// the CRC (checking it would touch every page of a million vectors),
	// so a torn file must never appear at path.
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	if err := checkReplaceable(path); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write vector file: %w", err)
	}
	return nil
}

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// checkReplaceable allows writing path when nothing is there or the file
// there is provably a vector file of this user's.
func checkReplaceable(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("vector file %s: %w", path, err)
	}
	if err := checkOwn(path, fi); err != nil {
		return err
	}
	f, err := openNoFollow(path)
	if err != nil {
		return fmt.Errorf("vector file %s: %w", path, err)
	}
	defer f.Close()
	var magic [len(fileMagic)]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != fileMagic {
		return fmt.Errorf("%s has no Recall vector-file header; remove it if it is not yours to keep: %w", path, ErrNotOurs)
	}
	return nil
}

// encodeStrings lays out the file's string tables: the stamp's model and
// synced_at, then each interner's strings, each as a uint32 length and
// bytes.
func encodeStrings(model, synced string, ins ...*interner) []byte {
	var b []byte
	put := func(s string) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	put(model)
	put(synced)
	for _, in := range ins {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(in.strs)))
		for _, s := range in.strs {
			put(s)
		}
	}
	return b
}

func decodeStrings(b []byte, ins ...*interner) (model, synced string, err error) {
	bad := fmt.Errorf("string tables: %w", ErrStale)
	next := func() (string, bool) {
		if len(b) < 4 {
			return "", false
		}
		n := int(binary.LittleEndian.Uint32(b))
		if n > maxStringBytes || len(b) < 4+n {
			return "", false
		}
		s := string(b[4 : 4+n])
		b = b[4+n:]
		return s, true
	}
	var ok bool
	if model, ok = next(); !ok {
		return "", "", bad
	}
	if synced, ok = next(); !ok {
		return "", "", bad
	}
	for _, in := range ins {
		if len(b) < 4 {
			return "", "", bad
		}
		n := int(binary.LittleEndian.Uint32(b))
		b = b[4:]
		if n > len(b)/4 {
			return "", "", bad
		}
		in.strs = make([]string, 0, n)
		in.idx = make(map[string]int32, n)
		for range n {
			s, ok := next()
			if !ok {
				return "", "", bad
			}
			in.idx[s] = int32(len(in.strs))
			in.strs = append(in.strs, s)
		}
	}
	if len(b) != 0 {
		return "", "", bad
	}
	return model, synced, nil
}

// OpenFile maps the vector file at path when it was made for want (see
// Stamp; Embedded and Total come from the file). A file that does not
// match, or is damaged, is ErrStale; one Recall cannot prove is its own is
// ErrNotOurs; a missing one is fs.ErrNotExist.
func OpenFile(path string, want Stamp) (*Set, Stamp, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, Stamp{}, err
	}
	if err := checkOwn(path, fi); err != nil {
		return nil, Stamp{}, err
	}
	f, err := openNoFollow(path)
	if err != nil {
		return nil, Stamp{}, fmt.Errorf("vector file %s: %w", path, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, Stamp{}, fmt.Errorf("vector file %s: %w", path, err)
	}
	if err := checkOwn(path, fi); err != nil { // the file opened, not the one looked at
		return nil, Stamp{}, err
	}
	size := fi.Size()
	hdrLen := int64(len(fileMagic)) + int64(unsafe.Sizeof(header{})) + 8
	if size < hdrLen {
		return nil, Stamp{}, fmt.Errorf("%s is too short for a vector file: %w", path, ErrNotOurs)
	}
	mem, unmap, err := mapFile(f, size)
	if err != nil {
		return nil, Stamp{}, fmt.Errorf("vector file %s: %w", path, err)
	}
	vs, st, err := decodeFile(mem, want)
	if err != nil {
		unmap()
		return nil, Stamp{}, fmt.Errorf("vector file %s: %w", path, err)
	}
	vs.unmap = unmap
	return vs, st, nil
}

func decodeFile(mem []byte, want Stamp) (*Set, Stamp, error) {
	if string(mem[:len(fileMagic)]) != fileMagic {
		return nil, Stamp{}, fmt.Errorf("no Recall vector-file header (remove it if it is not yours to keep): %w", ErrNotOurs)
	}
	off := len(fileMagic)
	var h header
	hs := int(unsafe.Sizeof(h))
	if _, err := binary.Decode(mem[off:off+hs], binary.LittleEndian, &h); err != nil {
		return nil, Stamp{}, fmt.Errorf("header: %w", ErrStale)
	}
	off += hs
	if h.Version != fileVersion || h.Dev != want.Dev || h.Ino != want.Ino || h.Gen != want.Gen {
		return nil, Stamp{}, ErrStale
	}
	n, d := int(h.N), int(h.Dims)
	if h.N > 1<<40 || h.Dims == 0 || h.Dims > 1<<16 {
		return nil, Stamp{}, ErrStale
	}
	strLen := int(binary.LittleEndian.Uint64(mem[off:]))
	off += 8
	// Bytes of each fixed section, in fixedSections order, then the slab.
	sizes := []int{8 * n, 8 * n, 4 * n, 4 * n, 4 * n, 4 * n, 4 * n, n, n, 8 * n}
	need := off + pad8(strLen)
	for _, s := range sizes {
		need += pad8(s)
	}
	need += pad8(n * d)
	if strLen < 0 || strLen > len(mem) || need != len(mem) {
		return nil, Stamp{}, fmt.Errorf("size: %w", ErrStale)
	}
	crc := crc32.New(castagnoli())
	strs := mem[off : off+strLen]
	crc.Write(strs)
	off += pad8(strLen)
	secs := make([][]byte, len(sizes))
	for i, s := range sizes {
		secs[i] = mem[off : off+s]
		crc.Write(secs[i])
		off += pad8(s)
	}
	if crc.Sum32() != h.CRC {
		return nil, Stamp{}, fmt.Errorf("checksum: %w", ErrStale)
	}
	vs := &Set{dims: d, parent: map[int32]int32{}, family: map[int32]int32{}}
	model, synced, err := decodeStrings(strs, &vs.ids, &vs.dirs, &vs.tools, &vs.kinds, &vs.roles)
	if err != nil {
		return nil, Stamp{}, err
	}
	if model != want.Model || synced != want.Synced {
		return nil, Stamp{}, ErrStale
	}
	vs.model = model
	vs.rid = castSlice[int64](secs[0], n)
	vs.hash = castSlice[uint64](secs[1], n)
	vs.scale = castSlice[float32](secs[2], n)
	vs.sess = castSlice[int32](secs[3], n)
	vs.root = castSlice[int32](secs[4], n)
	vs.dir = castSlice[int32](secs[5], n)
	vs.tool = castSlice[int32](secs[6], n)
	vs.kind = castSlice[uint8](secs[7], n)
	vs.role = castSlice[uint8](secs[8], n)
	vs.time = castSlice[int64](secs[9], n)
	vs.vec = castSlice[int8](mem[off:off+n*d], n*d)
	// Interned ids index the string tables: one out of range would be a
	// panic in a filter, so they are checked once here.
	for _, c := range []struct {
		ids []int32
		in  *interner
	}{{vs.sess, &vs.ids}, {vs.root, &vs.ids}, {vs.dir, &vs.dirs}, {vs.tool, &vs.tools}} {
		for _, id := range c.ids {
			if id < 0 || int(id) >= len(c.in.strs) {
				return nil, Stamp{}, fmt.Errorf("field table: %w", ErrStale)
			}
		}
	}
	for _, c := range []struct {
		ids []uint8
		in  *interner
	}{{vs.kind, &vs.kinds}, {vs.role, &vs.roles}} {
		for _, id := range c.ids {
			if int(id) >= len(c.in.strs) {
				return nil, Stamp{}, fmt.Errorf("field table: %w", ErrStale)
			}
		}
	}
	if !vs.sortedByRID() {
		return nil, Stamp{}, fmt.Errorf("order: %w", ErrStale)
	}
	st := want
	st.Embedded, st.Total = int(h.Embedded), int(h.Total)
	return vs, st, nil
}

func castSlice[T any](b []byte, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// RemoveFile deletes the vector file at path when it is provably Recall's
// (a missing one is no error): after `recall forget` the file must not
// keep the forgotten session's vectors and ids until the next rewrite.
func RemoveFile(path string) error {
	if err := checkReplaceable(path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove vector file: %w", err)
	}
	return nil
}
