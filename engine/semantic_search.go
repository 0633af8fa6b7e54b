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
)

// Semantic search budgets and fusion weights.
const (
	// SemanticCandidates bounds the vector hits a search fuses with the
	// lexical candidates: like MaxCandidates, more never reach the first
	// page, and each costs a row read.
	SemanticCandidates = 200

	// fusionK is the k of reciprocal-rank fusion, 1/(k + rank). The
	// textbook 60 is for fusing deep lists from many systems; with two
	// lists and a first page of ten, 60 flattens the lexical ranking's
	// clear winners into near-ties (1/61 vs 1/62) that any noise in the
	// vector ranking reorders. 10 keeps a lexical first place worth more
	// than a semantic one; set on the public eval with a random model (see
	// README, "Semantic search").
	fusionK = 10

	// semanticWeightMax is the vector ranking's weight (the lexical one
	// counts 1) when the lexical ranking found nothing that covers the
	// query: a paraphrase, whose words differ from the session's.
	semanticWeightMax = 1.0
	// semanticWeightMin is its weight when the best lexical family holds
	// every query term: the vectors then only break near-ties.
	semanticWeightMin = 0.25
	// codeQueryFactor scales the vector weight for queries made of
	// identifiers, paths, numbers or quoted phrases: the user wants those
	// exact strings, which the model does not see as such. A code query
	// whose terms the lexical ranking fully covers ignores vectors.
	codeQueryFactor = 0.5
)

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
	vs, err := e.vectors(ctx, key)
	if err != nil {
		return err
	}
	qv, err := emb.Embed(ctx, []string{queryText(q.Raw)})
	if err != nil {
		return fmt.Errorf("embed query: %w", err)
	}
	vs.mu.RLock()
	defer vs.mu.RUnlock()
	if vs.embedded < vs.total {
		notice("partial", fmt.Sprintf("vectors cover %d of %d documents; semantic results come from those only (run `recall sync --embed` to finish)", vs.embedded, vs.total))
	}
	hits := vs.search(ctx, qv[0], vs.compileFilter(f), SemanticCandidates)
	qq, qs := quantize(qv[0])
	sim := func(rid int64) (float32, bool) { return vs.similarity(rid, qq, qs) }
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

func (e *Engine) semanticOnly(ctx context.Context, p SearchParams, q query.Query, f query.Filter, hits []vecHit, res *SearchResult) error {
	if len(hits) == 0 {
		return nil
	}
	rids := make([]int64, len(hits))
	simOf := make(map[int64]float32, len(hits))
	for i, h := range hits {
		rids[i] = h.rid
		simOf[h.rid] = h.sim
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

// hybrid fuses the lexical ranking with the vector hits by weighted
// reciprocal-rank fusion at two levels: session families are ordered by
// 1/(k+lexical family rank) + w/(k+semantic family rank), where the lexical
// family rank is the lexical engine's own (with its coverage bonus) and the
// semantic one orders families by their best similarity; inside a family
// documents are ordered the same way by their own ranks. Ranks, not scores,
// because BM25-based scores and cosines live on unrelated scales and a
// model's cosines shift with its anisotropy. w (semanticWeight) shrinks
// when the lexical ranking already covers the query.
func (e *Engine) hybrid(ctx context.Context, p SearchParams, q query.Query, f query.Filter, hits []vecHit, sim func(int64) (float32, bool), res *SearchResult) error {
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
		if _, ok := at[h.rid]; !ok {
			extra = append(extra, h.rid)
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
	// Lexical ranks: documents by score, families as the lexical engine
	// groups them.
	lexDoc := make([]int, len(items)) // 0 = absent
	byScore := make([]int, nLex)
	for i := range byScore {
		byScore[i] = i
	}
	sortByScore(byScore, items)
	for r, i := range byScore {
		lexDoc[i] = r + 1
	}
	lexFam := map[string]int{}
	lexFams := rank.Families(items[:nLex], lr.terms)
	for r, fam := range lexFams {
		lexFam[items[fam[0]].Root] = r + 1
	}
	cov := 0.0
	if len(lexFams) > 0 {
		cov = familyCover(items, lexFams[0], lr.terms)
	}
	w := semanticWeight(q, cov)
	// Semantic ranks over every fused document that has a vector.
	semDoc := make([]int, len(items))
	var withVec []int
	for i := range items {
		if s, ok := sim(cands[i].DocRID); ok {
			items[i].Vector = float64(s)
			withVec = append(withVec, i)
		}
	}
	sort.SliceStable(withVec, func(a, b int) bool { return items[withVec[a]].Vector > items[withVec[b]].Vector })
	semFam := map[string]int{}
	for r, i := range withVec {
		semDoc[i] = r + 1
		if _, ok := semFam[items[i].Root]; !ok {
			semFam[items[i].Root] = len(semFam) + 1
		}
	}
	rrf := func(lex, sem int) float64 {
		s := 0.0
		if lex > 0 {
			s += 1 / float64(fusionK+lex)
		}
		if sem > 0 {
			s += w / float64(fusionK+sem)
		}
		return s
	}
	top := rrf(1, 1)
	for i := range items {
		items[i].Score = rrf(lexDoc[i], semDoc[i]) / top
	}
	var order []int
	if p.Group == query.GroupNone {
		order = make([]int, len(items))
		for i := range order {
			order[i] = i
		}
		sortByScore(order, items)
	} else {
		famOf := map[string][]int{}
		var roots []string
		for i, it := range items {
			if _, ok := famOf[it.Root]; !ok {
				roots = append(roots, it.Root)
			}
			famOf[it.Root] = append(famOf[it.Root], i)
		}
		famScore := map[string]float64{}
		for _, r := range roots {
			famScore[r] = rrf(lexFam[r], semFam[r])
		}
		sort.SliceStable(roots, func(a, b int) bool { return famScore[roots[a]] > famScore[roots[b]] })
		for _, r := range roots {
			fam := famOf[r]
			sortByScore(fam, items)
			order = append(order, fam[:min(len(fam), p.PerSession)]...)
		}
	}
	explain := func(i int) *Explain {
		if !p.Explain {
			return nil
		}
		x := &Explain{Vector: round3(items[i].Vector), LexicalRank: lexDoc[i], SemanticRank: semDoc[i], Match: lr.expr}
		if i < nLex && lr.explain != nil {
			lx := lr.explain(i)
			x.BM25, x.Matched = lx.BM25, lx.Matched
		}
		return x
	}
	return e.render(ctx, p, cands, items, order, lr.needles, explain, res)
}

// familyCover is the idf-weighted share of the query's terms that a family's
// documents hold between them.
func familyCover(items []rank.Item, fam []int, terms []rank.Term) float64 {
	total, got := 0.0, 0.0
	for j, t := range terms {
		total += t.Weight
		for _, i := range fam {
			if j < len(items[i].Matched) && items[i].Matched[j] {
				got += t.Weight
				break
			}
		}
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// semanticWeight is the vector ranking's weight in the fusion, from how
// well the lexical ranking covered the query (cov, 0..1) and whether the
// query is made of code (see the constants).
func semanticWeight(q query.Query, cov float64) float64 {
	w := semanticWeightMin*cov*cov + semanticWeightMax*(1-cov*cov)
	if isCodeQuery(q) {
		if cov >= 1 {
			return 0
		}
		w *= codeQueryFactor
	}
	return w
}

// isCodeQuery: the query names identifiers, paths, numbers or quoted
// strings, which the user means literally.
func isCodeQuery(q query.Query) bool {
	if len(q.Phrases) > 0 {
		return true
	}
	for _, t := range q.Terms {
		if len(t.Tokens) > 1 || strings.ContainsAny(t.Raw, "/_.:()[]{}<>=#$@") || strings.ContainsAny(t.Key(), "0123456789") {
			return true
		}
	}
	return false
}
