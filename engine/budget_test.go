package engine

import (
	"context"
	"testing"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
)

// The match budget (MatchBudget) leaves common terms out of the FTS match
// by how many documents each would make BM25 score. FTS5 matches a word
// through its porter stem, so a word's stem family can be far larger
// than the words that start with it: on the 220k-part benchmark history
// "ids" (stem "id") matched 14,074 documents while its prefix family
// counted 2,470, and "validation" (stem "valid") 6,842 against 760; the
// slowest public query scored 15,597 documents under a budget of 6,000.
// The count for a word must never be below what its match touches. (A
// lone term is not counted: it goes in the match whatever it costs; the
// test pairs each word with one the fixture never uses.)
func TestMatchBudgetCountsWhatFTSMatches(t *testing.T) {
	e := openFixture(t, "v1")
	db := rawIndex(t, e)
	ctx := context.Background()
	sh := e.shards[0]
	under := 0
	for _, word := range []string{"ids", "id", "tests", "testing", "connections", "validation", "errors", "running", "files", "fixed", "changes", "using"} {
		q := query.Parse(word + " qqqzzzvvv")
		used := q.Searchable()
		if len(used) != 2 {
			t.Fatalf("%q: %d terms", word, len(used))
		}
		lx, err := sh.lexTerms(ctx, used)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?`, index.MatchExpr(query.Parse(word), lx.alts, nil)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			under++
		}
		if got := lx.terms[0].matchDF; got < min(n, MatchBudget+1) {
			t.Errorf("%q: the match budget counts %d documents, the FTS match touches %d", word, got, n)
		}
	}
	if under < 3 {
		t.Fatalf("only %d of the words occur in the fixture; the test checks nothing", under)
	}
}
