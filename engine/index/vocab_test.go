package index

import (
	"context"
	"slices"
	"testing"

	"github.com/recallhq/recall/engine/rank"
)

// Vocabulary returns every indexed term with its document frequency.
func (ix *Index) Vocabulary(ctx context.Context) (terms []string, df []int, err error) {
	return ix.vocabulary(ctx, `SELECT term, df FROM vocab`)
}

// TypoVocabulary's SQL filter keeps exactly the terms rank.Typable does.
func TestTypoVocabularyIsTheTypableTerms(t *testing.T) {
	ctx := context.Background()
	ix := testIndex(t)
	terms, df, err := ix.Vocabulary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	wantDF := map[string]int{}
	untypable := 0
	for i, term := range terms {
		if rank.Typable(term) {
			want = append(want, term)
			wantDF[term] = df[i]
		} else {
			untypable++
		}
	}
	if untypable == 0 || len(want) == 0 {
		t.Fatalf("the test index has %d typable and %d other terms; the test needs both", len(want), untypable)
	}
	got, gotDF, err := ix.TypoVocabulary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("typo vocabulary %q, want %q", got, want)
	}
	for i, term := range got {
		if gotDF[i] != wantDF[term] {
			t.Errorf("%q: df %d, want %d", term, gotDF[i], wantDF[term])
		}
	}
}
