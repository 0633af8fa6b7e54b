package engine

import (
	"context"
	"testing"

	"github.com/recallhq/recall/engine/query"
)

// v1's L5 is a fork of L1 made by the real OpenCode 1.18.33 (POST
// /session/{id}/fork): a new top-level session, no parent_id, copies of
// L1's first turn under new ids with their original time.created. Both
// hold brambleworth (in the copied reasoning). Excluding L1 and its
// family used to return L5; a fork is family now, both ways, in ranked
// and literal search.
func TestExcludeSessionLeavesOutForks(t *testing.T) {
	e := openFixture(t, "v1")
	const l1, l5 = "ses_dd7574300ffeDSAKd7MCEMAuWS", "ses_dd7570417ffeqk1pr5gb0iktLx"
	for _, m := range []query.Match{query.MatchRanked, query.MatchLiteral} {
		all := search(t, e, "brambleworth", func(p *SearchParams) { p.Match = m; p.Group = query.GroupNone })
		if got := hitSessions(all); !got[l1] || !got[l5] {
			t.Fatalf("%s: brambleworth should be in L1 and its fork L5: %v", m, got)
		}
		for _, x := range []string{l1, l5} {
			res := search(t, e, "brambleworth", func(p *SearchParams) { p.Match = m; p.Filter.ExcludeSession = x })
			if got := hitSessions(res); got[l1] || got[l5] {
				t.Errorf("%s: excluding %s returned its fork family: %v", m, x, got)
			}
		}
	}
	forks, err := e.shards[0].forks(context.Background(), l1)
	if err != nil || len(forks) != 1 || forks[0] != l5 {
		t.Errorf("forks(L1) = %v, %v; want [L5]", forks, err)
	}
	// Sessions that only look alike (same project, other prompts) are not
	// a family: L2 has none.
	if forks, err := e.shards[0].forks(context.Background(), "ses_dd7571907ffe5vPpW7vxTE77tW"); err != nil || len(forks) != 0 {
		t.Errorf("forks(L2) = %v, %v; want none", forks, err)
	}
}

func hitSessions(res SearchResult) map[string]bool {
	out := map[string]bool{}
	for _, h := range res.Hits {
		out[h.SessionID] = true
	}
	return out
}
