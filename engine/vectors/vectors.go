// Package vectors keeps the in-memory vector set semantic search scans: the
// index's vectors quantised to int8, the dot-product kernels (AVX2 on amd64),
// brute-force top-k, and query.Filter compiled against the set's own fields.
package vectors

import (
	"container/heap"
	"context"
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
)

// Set is the in-memory copy of the index's vectors that a semantic search
// scans by brute force. Vectors are int8-quantised with one float32 scale
// each: 384 dims cost 388 bytes instead of 1,536, so 200k vectors fit in
// ~80 MB (float32 would be 300 MB, the whole RSS budget with the model
// loaded), and the cosine error (~0.5% of the similarity) never reorders
// hits that matter. Beside each vector it keeps the document fields search
// filters need, interned, so filters apply before the dot product.
//
// A Set is not safe for concurrent use while it changes (Add, Load,
// Refresh, LoadLinks): the caller holds a lock over it, readers shared.
type Set struct {
	model string // index.VectorModel key the vectors came from
	dims  int

	rid    []int64
	hash   []uint64 // first 8 bytes of the text hash: detects a reused rid
	vec    []int8   // len(rid)*dims
	scale  []float32
	sess   []int32
	root   []int32
	dir    []int32
	tool   []int32
	kind   []uint8
	role   []uint8
	time   []int64
	pos    map[int64]int32
	ids    interner // session and root ids
	dirs   interner
	tools  interner
	kinds  interner
	roles  interner
	parent map[int32]int32 // subagent session -> parent session, interned
	family map[int32]int32 // subagent session -> its family's root, interned

	// unmap is set while the slices above point into a mapped vector file
	// (OpenFile); the set is copied to the heap before it changes.
	unmap func()
}

type interner struct {
	idx  map[string]int32
	strs []string
}

func (in *interner) id(s string) int32 {
	if in.idx == nil {
		in.idx = map[string]int32{}
	}
	if i, ok := in.idx[s]; ok {
		return i
	}
	i := int32(len(in.strs))
	in.idx[s] = i
	in.strs = append(in.strs, s)
	return i
}

func (in *interner) lookup(s string) (int32, bool) {
	i, ok := in.idx[s]
	return i, ok
}

// New is an empty set for the vectors of model (an index.VectorModel key).
func New(model string) *Set {
	return &Set{model: model, pos: map[int64]int32{}, parent: map[int32]int32{}, family: map[int32]int32{}}
}

// Model is the model key the set holds vectors of.
func (vs *Set) Model() string { return vs.model }

// Len is the number of vectors.
func (vs *Set) Len() int { return len(vs.rid) }

// Bytes is the memory the vectors and their fields take, roughly.
func (vs *Set) Bytes() int { return len(vs.vec) + len(vs.rid)*(8+8+4+4*4+2+8) }

// Add puts one stored row in the set (replacing the document's vector when
// it has one).
func (vs *Set) Add(r *index.VectorRow) {
	vs.materialize()
	n := len(r.Vec) / 4
	if n == 0 {
		return
	}
	if vs.dims == 0 {
		vs.dims = n
	}
	if n != vs.dims {
		return // another model's row; the key check makes this unreachable
	}
	if i, ok := vs.pos[r.DocRID]; ok {
		vs.set(int(i), r)
		return
	}
	vs.pos[r.DocRID] = int32(len(vs.rid))
	vs.rid = append(vs.rid, r.DocRID)
	vs.hash = append(vs.hash, hash64(r.Hash))
	vs.vec = append(vs.vec, make([]int8, n)...)
	vs.scale = append(vs.scale, 0)
	vs.sess = append(vs.sess, 0)
	vs.root = append(vs.root, 0)
	vs.dir = append(vs.dir, 0)
	vs.tool = append(vs.tool, 0)
	vs.kind = append(vs.kind, 0)
	vs.role = append(vs.role, 0)
	vs.time = append(vs.time, 0)
	vs.set(len(vs.rid)-1, r)
}

func (vs *Set) set(i int, r *index.VectorRow) {
	vs.hash[i] = hash64(r.Hash)
	vs.scale[i] = quantizeLE(vs.vec[i*vs.dims:(i+1)*vs.dims], r.Vec)
	vs.sess[i] = vs.ids.id(r.SessionID)
	vs.root[i] = vs.ids.id(r.RootID)
	vs.dir[i] = vs.dirs.id(r.Directory)
	vs.tool[i] = vs.tools.id(r.Tool)
	vs.kind[i] = uint8(vs.kinds.id(r.Kind))
	vs.role[i] = uint8(vs.roles.id(r.Role))
	vs.time[i] = r.Time
}

// remove drops the rows whose rid is in gone, compacting in place.
func (vs *Set) remove(gone map[int64]bool) {
	if len(gone) == 0 {
		return
	}
	vs.materialize()
	j := 0
	d := vs.dims
	for i := range vs.rid {
		if gone[vs.rid[i]] {
			delete(vs.pos, vs.rid[i])
			continue
		}
		if i != j {
			vs.rid[j], vs.hash[j], vs.scale[j] = vs.rid[i], vs.hash[i], vs.scale[i]
			copy(vs.vec[j*d:(j+1)*d], vs.vec[i*d:(i+1)*d])
			vs.sess[j], vs.root[j], vs.dir[j], vs.tool[j] = vs.sess[i], vs.root[i], vs.dir[i], vs.tool[i]
			vs.kind[j], vs.role[j], vs.time[j] = vs.kind[i], vs.role[i], vs.time[i]
			vs.pos[vs.rid[j]] = int32(j)
		}
		j++
	}
	vs.rid, vs.hash, vs.scale, vs.vec = vs.rid[:j], vs.hash[:j], vs.scale[:j], vs.vec[:j*d]
	vs.sess, vs.root, vs.dir, vs.tool = vs.sess[:j], vs.root[:j], vs.dir[:j], vs.tool[:j]
	vs.kind, vs.role, vs.time = vs.kind[:j], vs.role[:j], vs.time[:j]
}

// Load reads every vector of the set's model from ix (rids nil) or only
// those of rids.
func (vs *Set) Load(ctx context.Context, ix *index.Index, rids []int64) error {
	if rids == nil {
		// Size the slabs once: appending 80 MB in doublings would briefly
		// need twice that.
		if embedded, _, err := ix.VectorCounts(ctx, nil); err == nil && embedded > 0 {
			vs.reserve(embedded)
		}
	}
	return ix.ScanVectors(ctx, vs.model, rids, func(r *index.VectorRow) error {
		vs.Add(r)
		return nil
	})
}

func (vs *Set) reserve(n int) {
	vs.rid = make([]int64, 0, n)
	vs.hash = make([]uint64, 0, n)
	vs.scale = make([]float32, 0, n)
	vs.sess, vs.root, vs.dir, vs.tool = make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n)
	vs.kind, vs.role = make([]uint8, 0, n), make([]uint8, 0, n)
	vs.time = make([]int64, 0, n)
	// dims is unknown before the first row; 384 is MiniLM's and a
	// different width only costs one regrowth.
	vs.vec = make([]int8, 0, n*384)
	vs.pos = make(map[int64]int32, n)
}

// Refresh brings the set up to date with ix by difference: rows whose
// document is gone or whose text changed go, new rows are read. It costs
// one pass over doc_vectors (rid and hash), not a reload.
func (vs *Set) Refresh(ctx context.Context, ix *index.Index) error {
	vs.materialize()
	seen := make(map[int64]bool, len(vs.rid))
	var add []int64
	gone := map[int64]bool{}
	err := ix.VectorHashes(ctx, func(rid int64, h []byte) {
		seen[rid] = true
		i, ok := vs.pos[rid]
		switch {
		case !ok:
			add = append(add, rid)
		case vs.hash[i] != hash64(h):
			gone[rid] = true
			add = append(add, rid)
		}
	})
	if err != nil {
		return err
	}
	for _, rid := range vs.rid {
		if !seen[rid] {
			gone[rid] = true
		}
	}
	vs.remove(gone)
	if len(add) == 0 {
		return nil
	}
	return vs.Load(ctx, ix, add)
}

// LoadLinks reads which session is whose subagent from ix, for the
// Session and ExcludeSession filters.
func (vs *Set) LoadLinks(ctx context.Context, ix *index.Index) error {
	links, err := ix.SessionLinks(ctx)
	if err != nil {
		return err
	}
	vs.parent = make(map[int32]int32, len(links))
	vs.family = make(map[int32]int32, len(links))
	for s, l := range links {
		id := vs.ids.id(s)
		vs.parent[id] = vs.ids.id(l.Parent)
		vs.family[id] = vs.ids.id(l.Root)
	}
	return nil
}

func hash64(h []byte) uint64 {
	if len(h) < 8 {
		var b [8]byte
		copy(b[:], h)
		return binary.LittleEndian.Uint64(b[:])
	}
	return binary.LittleEndian.Uint64(h)
}

// quantizeLE writes the little-endian float32 vector b into dst as int8
// and returns the scale that maps them back.
func quantizeLE(dst []int8, b []byte) float32 {
	var maxAbs float32
	for i := range dst {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if a := float32(math.Abs(float64(x))); a > maxAbs {
			maxAbs = a
		}
	}
	if maxAbs == 0 {
		clear(dst)
		return 0
	}
	s := maxAbs / 127
	for i := range dst {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		dst[i] = int8(math.Round(float64(x / s)))
	}
	return s
}

// Query is a query vector quantised like the set's (see quantizeLE).
type Query struct {
	v     []int8
	scale float32
}

// NewQuery quantises a query embedding.
func NewQuery(v []float32) Query {
	q := Query{v: make([]int8, len(v))}
	var maxAbs float32
	for _, x := range v {
		if a := float32(math.Abs(float64(x))); a > maxAbs {
			maxAbs = a
		}
	}
	if maxAbs == 0 {
		return q
	}
	q.scale = maxAbs / 127
	for i, x := range v {
		q.v[i] = int8(math.Round(float64(x / q.scale)))
	}
	return q
}

// Filter is a query.Filter compiled against a set's interned fields,
// meaning what the SQL filter (engine/index) means. It is a pre-filter: the
// SQL filter runs again on the hits. It is valid for the set it was
// compiled for, until the set changes.
type Filter struct {
	none          bool // nothing can match
	dirOK         []bool
	after, before int64
	kinds, roles  []bool
	tools         []bool
	sessions      map[int32]bool
	excludeRoot   int32
	excludeSess   int32
	excludeRoots  map[int32]bool // forks (query.Filter.ExcludeRoots)
}

// Compile compiles f for this set.
func (vs *Set) Compile(f query.Filter) *Filter {
	vf := &Filter{after: f.After, before: f.Before, excludeRoot: -1, excludeSess: -1}
	if f.Directory != "" {
		dir := strings.TrimRight(f.Directory, "/")
		vf.dirOK = make([]bool, len(vs.dirs.strs))
		for i, d := range vs.dirs.strs {
			vf.dirOK[i] = d == dir || strings.HasPrefix(d, dir+"/")
		}
	}
	vf.kinds, vf.roles, vf.tools = allowed(&vs.kinds, f.Kinds), allowed(&vs.roles, f.Roles), allowed(&vs.tools, f.Tools)
	if f.Session != "" {
		vf.sessions = map[int32]bool{}
		if id, ok := vs.ids.lookup(f.Session); ok {
			vf.sessions[id] = true
			for s, p := range vs.parent {
				if p == id {
					vf.sessions[s] = true
				}
			}
		}
		if len(vf.sessions) == 0 {
			vf.none = true
		}
	}
	for _, r := range f.ExcludeRoots {
		if id, ok := vs.ids.lookup(r); ok {
			if vf.excludeRoots == nil {
				vf.excludeRoots = map[int32]bool{}
			}
			vf.excludeRoots[id] = true
		}
	}
	if x := f.ExcludeSession; x != "" {
		if id, ok := vs.ids.lookup(x); ok {
			vf.excludeSess = id
			vf.excludeRoot = id
			if root, ok := vs.family[id]; ok {
				vf.excludeRoot = root
			}
		}
	}
	return vf
}

// allowed marks the interned values of in that vals name (nil: no
// restriction).
func allowed[T ~string](in *interner, vals []T) []bool {
	if len(vals) == 0 {
		return nil
	}
	ok := make([]bool, len(in.strs))
	for _, v := range vals {
		if i, found := in.lookup(string(v)); found {
			ok[i] = true
		}
	}
	return ok
}

func (vf *Filter) pass(vs *Set, i int) bool {
	if vf.dirOK != nil && !vf.dirOK[vs.dir[i]] {
		return false
	}
	if vf.after != 0 && vs.time[i] < vf.after || vf.before != 0 && vs.time[i] >= vf.before {
		return false
	}
	if vf.kinds != nil && !vf.kinds[vs.kind[i]] || vf.roles != nil && !vf.roles[vs.role[i]] || vf.tools != nil && !vf.tools[vs.tool[i]] {
		return false
	}
	if vf.sessions != nil && !vf.sessions[vs.sess[i]] {
		return false
	}
	if vf.excludeRoot >= 0 && vs.root[i] == vf.excludeRoot || vf.excludeRoots[vs.root[i]] {
		return false
	}
	if vf.excludeSess >= 0 && (vs.sess[i] == vf.excludeSess || vs.root[i] == vf.excludeSess) {
		return false
	}
	return true
}

// Hit is one document and its cosine similarity to the query.
type Hit struct {
	RID int64
	Sim float32
}

// Search returns the k most similar documents passing vf, best first. The
// scan is split across GOMAXPROCS goroutines and stops early when ctx ends.
func (vs *Set) Search(ctx context.Context, q Query, vf *Filter, k int) []Hit {
	if vf.none || len(vs.rid) == 0 || len(q.v) != vs.dims || k <= 0 {
		return nil
	}
	d := vs.dims
	qq, qs := q.v, q.scale
	all := vs.scan(ctx, vf, k, func(i int) float32 {
		return float32(dotInt8(qq, vs.vec[i*d:(i+1)*d])) * qs * vs.scale[i]
	})
	return vs.hits(all, k)
}

// scored is a row of the set and its score.
type scored struct {
	i   int
	sim float32
}

type scoredHeap []scored // min-heap on sim

func (h scoredHeap) Len() int           { return len(h) }
func (h scoredHeap) Less(i, j int) bool { return h[i].sim < h[j].sim }
func (h scoredHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoredHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *scoredHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// scan returns the k best-scoring rows passing vf, in no order.
func (vs *Set) scan(ctx context.Context, vf *Filter, k int, score func(i int) float32) []scored {
	n := len(vs.rid)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/8192))
	heaps := make([]scoredHeap, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := make(scoredHeap, 0, k+1)
			release := vs.releasePages()
			done := lo // rows whose slab pages may be released
			for i := lo; i < hi; i++ {
				if i&4095 == 0 {
					if ctx.Err() != nil {
						break
					}
					if release && i-done >= releaseRows {
						vs.release(done, i)
						done = i
					}
				}
				if !vf.pass(vs, i) {
					continue
				}
				sim := score(i)
				if len(h) < k {
					heap.Push(&h, scored{i, sim})
				} else if sim > h[0].sim {
					h[0] = scored{i, sim}
					heap.Fix(&h, 0)
				}
			}
			if release {
				vs.release(done, hi)
			}
			heaps[w] = h
		}()
	}
	wg.Wait()
	var all []scored
	for _, h := range heaps {
		all = append(all, h...)
	}
	return all
}

// hits is the best k of all as Hits, best first (ties: higher rid first).
func (vs *Set) hits(all []scored, k int) []Hit {
	out := make([]Hit, len(all))
	for j, s := range all {
		out[j] = Hit{RID: vs.rid[s.i], Sim: s.sim}
	}
	sortHits(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// Similarity is the cosine of one document with the query (ok false when
// the document has no vector).
func (vs *Set) Similarity(q Query, rid int64) (float32, bool) {
	i, ok := vs.find(rid)
	if !ok || len(q.v) != vs.dims {
		return 0, false
	}
	d := vs.dims
	return float32(dotInt8(q.v, vs.vec[int(i)*d:(int(i)+1)*d])) * q.scale * vs.scale[i], true
}

func sortHits(h []Hit) {
	slices.SortFunc(h, func(a, b Hit) int {
		switch {
		case a.Sim > b.Sim:
			return -1
		case a.Sim < b.Sim:
			return 1
		case a.RID > b.RID:
			return -1
		case a.RID < b.RID:
			return 1
		}
		return 0
	})
}

// dotInt8Go is the portable integer dot product of two equal-length int8
// vectors.
func dotInt8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += int32(aa[0])*int32(bb[0]) + int32(aa[4])*int32(bb[4])
		s1 += int32(aa[1])*int32(bb[1]) + int32(aa[5])*int32(bb[5])
		s2 += int32(aa[2])*int32(bb[2]) + int32(aa[6])*int32(bb[6])
		s3 += int32(aa[3])*int32(bb[3]) + int32(aa[7])*int32(bb[7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// find is the row of rid: the map while the set is on the heap, a binary
// search over the rid-ordered rows of a mapped file (building the map
// would cost a CLI search ~40 bytes and a hash insert per vector).
func (vs *Set) find(rid int64) (int32, bool) {
	if vs.pos != nil {
		i, ok := vs.pos[rid]
		return i, ok
	}
	i, ok := slices.BinarySearch(vs.rid, rid)
	return int32(i), ok
}

func (vs *Set) sortedByRID() bool {
	return slices.IsSorted(vs.rid)
}

// materialize copies a mapped set to the heap (so it can change) and
// releases the mapping.
func (vs *Set) materialize() {
	if vs.unmap == nil {
		if vs.pos == nil {
			vs.pos = map[int64]int32{}
		}
		return
	}
	vs.rid, vs.hash, vs.scale = slices.Clone(vs.rid), slices.Clone(vs.hash), slices.Clone(vs.scale)
	vs.sess, vs.root, vs.dir, vs.tool = slices.Clone(vs.sess), slices.Clone(vs.root), slices.Clone(vs.dir), slices.Clone(vs.tool)
	vs.kind, vs.role, vs.time, vs.vec = slices.Clone(vs.kind), slices.Clone(vs.role), slices.Clone(vs.time), slices.Clone(vs.vec)
	vs.pos = make(map[int64]int32, len(vs.rid))
	for i, rid := range vs.rid {
		vs.pos[rid] = int32(i)
	}
	vs.unmap()
	vs.unmap = nil
}

// Close releases a mapped set's file; the set must not be used after.
func (vs *Set) Close() {
	if vs.unmap != nil {
		vs.unmap()
		vs.unmap = nil
	}
	vs.rid, vs.hash, vs.scale, vs.vec = nil, nil, nil, nil
	vs.sess, vs.root, vs.dir, vs.tool, vs.kind, vs.role, vs.time = nil, nil, nil, nil, nil, nil, nil
}

// Mapped reports whether the set is read from a mapped vector file.
func (vs *Set) Mapped() bool { return vs.unmap != nil }

// A search of a large mapped set hands the int8 slab's pages back as it
// goes: they stay in the page cache (a later search or process maps them
// again without reading the disk), but not in this process's resident set,
// which would otherwise grow by the whole slab (384 MB at a million
// vectors, over the 300 MB budget of a hybrid search with the model
// loaded). Below releaseMinBytes the slab is small enough to keep.
const (
	releaseMinBytes = 64 << 20
	releaseRows     = 16384 // ~6 MB of 384-dim rows per worker between releases
)

func (vs *Set) releasePages() bool {
	return vs.unmap != nil && len(vs.vec) >= releaseMinBytes
}

// release drops this process's mapping of the slab pages wholly inside
// rows lo..hi.
func (vs *Set) release(lo, hi int) {
	if hi <= lo {
		return
	}
	d := vs.dims
	b := sliceBytes(vs.vec[lo*d : hi*d])
	page := uintptr(pageSize)
	start := uintptr(unsafe.Pointer(&b[0]))
	from := int((page - start%page) % page)
	to := len(b) - int((start+uintptr(len(b)))%page)
	if to <= from {
		return
	}
	dropPages(b[from:to])
}
