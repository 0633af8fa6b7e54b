package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/recallhq/recall/engine/embed"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/rank"
	"github.com/recallhq/recall/engine/vectors"
)

// SemanticCandidates bounds the vector hits a search fuses with the lexical
// candidates: like MaxCandidates, more never reach the first page, and each
// costs a row read.
const SemanticCandidates = 200

// searchSemantic runs modes auto, semantic and hybrid. It fails open: in
// auto mode a missing model or missing vectors mean lexical search and one
// notice; an explicit semantic or hybrid search without a model is
// embed.ErrNoModel, whose message says how to install one.
func (e *Engine) searchSemantic(ctx context.Context, p SearchParams, q query.Query, f query.Filter, res *SearchResult) error {
	mode := p.Mode
	if mode == "" {
		mode = query.ModeAuto
	}
	auto := mode == query.ModeAuto
	notice := func(kind, msg string) {
		if auto {
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
			notice("no-model", "no embedding model installed; searched lexically (`recall models pull` or `recall models import DIR` adds semantic search)")
		} else {
			notice("model-error", fmt.Sprintf("semantic search unavailable (%v); searched lexically", err))
		}
		return e.lexical(ctx, p, q, f, res)
	}
	key := manifestKey(man)
	stored, err := e.ix.VectorModel(ctx)
	if err != nil {
		return err
	}
	ready := false
	if stored == key {
		if ready, err = e.ix.HasVectors(ctx); err != nil {
			return err
		}
	}
	if !ready {
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
		return e.lexical(ctx, p, q, f, res)
	}
	// The model first: its load is the larger transient, and it should
	// be over before the vectors arrive (see embedder).
	emb, err := e.embedder()
	if err != nil {
		if auto {
			notice("model-error", fmt.Sprintf("semantic search unavailable (%v); searched lexically", err))
			return e.lexical(ctx, p, q, f, res)
		}
		return err
	}
	lv, err := e.vectors(ctx, key)
	if err != nil {
		return err
	}
	qv, err := emb.Embed(ctx, []string{queryText(q.Raw)})
	if err != nil {
		return fmt.Errorf("embed query: %w", err)
	}
	lv.mu.RLock()
	defer lv.mu.RUnlock()
	if lv.embedded < lv.total {
		notice("partial", fmt.Sprintf("vectors cover %d of %d documents; semantic results come from those only (run `recall sync --embed` to finish)", lv.embedded, lv.total))
	}
	vq := vectors.NewQuery(qv[0])
	hits := lv.set.Search(ctx, vq, lv.set.Compile(f), SemanticCandidates)
	sim := func(rid int64) (float32, bool) { return lv.set.Similarity(vq, rid) }
	if mode == query.ModeSemantic {
		res.Mode = query.ModeSemantic
		return e.semanticOnly(ctx, p, q, f, hits, res)
	}
	res.Mode = query.ModeHybrid
	return e.hybrid(ctx, p, q, f, hits, sim, res)
}

// queryNeedles are the stems snippets highlight when no lexical ranking ran.
func queryNeedles(q query.Query) []string {
	var out []string
	for _, t := range q.Searchable() {
		out = append(out, rank.Stem(t.Key()))
	}
	for _, ph := range q.Phrases {
		out = append(out, ph.Tokens...)
	}
	return out
}

func (e *Engine) semanticOnly(ctx context.Context, p SearchParams, q query.Query, f query.Filter, hits []vectors.Hit, res *SearchResult) error {
	if len(hits) == 0 {
		return nil
	}
	rids := make([]int64, len(hits))
	simOf := make(map[int64]float32, len(hits))
	for i, h := range hits {
		rids[i] = h.RID
		simOf[h.RID] = h.Sim
	}
	cands, err := e.ix.Candidates(ctx, rids, f)
	if err != nil {
		return err
	}
	sort.Slice(cands, func(i, j int) bool { return simOf[cands[i].DocRID] > simOf[cands[j].DocRID] })
	items := make([]rank.Item, len(cands))
	for i, c := range cands {
		s := float64(simOf[c.DocRID])
		items[i] = rank.Item{Root: c.RootID, Kind: c.Kind, Tool: c.Tool, Role: c.Role, Time: c.Time, Vector: s, Score: s}
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
func (e *Engine) hybrid(ctx context.Context, p SearchParams, q query.Query, f query.Filter, hits []vectors.Hit, sim func(int64) (float32, bool), res *SearchResult) error {
	lr, err := e.lexicalRank(ctx, p, q, f, res)
	if err != nil {
		return err
	}
	cands, items := lr.cands, lr.items
	nLex := len(items)
	at := make(map[int64]int, nLex+len(hits))
	for i, c := range cands {
		at[c.DocRID] = i
	}
	var extra []int64
	for _, h := range hits {
		if _, ok := at[h.RID]; !ok {
			extra = append(extra, h.RID)
		}
	}
	if len(extra) > 0 {
		more, err := e.ix.Candidates(ctx, extra, f)
		if err != nil {
			return err
		}
		for _, c := range more {
			at[c.DocRID] = len(cands)
			cands = append(cands, c)
			items = append(items, rank.Item{Root: c.RootID, Kind: c.Kind, Tool: c.Tool, Role: c.Role, Time: c.Time, Matched: make([]bool, len(lr.terms))})
		}
	}
	if len(items) == 0 {
		return nil
	}
	for i := range items {
		if s, ok := sim(cands[i].DocRID); ok {
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
		for _, fam := range fu.Families {
			order = append(order, fam[:min(len(fam), p.PerSession)]...)
		}
	}
	explain := func(i int) *Explain {
		if !p.Explain {
			return nil
		}
		x := &Explain{Vector: round3(items[i].Vector), LexicalRank: fu.LexRank[i], SemanticRank: fu.SemRank[i], Match: lr.expr}
		if i < nLex && lr.explain != nil {
			lx := lr.explain(i)
			x.BM25, x.Matched = lx.BM25, lx.Matched
		}
		return x
	}
	return e.render(ctx, p, cands, items, order, lr.needles, explain, res)
}
