package engine

import (
	"context"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/rank"
	"github.com/recallhq/recall/engine/render"
)

// cand is a candidate document and the shard it came from (its DocRID is
// that shard's).
type cand struct {
	sh *shard
	index.Candidate
}

// emit groups, cuts and renders hits.
func (e *Engine) emit(ctx context.Context, p SearchParams, cands []cand, items []rank.Item, terms []rank.Term, needles []string, explain func(int) *Explain, res *SearchResult) error {
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

// render cuts order to the limit and renders hits with snippets; texts and
// titles come from each hit's shard, one query per shard for each.
func (e *Engine) render(ctx context.Context, p SearchParams, cands []cand, items []rank.Item, order []int, needles []string, explain func(int) *Explain, res *SearchResult) error {
	if len(order) > p.Limit {
		order = order[:p.Limit]
	}
	rids := map[*shard][]int64{}
	ids := map[*shard][]string{}
	seen := map[*shard]map[string]bool{}
	var shs []*shard
	for _, i := range order {
		c := cands[i]
		if seen[c.sh] == nil {
			seen[c.sh] = map[string]bool{}
			shs = append(shs, c.sh)
		}
		if items[i].Text == "" {
			rids[c.sh] = append(rids[c.sh], c.DocRID)
		}
		if !seen[c.sh][c.SessionID] {
			seen[c.sh][c.SessionID] = true
			ids[c.sh] = append(ids[c.sh], c.SessionID)
		}
	}
	texts := make([]map[int64]string, len(shs))
	titles := make([]map[string]string, len(shs))
	at := make(map[*shard]int, len(shs))
	for i, sh := range shs {
		at[sh] = i
	}
	err := eachShard(shs, func(i int, sh *shard) error {
		var err error
		if texts[i], err = sh.ix.DocText(ctx, rids[sh]); err != nil {
			return err
		}
		titles[i], err = sh.ix.Titles(ctx, ids[sh])
		return err
	})
	if err != nil {
		return err
	}
	for _, i := range order {
		c := cands[i]
		text := items[i].Text
		if text == "" {
			text = texts[at[c.sh]][c.DocRID]
		}
		snip, hl := snippet(e.show(text), needles)
		h := Hit{
			Cursor:    e.encodeCursor(Cursor{Source: c.sh.name, SessionID: c.SessionID, MessageID: c.MessageID, PartID: c.PartID}),
			Source:    c.sh.name,
			SessionID: c.SessionID, MessageID: c.MessageID, PartID: c.PartID,
			Title: e.show(titles[at[c.sh]][c.SessionID]), Directory: c.Directory, Role: c.Role, Kind: c.Kind, Tool: c.Tool,
			Time: render.Time(c.Time), Score: round3(items[i].Score), Snippet: snip, Highlights: hl,
		}
		h.URI = TranscriptURI(h.Source, h.SessionID, h.Title, h.MessageID)
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
