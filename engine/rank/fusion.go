package rank

import "sort"

// Fusion weights: how the lexical ranking and the vector ranking combine in
// a hybrid search.
const (
	// fusionK is the k of reciprocal-rank fusion, 1/(k + rank). The
	// textbook 60 is for fusing deep lists from many systems; with two
	// lists and a first page of ten, 60 flattens the lexical ranking's
	// clear winners into near-ties (1/61 vs 1/62) that any noise in the
	// vector ranking reorders. 10 keeps a lexical first place worth more
	// than a semantic one; set on the public eval with a random model (see
	// docs/semantic.md, "Fusion").
	fusionK = 10

	// SemanticWeightMax is the vector ranking's weight (the lexical one
	// counts 1) when the lexical ranking found nothing that covers the
	// query: a paraphrase, whose words differ from the session's.
	SemanticWeightMax = 1.0
	// SemanticWeightMin is its weight when the best lexical family holds
	// every query term: the vectors then only break near-ties.
	SemanticWeightMin = 0.25
	// codeQueryFactor scales the vector weight for queries made of
	// identifiers, paths, numbers or quoted phrases: the user wants those
	// exact strings, which the model does not see as such. A code query
	// whose terms the lexical ranking fully covers ignores vectors.
	codeQueryFactor = 0.5
)

// Fusion is a hybrid ranking: Fuse's result.
type Fusion struct {
	// Weight is the vector ranking's weight (SemanticWeight).
	Weight float64
	// LexRank and SemRank are, per item, its rank in the lexical document
	// ranking and in the vector one (1 = best, 0 = not in that list).
	LexRank, SemRank []int
	// Families are the session families by fused family rank, best
	// first, each with its items by fused score, best first.
	Families [][]int
}

// Fuse ranks items, the lexical candidates (items[:nLex], scored by Score,
// Matched set) followed by documents only the vectors found, by weighted
// reciprocal-rank fusion at two levels: session families are ordered by
// 1/(k+lexical family rank) + w/(k+semantic family rank), where the lexical
// family rank is Families' own (with its coverage bonus) and the semantic
// one orders families by their best similarity; inside a family documents
// are ordered the same way by their own ranks. Ranks, not scores, because
// BM25-based scores and cosines live on unrelated scales and a model's
// cosines shift with its anisotropy. w (SemanticWeight) shrinks when the
// lexical ranking already covers the query; code says the query is meant
// literally (query.Query.IsCode).
//
// Each item's Score becomes its fused score, normalised so a document first
// in both rankings scores 1.
func Fuse(items []Item, nLex int, terms []Term, code bool) Fusion {
	f := Fusion{LexRank: make([]int, len(items)), SemRank: make([]int, len(items))}
	// Lexical ranks: documents by score, families as the lexical ranking
	// groups them.
	byScore := make([]int, nLex)
	for i := range byScore {
		byScore[i] = i
	}
	ByScore(byScore, items)
	for r, i := range byScore {
		f.LexRank[i] = r + 1
	}
	lexFam := map[string]int{}
	lexFams := Families(items[:nLex], terms)
	for r, fam := range lexFams {
		lexFam[items[fam[0]].Root] = r + 1
	}
	cov := 0.0
	if len(lexFams) > 0 {
		cov = FamilyCover(items, lexFams[0], terms)
	}
	f.Weight = SemanticWeight(cov, code)
	// Semantic ranks over every fused document that has a vector.
	var withVec []int
	for i := range items {
		if items[i].HasVector {
			withVec = append(withVec, i)
		}
	}
	sort.SliceStable(withVec, func(a, b int) bool { return items[withVec[a]].Vector > items[withVec[b]].Vector })
	semFam := map[string]int{}
	for r, i := range withVec {
		f.SemRank[i] = r + 1
		if _, ok := semFam[items[i].Root]; !ok {
			semFam[items[i].Root] = len(semFam) + 1
		}
	}
	w := f.Weight
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
		items[i].Score = rrf(f.LexRank[i], f.SemRank[i]) / top
	}
	famOf := map[string][]int{}
	var roots []string
	for i, it := range items {
		if _, ok := famOf[it.Root]; !ok {
			roots = append(roots, it.Root)
		}
		famOf[it.Root] = append(famOf[it.Root], i)
	}
	famScore := make(map[string]float64, len(roots))
	for _, r := range roots {
		famScore[r] = rrf(lexFam[r], semFam[r])
	}
	sort.SliceStable(roots, func(a, b int) bool { return famScore[roots[a]] > famScore[roots[b]] })
	for _, r := range roots {
		fam := famOf[r]
		ByScore(fam, items)
		f.Families = append(f.Families, fam)
	}
	return f
}

// FamilyCover is the idf-weighted share of the query's terms that a
// family's documents hold between them.
func FamilyCover(items []Item, fam []int, terms []Term) float64 {
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

// SemanticWeight is the vector ranking's weight in the fusion, from how
// well the lexical ranking covered the query (cov, 0..1) and whether the
// query is made of code (see the constants).
func SemanticWeight(cov float64, code bool) float64 {
	w := SemanticWeightMin*cov*cov + SemanticWeightMax*(1-cov*cov)
	if code {
		if cov >= 1 {
			return 0
		}
		w *= codeQueryFactor
	}
	return w
}

// ByScore orders the items that order indexes by Score, best first, keeping
// the order of equal scores (an insertion sort: the lists are a few hundred
// items at most, MaxCandidates plus SemanticCandidates).
func ByScore(order []int, items []Item) {
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && items[order[j]].Score > items[order[j-1]].Score; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
}
