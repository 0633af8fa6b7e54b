package index

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/rank"
)

// Vocabulary returns every indexed term with its document frequency, read
// a row at a time: a reading of its own to hold ix.vocabulary's against.
func (ix *Index) Vocabulary(ctx context.Context) (terms []string, df []int, err error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT term, df FROM vocab`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return nil, nil, err
		}
		terms = append(terms, t)
		df = append(df, n)
	}
	return terms, df, rows.Err()
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

// A search with a typo reads the typo vocabulary from the partial index
// vocab_words, not by scanning every term: the query's WHERE must stay the
// index's, or SQLite quietly goes back to the scan. An index made before
// vocab_words gets it from AddMissingIndexes.
func TestTypoVocabularyReadsItsIndex(t *testing.T) {
	ctx := context.Background()
	ix := testIndex(t)
	plan := func() string {
		rows, err := ix.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+vocabQuery(`WHERE `+typoWords))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var steps []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, detail)
		}
		return strings.Join(steps, "; ")
	}
	if got, want := plan(), "SCAN vocab USING COVERING INDEX vocab_words"; got != want {
		t.Fatalf("typo vocabulary plan %q, want %q", got, want)
	}
	if _, err := ix.db.ExecContext(ctx, `DROP INDEX vocab_words`); err != nil {
		t.Fatal(err)
	}
	if got := plan(); strings.Contains(got, "vocab_words") {
		t.Fatalf("plan %q after the index was dropped", got)
	}
	if err := ix.AddMissingIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := plan(), "SCAN vocab USING COVERING INDEX vocab_words"; got != want {
		t.Fatalf("after AddMissingIndexes, plan %q, want %q", got, want)
	}
}
