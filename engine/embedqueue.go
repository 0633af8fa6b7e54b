package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

// EmbedBatch is how many documents one embedding step reads, embeds and
// stores. Each step is one short write transaction under the writer lock,
// taken only after the model has run, so a sync or another process waits
// for a commit (a few ms), never for the model; and a killed run loses at
// most one batch. At 10-20 ms per chunk a MiniLM batch of 32 takes 0.3-0.7 s.
const EmbedBatch = 32

// EmbedOptions tune one embedding run.
type EmbedOptions struct {
	// Progress, when set, is called after each batch.
	Progress func(EmbedProgress)
	// Batch overrides EmbedBatch.
	Batch int
	// LockWait bounds each wait for the writer lock (default: as long as
	// ctx allows).
	LockWait time.Duration
}

// EmbedProgress reports an embedding run under way.
type EmbedProgress struct {
	Done  int `json:"done"`  // documents with a vector
	Total int `json:"total"` // documents that get one
}

// EmbedResult says what an embedding run did.
type EmbedResult struct {
	Model    string `json:"model"`    // id@revision/dims of the vectors
	Reset    bool   `json:"reset"`    // vectors from another model were dropped
	Embedded int    `json:"embedded"` // texts run through the model
	Cached   int    `json:"cached"`   // documents whose text already had a vector
	Done     int    `json:"done"`     // documents with a vector now
	Total    int    `json:"total"`    // documents that get one
	TookMS   int64  `json:"tookMs"`
}

// Embed gives every document that should have a vector one, with the
// installed model (embed.ErrNoModel without one). It is resumable: a run
// cancelled or killed midway keeps every batch it committed, and the next
// run starts from what is still missing. Text whose vector is already in
// the index (a re-synced session, a repeated prompt) is not embedded again.
// Searches never wait for it.
func (e *Engine) Embed(ctx context.Context, opts EmbedOptions) (res EmbedResult, err error) {
	start := time.Now()
	// Named results: the deferred write must reach the caller.
	defer func() { res.TookMS = time.Since(start).Milliseconds() }()
	man, err := e.installedModel()
	if err != nil {
		return res, err
	}
	emb, err := e.embedder()
	if err != nil {
		return res, err
	}
	key := manifestKey(man)
	res.Model = key
	// Shards take turns (one model, two cores); progress counts the
	// shards done before the current one.
	for _, sh := range e.shards {
		if sh.ix.ReadOnly() && len(e.shards) > 1 {
			continue // read-only storage: its vectors stay as they are
		}
		before := res
		shOpts := opts
		if opts.Progress != nil {
			shOpts.Progress = func(p EmbedProgress) {
				opts.Progress(EmbedProgress{Done: before.Done + p.Done, Total: before.Total + p.Total})
			}
		}
		r, err := sh.embed(ctx, shOpts, key, emb.Embed)
		res.Reset = res.Reset || r.Reset
		res.Embedded += r.Embedded
		res.Cached += r.Cached
		res.Done += r.Done
		res.Total += r.Total
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// embed is Embed over one shard's index.
func (sh *shard) embed(ctx context.Context, opts EmbedOptions, key string, embedTexts embedFunc) (EmbedResult, error) {
	var res EmbedResult
	batch := opts.Batch
	if batch <= 0 {
		batch = EmbedBatch
	}
	err := sh.withWriter(ctx, opts.LockWait, func() error {
		stored, err := sh.ix.VectorModel(ctx)
		if err != nil || stored == key {
			return err
		}
		res.Reset = stored != ""
		return sh.ix.ResetVectors(ctx, key)
	})
	if err != nil {
		return res, err
	}
	if res.Done, res.Total, err = sh.ix.VectorCounts(ctx, embeddedKinds); err != nil {
		return res, err
	}
	report := func() {
		if opts.Progress != nil {
			opts.Progress(EmbedProgress{Done: res.Done, Total: res.Total})
		}
	}
	report()
	below := int64(0)
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		pending, err := sh.ix.PendingDocs(ctx, embeddedKinds, below, batch)
		if err != nil {
			return res, err
		}
		if len(pending) == 0 {
			break
		}
		below = pending[len(pending)-1]
		n, cached, err := sh.embedBatch(ctx, opts, key, embedTexts, pending)
		if err != nil {
			return res, err
		}
		res.Embedded += n
		res.Cached += cached
		if res.Done, res.Total, err = sh.ix.VectorCounts(ctx, embeddedKinds); err != nil {
			return res, err
		}
		report()
	}
	// Caught up: vectors no document uses any more (edited or deleted
	// text) can go. Only now: a re-synced document is briefly without its
	// doc_vectors row, and its old vector is what spares a second run.
	err = sh.withWriter(ctx, opts.LockWait, func() error {
		if more, err := sh.ix.PendingDocs(ctx, embeddedKinds, 0, 1); err != nil || len(more) > 0 {
			return err
		}
		_, err := sh.ix.GCVectors(ctx)
		return err
	})
	return res, err
}

type embedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// embedBatch embeds and stores one batch of documents: the model runs with
// no lock held; the store re-reads each text under the writer lock and
// skips a document whose text changed meanwhile (a sync rewrote it; the
// next run picks it up).
func (sh *shard) embedBatch(ctx context.Context, opts EmbedOptions, key string, embedTexts embedFunc, rids []int64) (embedded, cached int, err error) {
	texts, err := sh.embedTexts(ctx, rids)
	if err != nil {
		return 0, 0, err
	}
	hashes := make([][]byte, len(rids))
	for i, rid := range rids {
		hashes[i] = textHash(texts[rid])
	}
	known, err := sh.ix.KnownHashes(ctx, key, hashes)
	if err != nil {
		return 0, 0, err
	}
	var todo []string
	slot := map[string]int{} // hash -> index in todo
	for i, rid := range rids {
		h := string(hashes[i])
		if known[h] {
			continue
		}
		if _, ok := slot[h]; !ok {
			slot[h] = len(todo)
			todo = append(todo, texts[rid])
		}
	}
	var vecs [][]float32
	if len(todo) > 0 {
		if vecs, err = embedTexts(ctx, todo); err != nil {
			return 0, 0, fmt.Errorf("embed: %w", err)
		}
	}
	var old, cur int64
	var stored []int64
	err = sh.withWriter(ctx, opts.LockWait, func() error {
		now, err := sh.embedTexts(ctx, rids)
		if err != nil {
			return err
		}
		var puts []index.VectorPut
		written := map[string]bool{}
		for i, rid := range rids {
			t, ok := now[rid]
			if !ok || string(textHash(t)) != string(hashes[i]) {
				continue
			}
			h := string(hashes[i])
			put := index.VectorPut{DocRID: rid, Hash: hashes[i]}
			if j, ok := slot[h]; ok && !written[h] {
				put.Vec = vecs[j]
				written[h] = true
			}
			puts = append(puts, put)
			stored = append(stored, rid)
		}
		if len(puts) == 0 {
			return nil
		}
		old, cur, err = sh.ix.PutVectors(ctx, key, puts)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	if len(stored) > 0 {
		sh.vectorsAdded(ctx, key, old, cur, stored)
	}
	return len(todo), len(rids) - len(todo), nil
}

// embedTexts reads the documents' texts as the model should see them.
func (sh *shard) embedTexts(ctx context.Context, rids []int64) (map[int64]string, error) {
	raw, err := sh.ix.DocText(ctx, rids)
	if err != nil {
		return nil, err
	}
	kinds, err := sh.docKinds(ctx, rids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(raw))
	for rid, t := range raw {
		out[rid] = sh.embedText(kinds[rid], t)
	}
	return out, nil
}

func (sh *shard) docKinds(ctx context.Context, rids []int64) (map[int64]model.Kind, error) {
	cands, err := sh.ix.Candidates(ctx, rids, query.Filter{})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]model.Kind, len(cands))
	for _, c := range cands {
		out[c.DocRID] = model.Kind(c.Kind)
	}
	return out, nil
}

// withWriter runs fn holding the index writer lock.
func (sh *shard) withWriter(ctx context.Context, wait time.Duration, fn func() error) error {
	if sh.ix.ReadOnly() {
		return sh.ix.ReadOnlyError()
	}
	lctx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	lock, err := index.LockWriter(lctx, sh.ix.Path())
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	defer lock.Unlock()
	return index.ExplainWrite(sh.ix.Path(), fn())
}

// EmbedRun is a background embedding run (see Engine.StartEmbedding).
type EmbedRun struct {
	cancel context.CancelFunc
	done   chan struct{}
	res    EmbedResult
	err    error
}

// StartEmbedding runs Embed in the background until it is done, ctx ends or
// Stop is called; Engine.Close stops it too. Searches meanwhile see each
// batch as it commits. A server calls it after a sync.
func (e *Engine) StartEmbedding(ctx context.Context, opts EmbedOptions) *EmbedRun {
	ctx, cancel := context.WithCancel(ctx)
	r := &EmbedRun{cancel: cancel, done: make(chan struct{})}
	e.sem.mu.Lock()
	if e.sem.runs == nil {
		e.sem.runs = map[*EmbedRun]bool{}
	}
	e.sem.runs[r] = true
	e.sem.mu.Unlock()
	go func() {
		defer close(r.done)
		r.res, r.err = e.Embed(ctx, opts)
		e.sem.mu.Lock()
		delete(e.sem.runs, r)
		e.sem.mu.Unlock()
	}()
	return r
}

// Done is closed when the run ends.
func (r *EmbedRun) Done() <-chan struct{} { return r.done }

// Stop cancels the run and waits for it to end (its committed batches stay).
func (r *EmbedRun) Stop() {
	r.cancel()
	<-r.done
}

// Result is the run's outcome once Done is closed; a stopped run reports
// context.Canceled.
func (r *EmbedRun) Result() (EmbedResult, error) {
	<-r.done
	return r.res, r.err
}
