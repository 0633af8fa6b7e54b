package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/render"
)

// maxSuggestCount bounds each "how many hits without this filter" count:
// a bounded FTS count costs about a millisecond per thousand matches, and
// "1000+" says enough.
const maxSuggestCount = 1000

// suggest fills res.Suggestions for a search that found nothing: near
// terms from the index vocabulary, each filter that removed every hit
// (with how many documents match without it), a literal match for
// code-like queries, and what was searched.
func (e *Engine) suggest(ctx context.Context, shs []*shard, p SearchParams, q query.Query, res *SearchResult) {
	if len(res.Hits) > 0 || strings.TrimSpace(p.Query) == "" || res.Mode == query.ModeRecent {
		return
	}
	var out []Suggestion
	seen := map[string]bool{}
	for _, t := range q.Searchable() {
		for _, sh := range shs {
			vocab, err := sh.vocabulary(ctx)
			if err != nil || vocab.v.DF(t.Key()) > 0 {
				continue
			}
			for _, c := range vocab.v.Corrections(t.Key()) {
				if seen[t.Raw+"\x00"+c] {
					continue
				}
				seen[t.Raw+"\x00"+c] = true
				out = append(out, Suggestion{Kind: "term", From: t.Raw, To: c,
					Text: fmt.Sprintf("%q is not in the index; try %q", t.Raw, c)})
			}
		}
	}
	if p.Match == "" || p.Match == query.MatchRanked {
		out = append(out, e.filterSuggestions(ctx, p, q)...)
		switch {
		case strings.ContainsAny(p.Query, `\*+?[]{}|^$`) && CheckMatch(query.MatchRegex, p.Query) == nil:
			// It reads as a pattern (ERR_QUOTA_\d+).
			out = append(out, Suggestion{Kind: "match", Match: query.MatchRegex,
				Text: "match regex: scan the full text, tool outputs whole, for the pattern (recall search --match regex)"})
		case q.IsCode() || strings.ContainsAny(p.Query, `/\.:_-()[]{}<>=#$@'"`):
			out = append(out, Suggestion{Kind: "match", Match: query.MatchLiteral,
				Text: "match literal: scan the full text, tool outputs whole, for the exact characters (recall search --match literal)"})
		}
	}
	cov := Suggestion{Kind: "coverage"}
	if res.Coverage != nil {
		cov.Sessions, cov.Parts = res.Coverage.Sessions, res.Coverage.Parts
		state := "all of them in scope"
		if !res.Coverage.Complete {
			state = "stopped by a budget: continue to scan the rest"
		}
		cov.Text = fmt.Sprintf("scanned %s and %s (%s)", render.Count(cov.Sessions, "session"), render.Count(cov.Parts, "part"), state)
	} else {
		for _, sh := range shs {
			if c, err := sh.ix.Counts(ctx); err == nil {
				cov.Sessions += c.Sessions
				cov.Parts += c.Parts
			}
		}
		cov.Text = fmt.Sprintf("searched the index of %s and %s", render.Count(cov.Sessions, "session"), render.Count(cov.Parts, "part"))
	}
	// The query is the user's, but suggestions are an output: a pasted
	// secret is not echoed back (the text never quotes the query whole).
	for i := range out {
		out[i].From, out[i].To, out[i].Text = e.show(out[i].From), e.show(out[i].To), e.show(out[i].Text)
	}
	res.Suggestions = append(out, cov)
}

// filterSuggestions re-counts the query's plain match without each filter
// in turn (counts only, bounded): a filter without which something
// matches is the one that emptied the result.
func (e *Engine) filterSuggestions(ctx context.Context, p SearchParams, q query.Query) []Suggestion {
	f := p.Filter
	type drop struct {
		name, say string
		f         query.Filter
	}
	var drops []drop
	add := func(on bool, name, say string, change func(*query.Filter)) {
		if on {
			g := f
			change(&g)
			drops = append(drops, drop{name, say, g})
		}
	}
	add(f.Directory != "", "directory", "directory "+f.Directory, func(g *query.Filter) { g.Directory = "" })
	add(f.After != 0, "after", "the after bound", func(g *query.Filter) { g.After = 0 })
	add(f.Before != 0, "before", "the before bound", func(g *query.Filter) { g.Before = 0 })
	add(len(f.Roles) > 0, "role", "role "+query.Join(f.Roles), func(g *query.Filter) { g.Roles = nil })
	add(len(f.Kinds) > 0, "kind", "kind "+query.Join(f.Kinds), func(g *query.Filter) { g.Kinds = nil })
	add(len(f.Tools) > 0, "tool", "tool "+strings.Join(f.Tools, ","), func(g *query.Filter) { g.Tools = nil })
	add(f.Session != "", "session", "session "+f.Session, func(g *query.Filter) { g.Session = "" })
	add(f.ExcludeSession != "", "excludeSession", "excludeSession "+f.ExcludeSession, func(g *query.Filter) { g.ExcludeSession, g.ExcludeRoots = "", nil })
	add(f.Author != "", "author", "author "+string(f.Author), func(g *query.Filter) { g.Author = "" })
	add(len(f.Sources) > 0, "source", "source "+strings.Join(f.Sources, ","), func(g *query.Filter) { g.Sources = nil })
	if len(drops) == 0 {
		return nil
	}
	expr := index.MatchExpr(q, nil, nil)
	if expr == "" {
		return nil
	}
	var out []Suggestion
	for _, d := range drops {
		shs, err := e.shardsFor(d.f.Sources)
		if err != nil {
			continue
		}
		n := 0
		for _, sh := range shs {
			c, err := sh.ix.MatchCount(ctx, expr, d.f, maxSuggestCount-n)
			if err != nil {
				break
			}
			if n += c; n >= maxSuggestCount {
				break
			}
		}
		if n == 0 {
			continue
		}
		count := fmt.Sprint(n)
		if n >= maxSuggestCount {
			count = fmt.Sprintf("%d+", maxSuggestCount)
		}
		out = append(out, Suggestion{Kind: "filter", Filter: d.name, Hits: n,
			Text: fmt.Sprintf("without %s: %s %s", d.say, count, plural(n, "match", "matches"))})
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
