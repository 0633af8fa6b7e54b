package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
)

// A compound that enough documents hold whole is matched by its whole form
// alone: the phrase of its parts costs the match a walk of every document
// holding its words, and adds only documents that write it apart. Fewer,
// and the phrase stays in, so the identifier written apart is still found.
func TestCompoundMatchedByWholeFormWhenEnoughHoldIt(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	sh := e.shards[0]
	whole, err := sh.ix.MatchCount(ctx, `"half_cent"`, query.Filter{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	apart, err := sh.ix.MatchCount(ctx, `"half cent"`, query.Filter{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if whole == 0 || apart <= whole {
		t.Fatalf("half_cent: %d documents whole, %d by its parts; the test needs some that write it apart only", whole, apart)
	}
	defer func(n int) { wholeFormEnough = n }(wholeFormEnough)
	for _, c := range []struct {
		enough    int
		wantParts bool
	}{{whole + 1, true}, {whole, false}, {MaxCandidates, true}} {
		wholeFormEnough = c.enough
		// The budget's count of the compound is its whole form's, whether
		// taken from countWhole (below wholeFormEnough) or counted again.
		used := query.Parse("halfCent qqqzzzvvv").Searchable()
		lx, err := sh.lexTerms(ctx, used)
		if err != nil {
			t.Fatal(err)
		}
		if got := lx.terms[0].matchDF; got != whole {
			t.Errorf("wholeFormEnough %d: the budget counts halfCent as %d documents, its whole form holds %d", c.enough, got, whole)
		}
		for _, q := range []string{"halfCent", "half_cent refund", "refund totals halfCent"} {
			var res SearchResult
			lr, err := e.lexicalRank(ctx, e.shards, SearchParams{Query: q, Limit: 10}, query.Parse(q), query.Filter{}, &res)
			if err != nil {
				t.Fatal(err)
			}
			expr := lr.exprs[sh]
			if got := strings.Contains(expr, `"half cent"`); got != c.wantParts {
				t.Errorf("%q with %d documents holding the whole form and wholeFormEnough %d: match %s, want the phrase of its parts: %v",
					q, whole, c.enough, expr, c.wantParts)
			}
			if q != "halfCent" {
				continue
			}
			want := whole
			if c.wantParts {
				want = apart
			}
			if len(lr.cands) != want {
				t.Errorf("%q with wholeFormEnough %d: %d candidates, want %d", q, c.enough, len(lr.cands), want)
			}
		}
	}
}

// A quoted compound is matched by its whole form: the index holds its
// parts after it wherever it holds it, so the two match the same
// documents (the phrase begins with the whole form, so it can hold no
// more; the counts being equal, it holds no fewer), but for a camelCase
// one's glued form.
func TestQuotedCompoundMatchesAsItsPhrase(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	sh := e.shards[0]
	for _, w := range []string{"half_cent", "round_half_up", "normalize_invoice_totals", "roundHalfUp"} {
		q := query.Parse(`"` + w + `"`)
		p := q.Phrases[0]
		if !p.Compound {
			t.Fatalf("%q: not taken as one compound: %+v", w, p)
		}
		expr := index.MatchExpr(q, nil, nil)
		if strings.Contains(expr, " ") {
			t.Errorf("%q: match %s, want its whole form alone", w, expr)
		}
		got, err := sh.ix.MatchCount(ctx, expr, query.Filter{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sh.ix.MatchCount(ctx, `"`+strings.Join(p.Tokens, " ")+`"`, query.Filter{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		// A camelCase one's phrase holds its glued form too
		// (`roundhalfup`), so it matched only that spelling; its whole form
		// matches every spelling, as the term unquoted does.
		camel := strings.ToLower(w) != w
		if got == 0 || got != want && !camel || got < want {
			t.Errorf("%q: its whole form matches %d documents, its phrase %d", w, got, want)
		}
	}
}
