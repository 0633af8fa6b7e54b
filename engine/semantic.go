package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/embed"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/vectors"
)

// Semantic search runs a local sentence-embedding model (engine/embed) over
// the documents people and models wrote, keeps their vectors in the index,
// and fuses vector similarity with the lexical ranking (rank.Fuse). It is
// optional: without a model, or before vectors exist, search is lexical and
// says so once.

// embeddedKinds are the documents that get a vector: what people and models
// wrote (prose, reasoning, titles, subtask prompts, compaction summaries)
// and what they asked tools to do (tool inputs). Tool outputs, patches and
// attached files are left out on purpose: the model costs 10-20 ms per
// 256-token chunk on one core, outputs are most of the bytes of a history
// (file dumps, logs, test runs), they are noisy as meaning (a whole file
// averages to a vector close to nothing in particular), and the strings
// people look for in them (errors, identifiers, paths) are exactly what the
// lexical index already finds. Embedding only these kinds is also what keeps
// the vectors of 200k parts within the memory budget (about half the
// documents).
var embeddedKinds = []model.Kind{model.KindText, model.KindReasoning, model.KindTitle, model.KindTool, model.KindSubtask, model.KindSummary}

// Bounds on the text embedded per document. The model reads 256 tokens per
// chunk and averages chunks, so a long answer's vector is mostly its
// opening; two chunks (~2 KB of prose) hold what a message is about. A tool
// input is its name, title and arguments, and arguments can be whole files
// (write, edit): its first 512 bytes say what was being done.
const (
	maxEmbedBytes     = 2048
	maxEmbedToolBytes = 512
)

// semanticState is the Engine's semantic side: the model (loaded on first
// use), the in-memory vectors, notices given, and embedding runs.
type semanticState struct {
	mu      sync.Mutex
	emb     embed.Embedder
	noticed map[string]bool
	runs    map[*EmbedRun]bool
}

// shardVectors is a shard's in-memory copy of its index's vectors.
type shardVectors struct {
	mu    sync.Mutex // guards vecs
	vecs  *loadedVectors
	vecMu sync.Mutex // serialises loads and refreshes of vecs
}

// ModelDir is where embedding models are installed:
// $XDG_DATA_HOME/recall/models or ~/.local/share/recall/models.
func ModelDir(getenv func(string) string) string {
	return filepath.Join(DataDir(getenv), "models")
}

// ModelStore is the embedding model store this engine reads.
func (e *Engine) ModelStore() embed.Store {
	dir := e.opts.ModelDir
	if dir == "" {
		dir = ModelDir(e.opts.Getenv)
	}
	return embed.Store{Dir: dir}
}

// installedModel finds the model semantic search uses: Options.Model, else
// the default model, else the first installed one. None is embed.ErrNoModel.
func (e *Engine) installedModel() (embed.Manifest, error) {
	ms, err := e.ModelStore().List()
	if err != nil {
		return embed.Manifest{}, err
	}
	want := e.opts.Model
	if want == "" {
		want = embed.DefaultModel
	}
	for _, m := range ms {
		if m.Name == want {
			return m, nil
		}
	}
	if e.opts.Model == "" && len(ms) > 0 {
		return ms[0], nil
	}
	return embed.Manifest{}, fmt.Errorf("model %s: %w", want, embed.ErrNoModel)
}

// modelKey names the vectors a model makes: a different id, revision or
// width makes stored vectors useless.
func modelKey(id, revision string, dims int) string {
	return fmt.Sprintf("%s@%s/%d", id, revision, dims)
}

func manifestKey(m embed.Manifest) string { return modelKey(m.Name, m.Revision, m.Dims) }

// loadMemoryLimit is the soft heap limit while the model and the vectors
// load: both make garbage fast, and without it the runtime lets the heap
// grow to twice the live size before collecting. Live after both loads is
// ~145 MB with MiniLM and 100k vectors.
const loadMemoryLimit = 200 << 20

// loadFreeThreshold is the allocation during a model load past which the
// garbage is returned to the OS at once: a cached load allocates ~5 MB, a
// decode through cybertron hundreds.
const loadFreeThreshold = 32 << 20

// embedder loads the installed model once per Engine.
func (e *Engine) embedder() (embed.Embedder, error) {
	e.sem.mu.Lock()
	defer e.sem.mu.Unlock()
	if e.sem.emb != nil {
		return e.sem.emb, nil
	}
	man, err := e.installedModel()
	if err != nil {
		return nil, err
	}
	// The first load decodes the checkpoint through cybertron (later ones
	// read the packed-weights cache); see loadMemoryLimit.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	prev := debug.SetMemoryLimit(loadMemoryLimit)
	emb, err := embed.Load(man.Dir)
	debug.SetMemoryLimit(prev)
	if err != nil {
		return nil, err
	}
	// A first load decodes the checkpoint into cybertron's tensors and
	// packs them for the forward pass; the decoded copy (as large as the
	// model, ~90 MB for MiniLM) is garbage the runtime would keep resident
	// for a while, so it is returned now, keeping peak RSS within budget
	// once the vectors load next. A load from the mapped cache allocates
	// a few MB (the vocabulary), and the forced collection would only cost
	// a CLI search its time.
	runtime.ReadMemStats(&after)
	if after.TotalAlloc-before.TotalAlloc > loadFreeThreshold {
		debug.FreeOSMemory()
	}
	e.sem.emb = emb
	return emb, nil
}

func (e *Engine) closeSemantic() error {
	e.sem.mu.Lock()
	runs := make([]*EmbedRun, 0, len(e.sem.runs))
	for r := range e.sem.runs {
		runs = append(runs, r)
	}
	e.sem.mu.Unlock()
	for _, r := range runs {
		r.Stop()
	}
	e.sem.mu.Lock()
	defer e.sem.mu.Unlock()
	var err error
	if e.sem.emb != nil {
		err = e.sem.emb.Close()
		e.sem.emb = nil
	}
	for _, sh := range e.shards {
		sh.dropVectors()
	}
	return err
}

// dropVectors closes the shard's in-memory vectors (unmapping the vector
// file); the next semantic search loads them again.
func (sh *shard) dropVectors() {
	sh.vec.mu.Lock()
	defer sh.vec.mu.Unlock()
	if lv := sh.vec.vecs; lv != nil {
		lv.mu.Lock()
		lv.set.Close()
		lv.mu.Unlock()
	}
	sh.vec.vecs = nil
}

// noticeOnce adds msg to res the first time this Engine gives a notice of
// this kind: a long-running server would otherwise repeat it on every
// search.
func (e *Engine) noticeOnce(res *SearchResult, kind, msg string) {
	e.sem.mu.Lock()
	defer e.sem.mu.Unlock()
	if e.sem.noticed == nil {
		e.sem.noticed = map[string]bool{}
	}
	if e.sem.noticed[kind] {
		return
	}
	e.sem.noticed[kind] = true
	res.Notices = append(res.Notices, msg)
}

// embedText is what the model reads for a document: redacted like the FTS
// index, and bounded (see maxEmbedBytes).
func (sh *shard) embedText(kind model.Kind, text string) string {
	text = sh.ix.IndexedText(text)
	limit := maxEmbedBytes
	if kind == model.KindTool {
		limit = maxEmbedToolBytes
	}
	if len(text) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return text
}

func textHash(text string) []byte {
	sum := sha256.Sum256([]byte(text))
	return sum[:16]
}

// loadedVectors is the engine's copy of the index's vectors and what it was
// loaded from: a search holds mu shared while it scans, a refresh holds it
// exclusively.
type loadedVectors struct {
	mu     sync.RWMutex
	set    *vectors.Set
	gen    int64  // index vector generation loaded
	synced string // synced_at loaded (a sync drops documents)

	embedded, total int // documents with a vector / that could have one
}

// vectors returns the in-memory vectors of model key, loading or
// refreshing them when the index changed since.
func (sh *shard) vectors(ctx context.Context, key string) (*loadedVectors, error) {
	gen, err := sh.ix.VectorGeneration(ctx)
	if err != nil {
		return nil, err
	}
	synced, err := sh.ix.Meta(ctx, "synced_at")
	if err != nil {
		return nil, err
	}
	sh.vec.vecMu.Lock()
	defer sh.vec.vecMu.Unlock()
	sh.vec.mu.Lock()
	lv := sh.vec.vecs
	sh.vec.mu.Unlock()
	if lv != nil && lv.set.Model() == key && lv.gen == gen && lv.synced == synced {
		return lv, nil
	}
	full := lv == nil || lv.set.Model() != key
	fromFile := false
	if full {
		if lv != nil {
			lv.mu.Lock()
			lv.set.Close() // a mapped file's pages; nothing reads the old set any more
			lv.mu.Unlock()
		}
		lv = &loadedVectors{}
		stamp, stampErr := sh.vectorStamp(key, gen, synced)
		if stampErr == nil {
			set, st, err := vectors.OpenFile(sh.vectorFile(), stamp)
			switch {
			case err == nil:
				lv.set, lv.embedded, lv.total, fromFile = set, st.Embedded, st.Total, true
			case errors.Is(err, vectors.ErrNotOurs):
				sh.e.log.Warn("vector file not used", "err", err)
			case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, vectors.ErrStale):
				sh.e.log.Debug("vector file not used", "err", err)
			}
		}
		if !fromFile {
			lv.set = vectors.New(key)
			// Reading every vector makes garbage at ~3x the set's size; the
			// soft limit has the collector keep up instead of letting the heap
			// double (peak RSS of a hybrid CLI search: 318 MB -> see README).
			prev := debug.SetMemoryLimit(loadMemoryLimit)
			err := lv.set.Load(ctx, sh.ix, nil)
			debug.SetMemoryLimit(prev)
			if err != nil {
				return nil, err
			}
		}
	} else {
		lv.mu.Lock()
		err := lv.set.Refresh(ctx, sh.ix)
		lv.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if err := lv.set.LoadLinks(ctx, sh.ix); err != nil {
		return nil, err
	}
	if !fromFile {
		lv.embedded, lv.total, err = sh.ix.VectorCounts(ctx, embeddedKinds)
		if err != nil {
			return nil, err
		}
	}
	lv.gen, lv.synced = gen, synced
	if full && !fromFile {
		// The next process maps what this one just read (best effort: a
		// read-only index directory only costs the slower load again).
		if stamp, err := sh.vectorStamp(key, gen, synced); err == nil {
			stamp.Embedded, stamp.Total = lv.embedded, lv.total
			if err := lv.set.WriteFile(sh.vectorFile(), stamp); err != nil {
				sh.e.log.Debug("vector file not written", "err", err)
			}
		}
		debug.FreeOSMemory() // the scan's row buffers, as for the model
	}
	sh.vec.mu.Lock()
	sh.vec.vecs = lv
	sh.vec.mu.Unlock()
	return lv, nil
}

// vectorFile is the shard's vector file (engine/vectors): beside the
// index, in the directory the index's own checks already hold to be this
// user's.
func (sh *shard) vectorFile() string { return sh.ix.Path() + "-vectors" }

func (sh *shard) vectorStamp(key string, gen int64, synced string) (vectors.Stamp, error) {
	dev, ino, err := vectors.FileID(sh.ix.Path())
	if err != nil {
		return vectors.Stamp{}, err
	}
	return vectors.Stamp{Dev: dev, Ino: ino, Model: key, Gen: gen, Synced: synced}, nil
}

// vectorsAdded applies a batch this process just stored (generation old to
// cur) to the in-memory vectors without a refresh pass, when they were
// current before it.
func (sh *shard) vectorsAdded(ctx context.Context, key string, old, cur int64, rids []int64) {
	sh.vec.vecMu.Lock()
	defer sh.vec.vecMu.Unlock()
	sh.vec.mu.Lock()
	lv := sh.vec.vecs
	sh.vec.mu.Unlock()
	if lv == nil || lv.set.Model() != key || lv.gen != old {
		return
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	before := lv.set.Len()
	if err := lv.set.Load(ctx, sh.ix, rids); err != nil {
		lv.gen = -1 // reload on next use
		return
	}
	lv.embedded += lv.set.Len() - before
	lv.gen = cur
}

// SemanticStatus says whether semantic search can run and how far the
// vectors are built.
type SemanticStatus struct {
	Model     string `json:"model,omitempty"`    // installed model in use
	Revision  string `json:"revision,omitempty"` // its Hugging Face commit
	Dims      int    `json:"dims,omitempty"`
	Installed bool   `json:"installed"`
	Embedded  int    `json:"embedded"` // documents with a vector from this model
	Total     int    `json:"total"`    // documents that get one (see embeddedKinds)
	Stale     bool   `json:"stale,omitempty"`
	Notice    string `json:"notice,omitempty"`
}

func (e *Engine) semanticStatus(ctx context.Context, shs []*shard) (SemanticStatus, error) {
	var st SemanticStatus
	man, err := e.installedModel()
	if errors.Is(err, embed.ErrNoModel) {
		st.Notice = "no embedding model installed; search is lexical (run `recall models pull`, or `recall models import DIR`)"
		for _, sh := range shs {
			_, total, err := sh.ix.VectorCounts(ctx, embeddedKinds)
			if err != nil {
				return st, err
			}
			st.Total += total
		}
		return st, nil
	}
	if err != nil {
		st.Notice = fmt.Sprintf("semantic search unavailable: %v", err)
		return st, nil
	}
	st.Installed, st.Model, st.Revision, st.Dims = true, man.Name, man.Revision, man.Dims
	for _, sh := range shs {
		stored, err := sh.ix.VectorModel(ctx)
		if err != nil {
			return st, err
		}
		embedded, total, err := sh.ix.VectorCounts(ctx, embeddedKinds)
		if err != nil {
			return st, err
		}
		if stored != manifestKey(man) {
			st.Stale = st.Stale || stored != ""
			embedded = 0
		}
		st.Embedded += embedded
		st.Total += total
	}
	if st.Embedded < st.Total {
		st.Notice = "run `recall sync --embed` to embed the rest"
	}
	return st, nil
}

// queryText is the part of the query the model should read: the terms
// and phrases as typed, without exclusions.
func queryText(raw string) string {
	var keep []string
	for _, f := range strings.Fields(raw) {
		if strings.HasPrefix(f, "-") && len(f) > 1 {
			continue
		}
		keep = append(keep, strings.Trim(f, `"`))
	}
	return strings.Join(keep, " ")
}
