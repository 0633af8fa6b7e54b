package rank

import (
	"fmt"
	"testing"
)

// BenchmarkFamilies groups a full candidate list (MaxCandidates, 400
// documents) of 40 families, as one search does.
func BenchmarkFamilies(b *testing.B) {
	terms := make([]Term, 6)
	for j := range terms {
		terms[j] = Term{Needles: []string{fmt.Sprint("t", j)}, Weight: float64(j + 1)}
	}
	kinds := []string{"text", "reasoning", "tool", "output", "title"}
	items := make([]Item, 400)
	for i := range items {
		it := &items[i]
		it.Root = fmt.Sprint("root", i%40)
		it.Session = it.Root
		it.Ord = i / 40 * 3
		it.Kind = kinds[i%len(kinds)]
		it.Score = float64(i%17) / 17
		it.Matched = make([]bool, len(terms))
		it.Matched[i%len(terms)] = true
		it.Matched[(i/7)%len(terms)] = true
		it.prior = priorOf(it) // as Score sets it
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Families(items, terms)
	}
}
