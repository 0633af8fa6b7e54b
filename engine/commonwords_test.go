package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/query"
)

// When even the rarest word of a query is over the match budget (a query
// of common words only), the match is of the documents holding the two
// rarest together, so BM25 scores fewer documents as the history grows;
// when too few hold both, the rarest word's own match runs as before.
func TestCommonWordsMatchTogether(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	defer func(b, m int) { matchBudget, minBothCandidates = b, m }(matchBudget, minBothCandidates)
	search := func() string {
		t.Helper()
		res, err := e.Search(ctx, SearchParams{Query: "ledger invoice", Limit: 10, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Explain == nil {
			t.Fatalf("no explained hits: %+v", res)
		}
		return res.Hits[0].Explain.Match
	}
	if got := search(); strings.Contains(got, " AND ") {
		t.Fatalf("under the budget the match asks for both words: %s", got)
	}
	matchBudget, minBothCandidates = 1, 1
	if got := search(); !strings.Contains(got, " AND ") {
		t.Errorf("over the budget the match is not of the documents holding both words: %s", got)
	}
	minBothCandidates = 1 << 30
	if got := search(); strings.Contains(got, " AND ") {
		t.Errorf("too few documents hold both words, yet the match asks for both: %s", got)
	}
	// Windowed (a history larger than the window), the walk for the
	// window's floor counts the documents holding both, and too few are
	// not ranked at all (rankWindow's least).
	defer func(w int) { matchWindow = w }(matchWindow)
	matchWindow = 2
	if got := search(); strings.Contains(got, " AND ") {
		t.Errorf("windowed, too few documents hold both words, yet the match asks for both: %s", got)
	}
	minBothCandidates = 1
	if got := search(); !strings.Contains(got, " AND ") {
		t.Errorf("windowed, over the budget the match is not of the documents holding both words: %s", got)
	}
}

// A word that matches nothing must not take the rarest term's place in
// the match: with the common word over the budget, the search found
// nothing at all.
func TestUnknownWordKeepsTheCommonWordsMatch(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	defer func(b int) { matchBudget = b }(matchBudget)
	matchBudget = 1
	res, err := e.Search(ctx, SearchParams{Query: "qqqzzzvvv ledger", Limit: 10, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		t.Fatalf("an unknown word beside a common one found nothing: %+v", res)
	}
}

// With three or more words all over the budget, the two that go in the
// match together are the two whose matches are smallest, counted past the
// budget: capped counts all tie, and the tie-break by the vocabulary's
// prefix frequencies misses the porter stem. In the fixture "files" and
// "rounds" start 3 documents' words each but match 18 and 24 through their
// stems, "quota" 9 (on the 845k-part history "checked" stood for 19,725
// documents by 731, and the search scored 20k documents for 150 ms).
func TestCommonWordsPairedByWhatTheyMatch(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	defer func(b, c int) { matchBudget, commonCountLimit = b, c }(matchBudget, commonCountLimit)
	matchBudget, commonCountLimit = 2, 100
	used := query.Parse("files rounds quota").Searchable()
	lx, err := e.shards[0].lexTerms(ctx, used)
	if err != nil {
		t.Fatal(err)
	}
	_, both := commonTerms(used, []*shardLex{lx})
	if strings.Join(both, " ") != "quota files" {
		t.Errorf("paired %q, want the two smallest matches, \"quota files\" (counts %d %d %d)",
			both, lx.terms[0].matchDF, lx.terms[1].matchDF, lx.terms[2].matchDF)
	}

	// A term counted after the two rarest stops one past the second of
	// them: whatever it matches beyond, it is left out ("ledger", the
	// likeliest common by its prefix frequency, is counted last).
	used = query.Parse("files rounds quota ledger").Searchable()
	if lx, err = e.shards[0].lexTerms(ctx, used); err != nil {
		t.Fatal(err)
	}
	_, both = commonTerms(used, []*shardLex{lx})
	all, err := e.shards[0].ix.MatchCount(ctx, `"ledger"`, query.Filter{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	second := lx.terms[0].matchDF // files
	if strings.Join(both, " ") != "quota files" || all <= second+1 || lx.terms[3].matchDF != second+1 {
		t.Errorf("paired %q; ledger counted to %d of its %d documents, want %d (files' %d + 1)",
			both, lx.terms[3].matchDF, all, second+1, second)
	}
}
