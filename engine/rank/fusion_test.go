package rank

import (
	"math"
	"testing"
)

func TestSemanticWeight(t *testing.T) {
	if w := SemanticWeight(1, true); w != 0 {
		t.Errorf("a fully covered code query lets vectors reorder it (weight %v)", w)
	}
	if SemanticWeight(0, false) != SemanticWeightMax || SemanticWeight(1, false) != SemanticWeightMin {
		t.Errorf("prose weights: %v at no coverage, %v at full", SemanticWeight(0, false), SemanticWeight(1, false))
	}
	if SemanticWeight(0.5, true) >= SemanticWeight(0.5, false) {
		t.Error("a code query weighs vectors as much as prose")
	}
}

// fusionItems: lexical candidates a1 (family A, best lexically) and b1
// (family B), then c1 (family C) that only the vectors found. Vector
// similarity prefers B, then C, then A.
func fusionItems(matchedA, matchedB []bool) []Item {
	return []Item{
		{Root: "A", Score: 0.9, Matched: matchedA, Vector: 0.1, HasVector: true},
		{Root: "B", Score: 0.5, Matched: matchedB, Vector: 0.9, HasVector: true},
		{Root: "C", Matched: []bool{false, false}, Vector: 0.5, HasVector: true},
	}
}

func roots(items []Item, fams [][]int) string {
	s := ""
	for _, f := range fams {
		s += items[f[0]].Root
	}
	return s
}

func TestFuseCoveredQueryKeepsLexicalOrder(t *testing.T) {
	terms := []Term{{Weight: 1}, {Weight: 1}}
	items := fusionItems([]bool{true, true}, []bool{true, false})
	f := Fuse(items, 2, terms, false)
	if f.Weight != SemanticWeightMin {
		t.Errorf("weight %v, want the minimum: the best lexical family covers the query", f.Weight)
	}
	// A: 1/11 + 0.25/13, B: 1/12 + 0.25/11.
	if got := roots(items, f.Families); got != "ABC" {
		t.Errorf("families %s, want ABC: vectors only break near-ties when lexical covers the query", got)
	}
	if f.LexRank[0] != 1 || f.LexRank[1] != 2 || f.LexRank[2] != 0 {
		t.Errorf("lexical ranks %v, want [1 2 0]", f.LexRank)
	}
	if f.SemRank[1] != 1 || f.SemRank[2] != 2 || f.SemRank[0] != 3 {
		t.Errorf("semantic ranks %v, want [3 1 2]", f.SemRank)
	}
}

func TestFuseParaphraseTrustsVectors(t *testing.T) {
	terms := []Term{{Weight: 1}, {Weight: 1}}
	items := fusionItems([]bool{false, false}, []bool{false, false})
	f := Fuse(items, 2, terms, false)
	if f.Weight != SemanticWeightMax {
		t.Errorf("weight %v, want the maximum: nothing lexical covers the query", f.Weight)
	}
	// The same items as above, the same ranks: A 1/11 + 1/13, B 1/12 +
	// 1/11, so B's semantic first place now outweighs A's lexical one.
	if got := roots(items, f.Families); got != "BAC" {
		t.Errorf("families %s, want BAC", got)
	}
}

func TestFuseCodeQueryIgnoresVectorsWhenCovered(t *testing.T) {
	terms := []Term{{Weight: 1}, {Weight: 1}}
	items := fusionItems([]bool{true, true}, []bool{false, false})
	f := Fuse(items, 2, terms, true)
	if f.Weight != 0 {
		t.Fatalf("weight %v, want 0", f.Weight)
	}
	if items[2].Score != 0 {
		t.Errorf("a vector-only document scored %v for a covered code query", items[2].Score)
	}
	if math.Abs(items[0].Score-1) > 1e-9 {
		t.Errorf("the lexical winner scored %v, want 1 (normalised)", items[0].Score)
	}
}

func TestFuseNormalisesToOne(t *testing.T) {
	terms := []Term{{Weight: 1}}
	items := []Item{
		{Root: "A", Score: 1, Matched: []bool{true}, Vector: 0.9, HasVector: true},
		{Root: "A", Score: 0.2, Matched: []bool{false}},
	}
	f := Fuse(items, 2, terms, false)
	if math.Abs(items[0].Score-1) > 1e-9 {
		t.Errorf("first in both rankings scored %v, want 1", items[0].Score)
	}
	if f.SemRank[1] != 0 || items[1].Score >= items[0].Score {
		t.Errorf("a document without a vector: sem rank %d, score %v", f.SemRank[1], items[1].Score)
	}
	if len(f.Families) != 1 || len(f.Families[0]) != 2 || f.Families[0][0] != 0 {
		t.Errorf("families %v, want [[0 1]]", f.Families)
	}
}

func TestByScoreIsStable(t *testing.T) {
	items := []Item{{Score: 1}, {Score: 2}, {Score: 1}, {Score: 2}}
	order := []int{0, 1, 2, 3}
	ByScore(order, items)
	if order[0] != 1 || order[1] != 3 || order[2] != 0 || order[3] != 2 {
		t.Errorf("order %v, want [1 3 0 2]", order)
	}
}

// The identifier as typed outranks a near form of it (issue 12): both
// hold the compound's parts, only one holds `retryBackoff`.
func TestScoreExactFormBonus(t *testing.T) {
	items := []Item{
		{Root: "a", Kind: "text", BM25: -1, Text: "call retry_backoff here"},
		{Root: "b", Kind: "text", BM25: -1, Text: "call retryBackoff here"},
	}
	Score(items, []Term{{Parts: []string{"retry", "backoff"}, Weight: 1, Exact: "retryBackoff"}}, "")
	if items[1].Score <= items[0].Score {
		t.Errorf("exact form %.3f, near form %.3f: want the exact form above", items[1].Score, items[0].Score)
	}
}
