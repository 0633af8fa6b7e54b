package engine

import (
	"context"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/rank"
	"github.com/recallhq/recall/engine/render"
)

// emit groups, cuts and renders hits.
func (e *Engine) emit(ctx context.Context, p SearchParams, cands []index.Candidate, items []rank.Item, terms []rank.Term, needles []string, explain func(int) *Explain, res *SearchResult) error {
	var order []int
	if p.Group == query.GroupNone {
		order = make([]int, len(items))
		for i := range order {
			order[i] = i
		}
		rank.ByScore(order, items)
	} else {
		for _, fam := range rank.Families(items, terms) {
			n := min(len(fam), p.PerSession)
			order = append(order, fam[:n]...)
		}
	}
	return e.render(ctx, p, cands, items, order, needles, explain, res)
}

// render cuts order to the limit and renders hits with snippets.
func (e *Engine) render(ctx context.Context, p SearchParams, cands []index.Candidate, items []rank.Item, order []int, needles []string, explain func(int) *Explain, res *SearchResult) error {
	if len(order) > p.Limit {
		order = order[:p.Limit]
	}
	var rids []int64
	for _, i := range order {
		if items[i].Text == "" {
			rids = append(rids, cands[i].DocRID)
		}
	}
	texts, err := e.ix.DocText(ctx, rids)
	if err != nil {
		return err
	}
	titles, err := e.titles(ctx, cands, order)
	if err != nil {
		return err
	}
	for _, i := range order {
		c := cands[i]
		text := items[i].Text
		if text == "" {
			text = texts[c.DocRID]
		}
		snip, hl := snippet(e.show(text), needles)
		h := Hit{
			Cursor:    e.encodeCursor(Cursor{SessionID: c.SessionID, MessageID: c.MessageID, PartID: c.PartID}),
			SessionID: c.SessionID, MessageID: c.MessageID, PartID: c.PartID,
			Title: e.show(titles[c.SessionID]), Directory: c.Directory, Role: c.Role, Kind: c.Kind, Tool: c.Tool,
			Time: render.Time(c.Time), Score: round3(items[i].Score), Snippet: snip, Highlights: hl,
		}
		if h.Highlights == nil {
			h.Highlights = [][2]int{}
		}
		if explain != nil {
			h.Explain = explain(i)
		}
		res.Hits = append(res.Hits, h)
	}
	return nil
}

// titles reads the titles of the sessions the hits in order name, in one
// query.
func (e *Engine) titles(ctx context.Context, cands []index.Candidate, order []int) (map[string]string, error) {
	ids := make([]string, 0, len(order))
	seen := make(map[string]bool, len(order))
	for _, i := range order {
		if id := cands[i].SessionID; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return e.ix.Titles(ctx, ids)
}
