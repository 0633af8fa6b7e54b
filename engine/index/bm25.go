package index

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// recall_bm25 is FTS5's bm25() (k1 = 1.2, b = 0.75, one column) with the
// documents each phrase matches given by the caller instead of counted.
//
// FTS5's bm25() computes each phrase's IDF by walking that phrase's match
// over the whole index (xQueryPhrase), once per statement. No rowid bound
// limits that walk, so it grows with the history even when the match
// window bounds what is scored: on the 4.2M-part clone it was a third of
// the slowest queries' CPU. The engine already knows how many documents
// each term matches (the vocabulary's df, and the match budget's counts),
// so it passes those and nothing is walked. A phrase given a
// negative count is counted as bm25() counts it, so with exact counts the
// two functions give the same scores (TestRecallBM25MatchesBM25).
//
// modernc's SQLite takes an FTS5 auxiliary function only as a C function
// pointer, which Go cannot make; the function is registered the way
// modernc.org/sqlite/vec registers its extension: sqlite3_auto_extension
// with a transpiled-ABI function, which every connection opened after this
// package's init runs (the index's and the source's alike: registering it
// on a connection that never searches costs one statement at open).
//
// Its one argument is the key withHits returned for the statement's
// counts (MatchTexts registers them for the statement's life).

// bm25Hits is one statement's counts: per phrase of its MATCH expression
// (FTS5 numbers them left to right, exclusions included), the documents
// that phrase matches (negative: count it).
type bm25Hits struct {
	hits  []int64
	once  sync.Once
	idf   []float64 // set on the first row, with avgdl
	avgdl float64
	err   int32
	// top holds the best limit rows so far (a heap, the worst first): the
	// rows pickBest reads, or, for a statement that keeps its best limit
	// rows itself (ORDER BY score, rowid LIMIT), the bound that rows are
	// pruned by (see recallBM25).
	limit int
	top   []scoredRow
	// The last row scored and its result: a statement that names the
	// score twice in a way SQLite evaluates twice a row (none of
	// MatchTexts' does) must not count the row twice among the best.
	lastRow    int64
	lastResult float64
	scored     bool
	prunedRows int // rows scored 0 by their bound (for tests)
	// rows is how many rows were scored, low the lowest rowid of them: a
	// walk of the match's newest rows counts itself here (MatchNewest).
	rows int
	low  int64
	// lens reads rows' lengths from doc_lens instead of FTS5's docsize
	// (see docLens); nil for a table that has none (tests' own FTS tables).
	lens *docLens
}

var (
	bm25Mu   sync.Mutex
	bm25Next atomic.Int64
	bm25Reg  = map[int64]*bm25Hits{}
)

// withHits registers hits for one statement and returns its key and the
// function that drops it when the statement is done. With limit > 0 the
// function keeps the best limit rows it scores (h.top, which pickBest
// reads), and rows that cannot be among them are not scored in full (a
// statement that keeps its best limit rows itself, ORDER BY the score
// LIMIT limit, may pass limit for that alone; 0: every row is).
// Rows' lengths are read from doc_lens through lens (nil: FTS5's docsize
// alone, for a table with no doc_lens).
func withHits(hits []int64, limit int, lens *lensCache) (key int64, done func()) {
	key = bm25Next.Add(1)
	h := &bm25Hits{hits: hits, limit: limit}
	if lens != nil {
		h.lens = &docLens{cache: lens}
	}
	bm25Mu.Lock()
	bm25Reg[key] = h
	bm25Mu.Unlock()
	return key, func() {
		bm25Mu.Lock()
		delete(bm25Reg, key)
		bm25Mu.Unlock()
		h.lens.close()
	}
}

func bm25Lookup(key int64) *bm25Hits {
	bm25Mu.Lock()
	defer bm25Mu.Unlock()
	return bm25Reg[key]
}

// C strings the registration hands to SQLite; never freed.
var (
	bm25Name, fts5APISQL, fts5APIPtrType, docLensSQL, lensGenSQL uintptr
)

func init() {
	tls := libc.NewTLS()
	defer tls.Close()
	var err error
	for _, s := range []struct {
		p *uintptr
		v string
	}{{&bm25Name, "recall_bm25"}, {&fts5APISQL, "SELECT fts5(?1)"}, {&fts5APIPtrType, "fts5_api_ptr"},
		{&docLensSQL, "SELECT lens FROM doc_lens WHERE chunk = ?1"},
		{&lensGenSQL, "SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'lens_gen'), " +
			"(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'lens_format')"}} {
		if *s.p, err = libc.CString(s.v); err != nil {
			panic(err)
		}
	}
	if rc := sqlite3.Xsqlite3_auto_extension(tls, cFunc(registerBM25)); rc != sqlite3.SQLITE_OK {
		panic(fmt.Sprintf("index: sqlite3_auto_extension: error %d", rc))
	}
}

// openBusyMs is how long registerBM25 waits for a lock at open. Every
// connection runs it, the history's too, whose own wait for a writer is
// half a second (a locked history is answered from the index after it,
// TestLockedHistoryAnswersFromIndex): so is this one. Checkpointing away a
// WAL of SQLite's default 1,000 pages at close takes milliseconds.
const openBusyMs = 500

// cFunc is a top-level function as a transpiled-C function pointer (what
// modernc's generated code calls through; modernc.org/sqlite/vec does the
// same).
func cFunc(f any) uintptr {
	type iface [2]uintptr
	return (*iface)(unsafe.Pointer(&f))[1]
}

// cptr is a pointer into modernc's C memory (its TLS stack, its malloc
// heap, SQLite's own structures): outside Go's heap, so it never moves and
// the uintptr a transpiled call hands over stays valid.
// (Read through the variable's address, which vet's unsafeptr check
// accepts: that check is about Go memory.)
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// call helpers: a transpiled-C function pointer called with its ABI.
func call2(fp uintptr, tls *libc.TLS, a, b uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, a, b)
}

func call3i(fp uintptr, tls *libc.TLS, a uintptr, i int32, b uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, a, i, b)
}

// registerBM25 is the auto-extension entry point: it finds the
// connection's fts5_api and creates recall_bm25 on it.
//
// It runs inside sqlite3_open, before the DSN's busy_timeout pragma, and
// its statement may have to wait for a lock: another process closing the
// index's last connection holds it exclusively while it checkpoints the
// WAL away. Without a timeout of its own that was SQLITE_BUSY and a
// failed command (2 of 240 `recall sessions` run three at a time;
// TestOpenWhileOthersClose). The DSN's pragma replaces this timeout.
func registerBM25(tls *libc.TLS, db, pzErrMsg, pThunk uintptr) int32 {
	sqlite3.Xsqlite3_busy_timeout(tls, db, openBusyMs)
	bp := tls.Alloc(8) // the fts5_api pointer
	defer tls.Free(8)
	*(*uintptr)(cptr(bp)) = 0
	stmt, rc := prepareOn(tls, db, fts5APISQL)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	sqlite3.Xsqlite3_bind_pointer(tls, stmt, 1, bp, fts5APIPtrType, 0)
	sqlite3.Xsqlite3_step(tls, stmt)
	if rc := sqlite3.Xsqlite3_finalize(tls, stmt); rc != sqlite3.SQLITE_OK {
		return rc
	}
	api := *(*uintptr)(cptr(bp))
	if api == 0 {
		return sqlite3.SQLITE_ERROR // no FTS5 in this build
	}
	create := (*sqlite3.Tfts5_api)(cptr(api)).FxCreateFunction
	return (*(*func(*libc.TLS, uintptr, uintptr, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{create})))(
		tls, api, bm25Name, 0, cFunc(recallBM25), 0)
}

// countCb counts the rows xQueryPhrase visits into *pUserData (an int64).
func countCb(tls *libc.TLS, pApi, pFts, pUserData uintptr) int32 {
	*(*int64)(cptr(pUserData))++
	return sqlite3.SQLITE_OK
}

// bm25IDF computes each phrase's IDF as bm25() does, from the given counts
// (counting, as bm25() does, a phrase given a negative one).
func bm25IDF(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, h *bm25Hits) int32 {
	bp := tls.Alloc(8)
	defer tls.Free(8)
	if rc := call2(api.FxRowCount, tls, pFts, bp); rc != sqlite3.SQLITE_OK {
		return rc
	}
	nRow := float64(*(*int64)(cptr(bp)))
	if rc := call3i(api.FxColumnTotalSize, tls, pFts, -1, bp); rc != sqlite3.SQLITE_OK {
		return rc
	}
	h.avgdl = float64(*(*int64)(cptr(bp))) / max(nRow, 1)
	if h.avgdl <= 0 {
		h.avgdl = 1
	}
	h.idf = make([]float64, len(h.hits))
	for i, n := range h.hits {
		if n < 0 {
			*(*int64)(cptr(bp)) = 0
			rc := (*(*func(*libc.TLS, uintptr, int32, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{api.FxQueryPhrase})))(
				tls, pFts, int32(i), bp, cFunc(countCb))
			if rc != sqlite3.SQLITE_OK {
				return rc
			}
			n = *(*int64)(cptr(bp))
		}
		idf := math.Log((nRow - float64(n) + 0.5) / (float64(n) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		h.idf[i] = idf
	}
	return sqlite3.SQLITE_OK
}

// recallBM25 is recall_bm25(docs_fts, key): one row's score.
func recallBM25(tls *libc.TLS, pApi, pFts, pCtx uintptr, nVal int32, apVal uintptr) {
	api := (*sqlite3.TFts5ExtensionApi)(cptr(pApi))
	var h *bm25Hits
	if nVal == 1 {
		h = bm25Lookup(sqlite3.Xsqlite3_value_int64(tls, *(*uintptr)(cptr(apVal))))
	}
	nPhrase := (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{api.FxPhraseCount})))(tls, pFts)
	if h == nil || int(nPhrase) != len(h.hits) {
		sqlite3.Xsqlite3_result_error_code(tls, pCtx, sqlite3.SQLITE_MISUSE)
		return
	}
	row := (*(*func(*libc.TLS, uintptr) int64)(unsafe.Pointer(&struct{ uintptr }{api.FxRowid})))(tls, pFts)
	if h.scored && row == h.lastRow {
		sqlite3.Xsqlite3_result_double(tls, pCtx, h.lastResult)
		return
	}
	if h.rows == 0 || row < h.low {
		h.low = row
	}
	h.rows++
	bp := tls.Alloc(24) // xInst's nInst, phrase, column, offset; xColumnSize's length at 16
	defer tls.Free(24)
	h.once.Do(func() { h.err = bm25IDF(tls, api, pFts, h) })
	rc := h.err
	if rc == sqlite3.SQLITE_OK {
		rc = call2(api.FxInstCount, tls, pFts, bp)
	}
	var small [16]float64
	freq := small[:]
	if int(nPhrase) > len(small) {
		freq = make([]float64, nPhrase)
	}
	nInst := *(*int32)(cptr(bp))
	last := int32(-1) // the last token offset an instance starts at
	for i := int32(0); rc == sqlite3.SQLITE_OK && i < nInst; i++ {
		rc = (*(*func(*libc.TLS, uintptr, int32, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{api.FxInst})))(
			tls, pFts, i, bp+4, bp+8, bp+12)
		if rc == sqlite3.SQLITE_OK {
			freq[*(*int32)(cptr(bp + 4))]++
			last = max(last, *(*int32)(cptr(bp + 12)))
		}
	}
	if rc != sqlite3.SQLITE_OK {
		sqlite3.Xsqlite3_result_error_code(tls, pCtx, rc)
		return
	}
	// Looking up the row's length (a statement step on docs_fts_docsize)
	// is most of a row's cost, a third of a search's CPU at 4.2M parts.
	// The score only falls as the length grows, and the row is at least
	// as long as its last instance's offset + 1, so the score at that
	// length bounds it: a row whose bound is below the limit-th best score
	// so far cannot be among the rows kept, and scores 0 (below every
	// matching row: each holds a phrase) without the lookup.
	if len(h.top) == h.limit && h.limit > 0 && h.score(freq, float64(last+1)) < h.top[0].score {
		h.prunedRows++
		h.result(tls, pCtx, row, 0)
		return
	}
	n, ok := h.lens.length(tls, pCtx, row)
	if !ok {
		if rc = call3i(api.FxColumnSize, tls, pFts, -1, bp+16); rc != sqlite3.SQLITE_OK {
			sqlite3.Xsqlite3_result_error_code(tls, pCtx, rc)
			return
		}
		n = *(*int32)(cptr(bp + 16))
	}
	score := h.score(freq, float64(n))
	if h.limit > 0 {
		h.keep(row, score)
	}
	h.result(tls, pCtx, row, -score)
}

// result returns v as row's score, remembering it.
func (h *bm25Hits) result(tls *libc.TLS, pCtx uintptr, row int64, v float64) {
	h.lastRow, h.lastResult, h.scored = row, v, true
	sqlite3.Xsqlite3_result_double(tls, pCtx, v)
}

// score is BM25 (as a positive number) of a row of length d holding
// freq[i] instances of phrase i.
func (h *bm25Hits) score(freq []float64, d float64) float64 {
	const k1, b = 1.2, 0.75
	s := 0.0
	for i, idf := range h.idf {
		if f := freq[i]; f > 0 {
			s += idf * (f * (k1 + 1)) / (f + k1*(1-b+b*d/h.avgdl))
		}
	}
	return s
}

// scoredRow is a row and its BM25 (positive: the higher, the better).
type scoredRow struct {
	row   int64
	score float64
}

// worse reports whether a ranks below b: a lower score, or the same
// score and a newer (higher) row, as ORDER BY -score, rowid puts them.
func (a scoredRow) worse(b scoredRow) bool {
	return a.score < b.score || a.score == b.score && a.row > b.row
}

// keep adds the row to the best limit rows (h.top, a heap with the worst
// at its root) if it ranks above the worst of them.
func (h *bm25Hits) keep(row int64, score float64) {
	r := scoredRow{row, score}
	if len(h.top) < h.limit {
		h.top = append(h.top, r)
		for i := len(h.top) - 1; i > 0; {
			p := (i - 1) / 2
			if !h.top[i].worse(h.top[p]) {
				break
			}
			h.top[p], h.top[i] = h.top[i], h.top[p]
			i = p
		}
		return
	}
	if !h.top[0].worse(r) {
		return
	}
	h.top[0] = r
	for i := 0; ; {
		l, rt, m := 2*i+1, 2*i+2, i
		if l < len(h.top) && h.top[l].worse(h.top[m]) {
			m = l
		}
		if rt < len(h.top) && h.top[rt].worse(h.top[m]) {
			m = rt
		}
		if m == i {
			break
		}
		h.top[m], h.top[i] = h.top[i], h.top[m]
		i = m
	}
}

// Documents' lengths for recall_bm25 come from the index's doc_lens
// table (docLensTable) when it has them: each row of it holds the lengths
// of 1,024 consecutive rowids, a byte each (lensAt), and an index's
// chunks read so far are kept in memory (lensCache), so a long-running
// engine reads each once. Each length docsize gives was one lookup of a
// 48 MB table at 4.2M parts, most of them pages SQLite's cache did not
// hold: a third of a search's CPU. A length doc_lens does not hold (0: a chunk not built
// yet, a rowid with no document when its chunk was built; lensTooLong)
// is FTS5's own lookup, so the scores are bm25()'s either way
// (TestRecallBM25WithDocLens).

// lensCache is one index's doc_lens chunks read so far, shared by its
// statements. gen is the index's lens_gen they were read at: a deleted
// document bumps it (docLensTrigger), since its rowid may be used again
// by another document; a statement of another generation keeps what it
// reads to itself.
type lensCache struct {
	mu     sync.Mutex
	gen    int64
	chunks map[int64][]byte
	// inPlace: keep nothing, read each length where SQLite holds its
	// chunk (see docLens.cur). Set for a process that runs one command
	// (Options.OneCommand): there is no later search to keep chunks for.
	inPlace bool
}

// maxLensChunks bounds a lensCache (about 1 KB a chunk, 2 KB in the
// format before lensFormat: 8 to 16 MB, 8.4M documents).
const maxLensChunks = 8192

// docLens is one statement's reader of doc_lens.
type docLens struct {
	cache   *lensCache
	stmt    uintptr // on the statement's connection, prepared at first use
	off     bool    // no doc_lens to read (an index from before it)
	gen     int64   // lens_gen in the statement's snapshot
	compact bool    // rows in lensFormat (else two bytes a rowid, the format before)
	checked bool
	local   map[int64][]byte // chunks read when the cache is of another generation
	fresh   map[int64]bool   // chunks this statement read itself
	found   int              // lengths it gave (for tests)

	// In place (lensCache.inPlace), the chunk is not copied: stmt stays
	// on chunk cur's row, and its blob (at, n bytes, SQLite's memory: the
	// page in its cache, held while stmt is on the row) is read until
	// another chunk is needed. FTS5 scores a match in rowid order, so
	// that is once a chunk. Copying every chunk a match spans into the
	// Go heap cost a fresh process a page fault per two chunks of fresh
	// memory (about 1,000 of a CLI search's faults at 4.2M parts;
	// docs/benchmarks.md, "A CLI search's page faults").
	cur   int64
	at    uintptr
	n     int
	onCur bool
}

// length is row's length in tokens, and whether doc_lens had it.
func (l *docLens) length(tls *libc.TLS, pCtx uintptr, row int64) (int32, bool) {
	if l == nil || l.off {
		return 0, false
	}
	if !l.checked {
		l.checkGen(tls, pCtx)
		if l.off {
			return 0, false
		}
	}
	c, i := row>>lensShift, int(row&(1<<lensShift-1))
	var buf []byte
	if l.cache.inPlace {
		if !l.onCur || l.cur != c {
			l.seek(tls, c)
		}
		buf = unsafe.Slice((*byte)(cptr(l.at)), l.n)
	} else {
		var ok bool
		buf, ok = l.get(c)
		// A chunk read before documents were added past its end is read
		// again, once a statement.
		if _, covered := lensAt(buf, i, l.compact); !ok || !covered && !l.fresh[c] {
			if buf = l.load(tls, pCtx, c); l.off {
				return 0, false
			}
		}
	}
	v, _ := lensAt(buf, i, l.compact)
	if v == 0 || v == lensTooLong {
		return 0, false
	}
	l.found++
	return int32(v), true
}

// seek moves stmt to chunk c's row (none: n is 0).
func (l *docLens) seek(tls *libc.TLS, c int64) {
	sqlite3.Xsqlite3_reset(tls, l.stmt)
	sqlite3.Xsqlite3_bind_int64(tls, l.stmt, 1, c)
	l.cur, l.onCur, l.at, l.n = c, true, 0, 0
	if sqlite3.Xsqlite3_step(tls, l.stmt) == sqlite3.SQLITE_ROW {
		if p, n := sqlite3.Xsqlite3_column_blob(tls, l.stmt, 0), sqlite3.Xsqlite3_column_bytes(tls, l.stmt, 0); p != 0 && n > 0 {
			l.at, l.n = p, int(n)
		}
	}
}

func (l *docLens) get(c int64) ([]byte, bool) {
	l.cache.mu.Lock()
	defer l.cache.mu.Unlock()
	if l.cache.gen != l.gen {
		b, ok := l.local[c]
		return b, ok
	}
	b, ok := l.cache.chunks[c]
	return b, ok
}

func (l *docLens) put(c int64, b []byte) {
	l.fresh[c] = true
	l.cache.mu.Lock()
	defer l.cache.mu.Unlock()
	if l.cache.gen != l.gen {
		l.local[c] = b
		return
	}
	if len(l.cache.chunks) >= maxLensChunks {
		l.cache.chunks = map[int64][]byte{}
	}
	l.cache.chunks[c] = b
}

// prepareOn prepares the C string q on connection db.
func prepareOn(tls *libc.TLS, db, q uintptr) (uintptr, int32) {
	bp := tls.Alloc(8)
	defer tls.Free(8)
	*(*uintptr)(cptr(bp)) = 0
	if rc := sqlite3.Xsqlite3_prepare_v2(tls, db, q, -1, bp, 0); rc != sqlite3.SQLITE_OK {
		return 0, rc
	}
	return *(*uintptr)(cptr(bp)), sqlite3.SQLITE_OK
}

// prepare prepares q on the connection of the statement calling the
// function.
func prepare(tls *libc.TLS, pCtx, q uintptr) (uintptr, bool) {
	st, rc := prepareOn(tls, sqlite3.Xsqlite3_context_db_handle(tls, pCtx), q)
	return st, rc == sqlite3.SQLITE_OK
}

// checkGen reads lens_gen and lens_format in the statement's snapshot; a
// newer generation empties the cache.
func (l *docLens) checkGen(tls *libc.TLS, pCtx uintptr) {
	l.checked = true
	st, ok := prepare(tls, pCtx, lensGenSQL)
	if !ok {
		l.off = true
		return
	}
	if sqlite3.Xsqlite3_step(tls, st) == sqlite3.SQLITE_ROW {
		l.gen = sqlite3.Xsqlite3_column_int64(tls, st, 0)
		l.compact = sqlite3.Xsqlite3_column_int64(tls, st, 1) == lensFormat
	}
	sqlite3.Xsqlite3_finalize(tls, st)
	if l.stmt, ok = prepare(tls, pCtx, docLensSQL); !ok {
		l.off = true
		return
	}
	if l.cache.inPlace {
		return // nothing is kept, so the generation does not matter
	}
	l.local, l.fresh = map[int64][]byte{}, map[int64]bool{}
	l.cache.mu.Lock()
	if l.gen > l.cache.gen || l.cache.chunks == nil {
		l.cache.gen, l.cache.chunks = l.gen, map[int64][]byte{}
	}
	l.cache.mu.Unlock()
}

// load reads chunk c (empty when doc_lens has no such row) and keeps it.
// It reads on the match's connection, in its snapshot.
func (l *docLens) load(tls *libc.TLS, pCtx uintptr, c int64) []byte {
	var buf []byte
	sqlite3.Xsqlite3_bind_int64(tls, l.stmt, 1, c)
	if sqlite3.Xsqlite3_step(tls, l.stmt) == sqlite3.SQLITE_ROW {
		if p, n := sqlite3.Xsqlite3_column_blob(tls, l.stmt, 0), sqlite3.Xsqlite3_column_bytes(tls, l.stmt, 0); p != 0 && n > 0 {
			buf = append([]byte(nil), unsafe.Slice((*byte)(cptr(p)), n)...)
		}
	}
	sqlite3.Xsqlite3_reset(tls, l.stmt)
	l.put(c, buf)
	return buf
}

// close finalizes the statement (the connection's mutex makes that safe
// from any goroutine; SQLite closes a connection only once its statements
// are finalized).
func (l *docLens) close() {
	if l == nil || l.stmt == 0 {
		return
	}
	tls := libc.NewTLS()
	sqlite3.Xsqlite3_finalize(tls, l.stmt)
	tls.Close()
	l.stmt = 0
}
