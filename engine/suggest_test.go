package engine

import (
	"testing"

	"github.com/recallhq/recall/engine/query"
)

func suggestion(res SearchResult, kind string) *Suggestion {
	for i := range res.Suggestions {
		if res.Suggestions[i].Kind == kind {
			return &res.Suggestions[i]
		}
	}
	return nil
}

// Zero hits say what would match, computed from the index: before, the
// result said nothing (the CLI printed "no matches"; the test did not
// compile: SearchResult had no Suggestions).
func TestZeroHitsSuggest(t *testing.T) {
	e := openFixture(t, "v1")

	// thimbleberry is in L2's reasoning only: --tool bash empties it.
	res := search(t, e, "thimbleberry", func(p *SearchParams) { p.Filter.Tools = []string{"bash"} })
	if len(res.Hits) != 0 {
		t.Fatalf("hits %+v", res.Hits)
	}
	if s := suggestion(res, "filter"); s == nil || s.Filter != "tool" || s.Hits != 1 {
		t.Errorf("filter suggestion %+v in %+v", s, res.Suggestions)
	}
	if s := suggestion(res, "coverage"); s == nil || s.Sessions != 10 || s.Parts == 0 {
		t.Errorf("coverage suggestion %+v", s)
	}

	// An identifier's prefix: try a literal match.
	res = search(t, e, "ERR_QUOTA_77")
	if len(res.Hits) == 0 {
		if s := suggestion(res, "match"); s == nil || s.Match != query.MatchLiteral {
			t.Errorf("no literal match suggestion for ERR_QUOTA_77: %+v", res.Suggestions)
		}
	}

	// A pattern: try a regex match.
	res = search(t, e, `ERR_QUOTA_\d+`)
	if s := suggestion(res, "match"); len(res.Hits) == 0 && (s == nil || s.Match != query.MatchRegex) {
		t.Errorf("no regex match suggestion for ERR_QUOTA_\\d+: %+v", res.Suggestions)
	}

	// A misspelt word, in a literal scan: the index's word near it.
	res = search(t, e, "brambelworth", func(p *SearchParams) { p.Match = query.MatchLiteral })
	if s := suggestion(res, "term"); s == nil || s.From != "brambelworth" || s.To != "brambleworth" {
		t.Errorf("term suggestion %+v in %+v", s, res.Suggestions)
	}
	if s := suggestion(res, "coverage"); s == nil || s.Sessions != 10 || s.Parts != res.Coverage.Parts {
		t.Errorf("coverage of a scan %+v vs %+v", s, res.Coverage)
	}

	// Hits: no suggestions.
	if res := search(t, e, "thimbleberry"); len(res.Hits) == 0 || len(res.Suggestions) != 0 {
		t.Errorf("a search with hits carries suggestions %+v", res.Suggestions)
	}
}
