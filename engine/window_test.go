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
	all, _, err := sh.ix.MatchTexts(ctx, index.Match{Expr: `"` + word + `"`}, nil, query.Filter{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	rids := newestFirst(all)
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
	ranked := make([]index.Candidate, len(lr.cands))
	for i, c := range lr.cands {
		ranked[i] = c.Candidate
	}
	if got := newestFirst(ranked); !slices.Equal(got, rids[:window]) {
		t.Errorf("ranked documents %v, want the newest %d of the match: %v", got, window, rids[:window])
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
	// Searching before the window's start ranks documents it left out.
	var before SearchResult
	olr, err := e.lexicalRank(ctx, e.shards, SearchParams{Query: word, Limit: 10}, query.Parse(word), query.Filter{Before: from.UnixMilli()}, &before)
	if err != nil {
		t.Fatal(err)
	}
	reached := 0
	for _, c := range olr.cands {
		if !slices.Contains(rids[:window], c.DocRID) {
			reached++
		}
	}
	if reached == 0 {
		t.Errorf("searching before %s ranks none of the documents the window left out (%d candidates)", res.Window.From, len(olr.cands))
	}

	// Counted terms over the window are cut too (the lone term above is
	// not counted).
	if res = search(t, e, word+" qqqzzzvvv"); res.Window == nil {
		t.Errorf("%q: a counted match over the window was not cut", word+" qqqzzzvvv")
	}
}

// A match is walked for its window's floor unless what its terms match,
// counted, sums within the window; so whenever it is not walked, the match
// holds no more than the window. A lone word and a quoted phrase are
// walked at once. (Compounds are left out: they are counted by their whole
// form, a known gap mayOverflow describes.)
func TestMatchWindowWalkedUnlessCounted(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	sh := e.shards[0]
	defer func(w int) { matchWindow = w }(matchWindow)
	for _, q := range []string{"ledger", `refund "half cent"`, "refund window", "invoice refund totals", "ledger qqqzzzvvv"} {
		pq := query.Parse(q)
		used := pq.Searchable()
		lx, err := sh.lexTerms(ctx, used)
		if err != nil {
			t.Fatal(err)
		}
		skip, _ := commonTerms(used, []*shardLex{lx})
		expr := index.MatchExpr(pq, lx.alts, skip)
		held, err := sh.ix.MatchCount(ctx, expr, query.Filter{}, 1<<20)
		if err != nil || held == 0 {
			t.Fatalf("%q: the match holds %d documents (%v); the test needs some", q, held, err)
		}
		spared := 0
		for matchWindow = 1; matchWindow < lx.docs; matchWindow++ {
			over, err := lx.mayOverflow(ctx, pq, skip)
			if err != nil {
				t.Fatal(err)
			}
			if !over && held > matchWindow {
				t.Fatalf("%q: not walked with a window of %d, but the match holds %d documents", q, matchWindow, held)
			}
			if !over {
				spared++
			}
		}
		walkedAlways := len(used) == 1 && len(used[0].Tokens) == 1 || len(pq.Phrases) > 0
		if walkedAlways != (spared == 0) {
			t.Errorf("%q: spared the walk for %d window sizes below the history's %d documents", q, spared, lx.docs)
		}
		matchWindow = lx.docs
		if over, _ := lx.mayOverflow(ctx, pq, skip); over {
			t.Errorf("%q: walked for a window as large as the history", q)
		}
	}
}

// newestFirst is the candidates' rids, newest (highest) first.
func newestFirst(cs []index.Candidate) []int64 {
	rids := make([]int64, len(cs))
	for i, c := range cs {
		rids[i] = c.DocRID
	}
	slices.Sort(rids)
	slices.Reverse(rids)
	return rids
}
