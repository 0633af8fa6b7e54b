package engine

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

func matchSearch(t *testing.T, e *Engine, m query.Match, q string, mod ...func(*SearchParams)) SearchResult {
	t.Helper()
	return search(t, e, q, append([]func(*SearchParams){func(p *SearchParams) { p.Match = m }}, mod...)...)
}

const l2 = "ses_dd7571907ffe5vPpW7vxTE77tW" // v1's L2: ERR_QUOTA_7731 in a bash output

// Ranked search finds nothing for a regex or an identifier's prefix
// (ERR_QUOTA_\d+, ERR_QUOTA_77: the index holds whole tokens); literal
// and regex matches scan the history's text and find L2's bash output.
func TestMatchFindsWhatRankedCannot(t *testing.T) {
	e := openFixture(t, "v1")
	for _, tc := range []struct {
		m query.Match
		q string
	}{{query.MatchRegex, `ERR_QUOTA_\d+`}, {query.MatchLiteral, `ERR_QUOTA_77`}, {query.MatchLiteral, `err_quota_77`}, {query.MatchRegex, `code=ERR_[A-Z]+_7731\b`}} {
		res := matchSearch(t, e, tc.m, tc.q)
		if len(res.Hits) != 1 {
			t.Fatalf("%s %q: %d hits, want L2's bash output: %+v", tc.m, tc.q, len(res.Hits), res.Hits)
		}
		h := res.Hits[0]
		if h.SessionID != l2 || h.Kind != "output" || h.Tool != "bash" || h.Role != "assistant" || !strings.Contains(h.Snippet, "ERR_QUOTA_7731") {
			t.Errorf("%s %q: hit %+v", tc.m, tc.q, h)
		}
		if len(h.Highlights) == 0 {
			t.Errorf("%s %q: no highlight", tc.m, tc.q)
		} else if r := []rune(h.Snippet); !strings.Contains(strings.ToUpper(string(r[h.Highlights[0][0]:h.Highlights[0][1]])), "ERR_QUOTA_77") {
			t.Errorf("%s %q: highlight %v is %q", tc.m, tc.q, h.Highlights[0], string(r[h.Highlights[0][0]:h.Highlights[0][1]]))
		}
		if res.Coverage == nil || !res.Coverage.Complete || res.Continue != "" || res.Coverage.Sessions != 10 || res.Coverage.Parts == 0 {
			t.Errorf("%s %q: coverage %+v continue %q", tc.m, tc.q, res.Coverage, res.Continue)
		}
		// The hit's cursor reads and gets like a ranked hit's.
		if r, err := e.Get(context.Background(), GetParams{ID: h.Cursor}); err != nil || !strings.Contains(r.Text, "ERR_QUOTA_7731") {
			t.Errorf("get of a match hit: %v", err)
		}
		if _, err := e.Read(context.Background(), ReadParams{Cursor: h.Cursor}); err != nil {
			t.Errorf("read of a match hit: %v", err)
		}
	}
}

// The index keeps W1's 51 KB build output as its first 12 KiB and last 4
// KiB; a line from its middle is only found by scanning the history.
func TestMatchScansFullOutputs(t *testing.T) {
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "i.db"))
	hits := search(t, e, "Verbose build", func(p *SearchParams) { p.Filter.Tools = []string{"bash"} }).Hits
	var id string
	for _, h := range hits {
		if h.SessionID == "ses_dd7574313ffel4nKxdxp14c1ti" && id == "" {
			id = h.PartID
		}
	}
	out := sourceOutput(t, db, id)
	mid := len(out) / 2
	line := strings.SplitN(out[mid:], "\n", 3)[1]
	if len(line) < 10 {
		t.Fatalf("middle line %q too short", line)
	}
	res := matchSearch(t, e, query.MatchLiteral, line, func(p *SearchParams) { p.Filter.Tools = []string{"bash"} })
	found := false
	for _, h := range res.Hits {
		found = found || h.PartID == id
	}
	if !found {
		t.Errorf("literal %q (from the middle of W1's output) missed the part: %+v", line, res.Hits)
	}
}

// A scan stopped by its budgets resumes exactly where coverage stopped:
// the hits of every resumed page, joined, are the hits of one unbudgeted
// scan, in order, none twice and none skipped. Over two histories (v1 and
// v2) and both byte and hit-count stops.
func TestMatchContinuationResumesExactly(t *testing.T) {
	e := openSources(t, noEnv, spec(t, "v1", "v1"), spec(t, "v2", "v2"))
	key := func(h Hit) string { return h.Source + "/" + h.PartID + "/" + h.Kind }
	for _, q := range []string{"e", "the", `\bdef\b`} {
		m := query.MatchLiteral
		if strings.Contains(q, `\`) {
			m = query.MatchRegex
		}
		whole := matchSearch(t, e, m, q, func(p *SearchParams) { p.Limit = MaxSearchLimit })
		if !whole.Coverage.Complete || len(whole.Hits) < 5 {
			t.Fatalf("%q: unbudgeted scan %d hits, coverage %+v", q, len(whole.Hits), whole.Coverage)
		}
		var want []string
		for _, h := range whole.Hits {
			want = append(want, key(h))
		}
		for _, budget := range []struct {
			limit int
			bytes int64
		}{{1, 0}, {3, 0}, {MaxSearchLimit, 1}, {2, 700}} {
			var got []string
			cont := ""
			var parts int
			for page := 0; ; page++ {
				if page > 5000 {
					t.Fatalf("%q %+v: no end", q, budget)
				}
				res := matchSearch(t, e, m, q, func(p *SearchParams) {
					p.Limit, p.ScanBytes, p.Continue = budget.limit, budget.bytes, cont
				})
				for _, h := range res.Hits {
					got = append(got, key(h))
				}
				parts += res.Coverage.Parts
				if res.Continue == "" {
					if !res.Coverage.Complete {
						t.Fatalf("%q %+v: no continuation but incomplete", q, budget)
					}
					break
				}
				if res.Coverage.Complete {
					t.Fatalf("%q %+v: a continuation on a complete scan", q, budget)
				}
				cont = res.Continue
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%q %+v: resumed scans found %d hits, one scan %d (first difference: %s)", q, budget, len(got), len(want), firstHitDiff(want, got))
			}
			if parts != whole.Coverage.Parts {
				t.Errorf("%q %+v: resumed scans covered %d parts, one scan %d", q, budget, parts, whole.Coverage.Parts)
			}
		}
	}
}

func firstHitDiff(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return "#" + strconv.Itoa(i) + " want " + x + " got " + y
		}
	}
	return ""
}

// A time budget stops a scan too, with a continuation and coverage that
// says it is incomplete.
func TestMatchTimeBudget(t *testing.T) {
	e := openFixture(t, "v1")
	res := matchSearch(t, e, query.MatchLiteral, "zzzz-nothing-zzzz", func(p *SearchParams) { p.ScanTime = time.Nanosecond })
	if res.Coverage == nil || res.Coverage.Complete || res.Continue == "" {
		t.Fatalf("a 1 ns budget: coverage %+v continue %q", res.Coverage, res.Continue)
	}
	// The same continuation with another query is refused.
	_, err := e.Search(context.Background(), SearchParams{Query: "other", Match: query.MatchLiteral, Continue: res.Continue})
	if !errors.Is(err, ErrBadCursor) {
		t.Errorf("a continuation with another query: %v", err)
	}
}

// Bad patterns are refused before any work, with a hint.
func TestMatchRefusesBadPatterns(t *testing.T) {
	for q, want := range map[string]string{`(`: "RE2", `a*`: "empty string", `^`: "empty string", ` `: "needs a query"} {
		m := query.MatchRegex
		if q == " " {
			m = query.MatchLiteral
		}
		err := CheckMatch(m, q)
		if !errors.Is(err, ErrBadPattern) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", q, err, want)
		}
	}
}

// Every filter applies to the scan: each hit is in scope, and the
// exclusions leave out what they name.
func TestMatchFilters(t *testing.T) {
	e := openFixture(t, "v1")
	all := matchSearch(t, e, query.MatchLiteral, "invoice", func(p *SearchParams) { p.Limit = MaxSearchLimit })
	if len(all.Hits) < 10 {
		t.Fatalf("only %d hits for invoice", len(all.Hits))
	}
	check := func(name string, mod func(*SearchParams), ok func(Hit) bool) {
		t.Helper()
		res := matchSearch(t, e, query.MatchLiteral, "invoice", func(p *SearchParams) { p.Limit = MaxSearchLimit }, mod)
		if len(res.Hits) == 0 || len(res.Hits) >= len(all.Hits) {
			t.Errorf("%s: %d hits of %d", name, len(res.Hits), len(all.Hits))
		}
		for _, h := range res.Hits {
			if !ok(h) {
				t.Errorf("%s: hit out of scope %+v", name, h)
			}
		}
	}
	check("tool bash", func(p *SearchParams) { p.Filter.Tools = []string{"bash"} }, func(h Hit) bool { return h.Tool == "bash" })
	check("kind output", func(p *SearchParams) { p.Filter.Kinds = []model.Kind{model.KindOutput} }, func(h Hit) bool { return h.Kind == "output" })
	check("role user", func(p *SearchParams) { p.Filter.Roles = []query.Role{query.RoleUser} }, func(h Hit) bool { return h.Role == "user" })
	check("session L1", func(p *SearchParams) { p.Filter.Session = "ses_dd7574300ffeDSAKd7MCEMAuWS" }, func(h Hit) bool { return h.SessionID == "ses_dd7574300ffeDSAKd7MCEMAuWS" })
	check("exclude L1", func(p *SearchParams) { p.Filter.ExcludeSession = "ses_dd7574300ffeDSAKd7MCEMAuWS" }, func(h Hit) bool { return h.SessionID != "ses_dd7574300ffeDSAKd7MCEMAuWS" })
	// Snippets are redacted and valid UTF-8.
	for _, h := range all.Hits {
		if !utf8.ValidString(h.Snippet) {
			t.Errorf("snippet %q", h.Snippet)
		}
	}
}
