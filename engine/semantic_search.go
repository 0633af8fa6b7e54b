package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/recallhq/recall/engine/embed"
	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/rank"
	"github.com/recallhq/recall/engine/vectors"
)

// SemanticCandidates bounds the vector hits a search fuses with the lexical
// candidates: like MaxCandidates, more never reach the first page, and each
// costs a row read.
const SemanticCandidates = 200

// NoModelNotice is the notice of an auto search without a model (the
// CLI says it once a day, not on every search).
const NoModelNotice = "no embedding model installed; searched lexically (`recall models pull` or `recall models import DIR` adds semantic search)"

// searchSemantic runs modes auto, semantic and hybrid. It fails open: in
// auto mode a missing model or missing vectors mean lexical search and one
// notice; an explicit semantic or hybrid search without a model is
// embed.ErrNoModel, whose message says how to install one.
func (e *Engine) searchSemantic(ctx context.Context, shs []*shard, p SearchParams, q query.Query, f query.Filter, res *SearchResult) error {
	mode := p.Mode
	if mode == "" {
		mode = query.ModeAuto
	}
	auto := mode == query.ModeAuto
	notice := func(kind, msg string) {
		if auto && !p.EveryNotice {
			e.noticeOnce(res, kind, msg)
		} else {
			res.Notices = append(res.Notices, msg)
		}
	}
	man, err := e.installedModel()
	if err != nil {
		if !auto {
			return err
		}
		if errors.Is(err, embed.ErrNoModel) {
			notice("no-model", NoModelNotice)
		} else {
			notice("model-error", fmt.Sprintf("semantic search unavailable (%v); searched lexically", err))
		}
		return e.lexical(ctx, shs, p, q, f, res)
	}
	key := manifestKey(man)
	// The shards with vectors from this model answer semantically; the
	// others only lexically (the coverage notice counts their documents).
	var ready, unready []*shard
	stored := ""
	for _, sh := range shs {
		st, err := sh.ix.VectorModel(ctx)
		if err != nil {
			return err
		}
		ok := false
		if st == key {
			if ok, err = sh.ix.HasVectors(ctx); err != nil {
				return err
			}
		} else if stored == "" {
			stored = st
		}
		if ok {
			ready = append(ready, sh)
		} else {
			unready = append(unready, sh)
		}
	}
	if len(ready) == 0 {
		msg := fmt.Sprintf("no vectors from %s yet; searched lexically (run `recall sync --embed`)", man.Name)
		if stored != "" && stored != key {
			msg = fmt.Sprintf("the index's vectors come from another model (%s); searched lexically (run `recall sync --embed` to embed with %s)", stored, man.Name)
		}
		if mode == query.ModeSemantic {
			res.Mode = query.ModeSemantic
			res.Notices = append(res.Notices, strings.Replace(msg, "searched lexically", "nothing to search", 1))
			return nil
		}
		notice("no-vectors", msg)
		return e.lexical(ctx, shs, p, q, f, res)
	}
	// A hybrid search ranks lexically beside the model load and the query
	// embedding: in a CLI process each is tens of milliseconds of one core
	// (docs/semantic.md), and the ranking needs neither.
	var lex *lexFuture
	if mode != query.ModeSemantic {
		lex = e.startLexical(ctx, shs, p, q, f)
		defer lex.join()
	}
	// The model first: its load is the larger transient, and it should
	// be over before the vectors arrive (see embedder).
	emb, err := e.embedder()
	if err != nil {
		if auto {
			notice("model-error", fmt.Sprintf("semantic search unavailable (%v); searched lexically", err))
			lr, err := lex.wait(res)
			if err != nil {
				return err
			}
			return e.emitLexical(ctx, shs, p, f, lr, res)
		}
		return err
	}
	lvs := make(map[*shard]*loadedVectors, len(ready))
	for _, sh := range ready {
		lv, err := sh.vectors(ctx, key)
		if err != nil {
			return err
		}
		lvs[sh] = lv
	}
	qv, err := emb.Embed(ctx, []string{queryText(q.Raw)})
	if err != nil {
		return fmt.Errorf("embed query: %w", err)
	}
	embedded, total := 0, 0
	for _, sh := range ready {
		lv := lvs[sh]
		lv.mu.RLock()
		defer lv.mu.RUnlock()
		embedded += lv.embedded
		total += lv.total
	}
	for _, sh := range unready {
		_, n, err := sh.ix.VectorCounts(ctx, embeddedKinds)
		if err != nil {
			return err
		}
		total += n
	}
	if embedded < total {
		notice("partial", fmt.Sprintf("vectors cover %d of %d documents; semantic results come from those only (run `recall sync --embed` to finish)", embedded, total))
	}
	vq := vectors.NewQuery(qv[0])
	var hits []vecHit
	for _, sh := range ready {
		lv := lvs[sh]
		for _, h := range lv.set.Search(ctx, vq, lv.set.Compile(f), SemanticCandidates) {
			hits = append(hits, vecHit{sh: sh, Hit: h})
		}
	}
	if len(ready) > 1 {
		// Each shard's best, merged by similarity (a tie keeps shard order).
		sort.SliceStable(hits, func(a, b int) bool { return hits[a].Sim > hits[b].Sim })
		hits = hits[:min(len(hits), SemanticCandidates)]
	}
	sim := func(sh *shard, rid int64) (float32, bool) {
		lv := lvs[sh]
		if lv == nil {
			return 0, false
		}
		return lv.set.Similarity(vq, rid)
	}
	if mode == query.ModeSemantic {
		res.Mode = query.ModeSemantic
		return e.semanticOnly(ctx, p, q, f, hits, res)
	}
	lr, err := lex.wait(res)
	if err != nil {
		return err
	}
	res.Mode = query.ModeHybrid
	return e.hybrid(ctx, p, q, f, lr, hits, sim, res)
}

// lexFuture is a lexical ranking running on its own goroutine.
type lexFuture struct {
	done        chan struct{}
	lr          lexRanked
	corrections []string
	window      *Window
	notices     []string
	err         error
}

// startLexical starts ranking q lexically. Its typo corrections and its
// window (a common-word match cut to its newest documents) are kept apart
// until wait, so the goroutine never writes the caller's result.
func (e *Engine) startLexical(ctx context.Context, shs []*shard, p SearchParams, q query.Query, f query.Filter) *lexFuture {
	lf := &lexFuture{done: make(chan struct{})}
	go func() {
		defer close(lf.done)
		var own SearchResult
		lf.lr, lf.err = e.lexicalRank(ctx, shs, p, q, f, &own)
		lf.corrections, lf.window, lf.notices = own.Corrections, own.Window, own.Notices
	}()
	return lf
}

// wait returns the ranking and adds its typo corrections, window and
// notices to res.
func (lf *lexFuture) wait(res *SearchResult) (lexRanked, error) {
	<-lf.done
	res.Corrections = append(res.Corrections, lf.corrections...)
	res.Window = lf.window
	res.Notices = append(res.Notices, lf.notices...)
	return lf.lr, lf.err
}

// join waits for the goroutine, so nothing of a search outlives it.
func (lf *lexFuture) join() { <-lf.done }

// vecHit is a vector hit and the shard whose set it came from.
type vecHit struct {
	sh *shard
	vectors.Hit
}

// byShard groups hits' rids by shard, shards in first-hit order.
func byShard(hits []vecHit) ([]*shard, map[*shard][]int64) {
	var shs []*shard
	rids := map[*shard][]int64{}
	for _, h := range hits {
		if _, ok := rids[h.sh]; !ok {
			shs = append(shs, h.sh)
		}
		rids[h.sh] = append(rids[h.sh], h.RID)
	}
	return shs, rids
}

// candidates reads the candidates of rids from each shard (in shard order).
func candidates(ctx context.Context, shs []*shard, rids map[*shard][]int64, f query.Filter) ([]cand, error) {
	per := make([][]index.Candidate, len(shs))
	if err := eachShard(shs, func(i int, sh *shard) error {
		var err error
		per[i], err = sh.ix.Candidates(ctx, rids[sh], f)
		return err
	}); err != nil {
		return nil, err
	}
	var out []cand
	for i, cs := range per {
		for _, c := range cs {
			out = append(out, cand{sh: shs[i], Candidate: c})
		}
	}
	return out, nil
}

// docKey names a document across shards.
type docKey struct {
	sh  *shard
	rid int64
}

// queryNeedles are the stems snippets highlight when no lexical ranking ran.
func queryNeedles(q query.Query) []needle {
	var out []needle
	for j, t := range q.Searchable() {
		out = append(out, needle{text: rank.Stem(t.Key()), group: j, weight: 1})
	}
	for j, ph := range q.Phrases {
		for _, tok := range ph.Tokens {
			out = append(out, needle{text: tok, group: 1000 + j, weight: 1})
		}
	}
	return out
}

func (e *Engine) semanticOnly(ctx context.Context, p SearchParams, q query.Query, f query.Filter, hits []vecHit, res *SearchResult) error {
	if len(hits) == 0 {
		return nil
	}
	simOf := make(map[docKey]float32, len(hits))
	for _, h := range hits {
		simOf[docKey{h.sh, h.RID}] = h.Sim
	}
	shs, rids := byShard(hits)
	cands, err := candidates(ctx, shs, rids, f)
	if err != nil {
		return err
	}
	sort.Slice(cands, func(i, j int) bool {
		return simOf[docKey{cands[i].sh, cands[i].DocRID}] > simOf[docKey{cands[j].sh, cands[j].DocRID}]
	})
	items := make([]rank.Item, len(cands))
	for i, c := range cands {
		s := float64(simOf[docKey{c.sh, c.DocRID}])
		items[i] = rank.Item{Root: famKey(c.sh, c.RootID), Kind: c.Kind, Tool: c.Tool, Role: c.Role, Time: c.Time, Vector: s, Score: s}
	}
	explain := func(i int) *Explain {
		if !p.Explain {
			return nil
		}
		return &Explain{Vector: round3(items[i].Vector), SemanticRank: i + 1}
	}
	return e.emit(ctx, p, cands, items, nil, queryNeedles(q), explain, res)
}

// hybrid fuses the lexical ranking with the vector hits (rank.Fuse) and
// renders the fused order.
func (e *Engine) hybrid(ctx context.Context, p SearchParams, q query.Query, f query.Filter, lr lexRanked, hits []vecHit, sim func(*shard, int64) (float32, bool), res *SearchResult) error {
	cands, items := lr.cands, lr.items
	nLex := len(items)
	at := make(map[docKey]int, nLex+len(hits))
	for i, c := range cands {
		at[docKey{c.sh, c.DocRID}] = i
	}
	var extra []vecHit
	for _, h := range hits {
		if _, ok := at[docKey{h.sh, h.RID}]; !ok {
			extra = append(extra, h)
		}
	}
	if len(extra) > 0 {
		xshs, rids := byShard(extra)
		more, err := candidates(ctx, xshs, rids, f)
		if err != nil {
			return err
		}
		for _, c := range more {
			at[docKey{c.sh, c.DocRID}] = len(cands)
			cands = append(cands, c)
			items = append(items, rank.Item{Root: famKey(c.sh, c.RootID), Kind: c.Kind, Tool: c.Tool, Role: c.Role, Time: c.Time, Matched: make([]bool, len(lr.terms))})
		}
	}
	if len(items) == 0 {
		return nil
	}
	for i := range items {
		if s, ok := sim(cands[i].sh, cands[i].DocRID); ok {
			items[i].Vector, items[i].HasVector = float64(s), true
		}
	}
	fu := rank.Fuse(items, nLex, lr.terms, q.IsCode())
	var order []int
	if p.Group == query.GroupNone {
		order = make([]int, len(items))
		for i := range order {
			order[i] = i
		}
		rank.ByScore(order, items)
	} else {
		slots := make([][]int, len(fu.Families))
		for k, fam := range fu.Families {
			slots[k] = fam[:min(len(fam), p.PerSession)]
		}
		if p.PerSession > 1 {
			// The lexical search's rule: a family shows its answer.
			var err error
			if cands, items, err = answerSlots(ctx, p, cands, items, fu.Families, slots, nil); err != nil {
				return err
			}
		}
		for _, s := range slots {
			order = append(order, s...)
		}
	}
	explain := func(i int) *Explain {
		if !p.Explain {
			return nil
		}
		if i >= len(fu.LexRank) { // an answer slot, read after fusion
			return &Explain{Match: lr.exprs[cands[i].sh]}
		}
		x := &Explain{Vector: round3(items[i].Vector), LexicalRank: fu.LexRank[i], SemanticRank: fu.SemRank[i], Match: lr.exprs[cands[i].sh]}
		if i < nLex && lr.explain != nil {
			lx := lr.explain(i)
			x.BM25, x.Matched = lx.BM25, lx.Matched
		}
		return x
	}
	return e.render(ctx, p, cands, items, order, nil, lr.needles, explain, res)
}
