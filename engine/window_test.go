package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
)

// A match holding more than MatchWindow documents is ranked over its
// newest MatchWindow only (BM25 costs a lookup per scored document, so an
// unbounded common word costs in proportion to the history), and the
// result says so with a date to search before; the older documents stay
// reachable through that date.
func TestCommonMatchRanksItsNewestDocuments(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	sh := e.shards[0]
	const word = "ledger"
	all, _, err := sh.ix.MatchTexts(ctx, `"`+word+`"`, query.Filter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var rids []int64
	for _, c := range all {
		rids = append(rids, c.DocRID)
	}
	slices.Sort(rids)
	slices.Reverse(rids)
	const window = 3
	if len(rids) <= window {
		t.Fatalf("%q matches %d documents; the test needs more than %d", word, len(rids), window)
	}
	defer func(w int) { matchWindow = w }(matchWindow)

	res := search(t, e, word)
	if res.Window != nil || strings.Contains(strings.Join(res.Notices, " "), "newest") {
		t.Fatalf("a match within the window says it was cut: %+v %q", res.Window, res.Notices)
	}

	matchWindow = window
	var own SearchResult
	lr, err := e.lexicalRank(ctx, e.shards, SearchParams{Query: word, Limit: 10}, query.Parse(word), query.Filter{}, &own)
	if err != nil {
		t.Fatal(err)
	}
	var ranked []int64
	for _, c := range lr.cands {
		ranked = append(ranked, c.DocRID)
	}
	slices.Sort(ranked)
	slices.Reverse(ranked)
	if !slices.Equal(ranked, rids[:window]) {
		t.Errorf("ranked documents %v, want the newest %d of the match: %v", ranked, window, rids[:window])
	}

	res = search(t, e, word)
	if res.Window == nil || res.Window.Ranked != window {
		t.Fatalf("a cut match has no window: %+v", res.Window)
	}
	from, err := time.Parse(time.RFC3339, res.Window.From)
	if err != nil {
		t.Fatal(err)
	}
	day := from.Format("2006-01-02")
	notice := strings.Join(res.Notices, " ")
	if !strings.Contains(notice, "newest 3 documents") || !strings.Contains(notice, "--before "+day) {
		t.Errorf("the notice does not say what was ranked and how to reach older ones: %q", res.Notices)
	}
	older := search(t, e, word, func(p *SearchParams) { p.Filter.Before = from.AddDate(0, 0, 1).UnixMilli() })
	if len(older.Hits) == 0 {
		t.Errorf("searching before %s finds nothing", day)
	}

	// Counted terms over the window are cut too (the lone term above is
	// not counted).
	if res = search(t, e, word+" qqqzzzvvv"); res.Window == nil {
		t.Errorf("%q: a counted match over the window was not cut", word+" qqqzzzvvv")
	}
}

// A match is walked for its window unless every term in it was counted
// whole within the window: a lone term, a phrase and a compound (counted
// by its whole form, matched with the phrase of its parts too) were not.
func TestMatchWindowWalkedUnlessCounted(t *testing.T) {
	defer func(w int) { matchWindow = w }(matchWindow)
	matchWindow = 10
	for q, want := range map[string]bool{
		"alpha beta":          false,
		"alpha":               true,
		`alpha "beta gamma"`:  true,
		"alpha DB_MAX_CONNS":  true,
		"alpha beta -gamma":   false,
		"alpha beta delta":    true, // 4 + 4 + 4 documents: over the window
		"alpha beta qqqzzzvv": false,
	} {
		pq := query.Parse(q)
		lx := &shardLex{docs: 100, alts: index.Alternatives{}}
		for _, term := range pq.Searchable() {
			df := 4
			if term.Key() == "qqqzzzvv" {
				df = 0
			}
			lx.terms = append(lx.terms, shardTerm{matchDF: df})
		}
		if got := lx.mayOverflow(pq, nil); got != want {
			t.Errorf("%q: walked for a window %v, want %v", q, got, want)
		}
		lx.docs = matchWindow
		if lx.mayOverflow(pq, nil) {
			t.Errorf("%q: walked for a window in a history no larger than it", q)
		}
	}
}
