package engine

import (
	"context"
	"strings"
	"unicode/utf8"

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
func (e *Engine) emit(ctx context.Context, p SearchParams, cands []cand, items []rank.Item, terms []rank.Term, needles []needle, explain func(int) *Explain, res *SearchResult) error {
	mergeForkCopies(cands, items)
	var order []int
	pair := map[int]int{} // a shown document -> the other document of its part
	if p.Group == query.GroupNone {
		order = make([]int, len(items))
		for i := range order {
			order[i] = i
		}
		rank.ByScore(order, items)
	} else {
		for _, fam := range rank.Families(items, terms) {
			order = append(order, pickSlots(cands, items, fam, p.PerSession, pair)...)
		}
	}
	return e.render(ctx, p, cands, items, order, pair, needles, explain, res)
}

// copyKey identifies a document by what it says and when: a fork copies
// its parent's messages with new ids but the same times and texts.
type copyKey struct {
	kind, tool, text string
	time             int64
}

// mergeForkCopies moves documents a fork copied from its parent into the
// family that first held them (the smallest message id: OpenCode's ids
// grow with time, and a copy is made after its original), so a fork shows
// as one family of its own turns, not a duplicate of its parent's.
func mergeForkCopies(cands []cand, items []rank.Item) {
	first := map[copyKey]int{}
	for i := range items {
		if items[i].Text == "" || cands[i].MessageID == "" {
			continue
		}
		k := copyKey{items[i].Kind, items[i].Tool, items[i].Text, items[i].Time}
		j, ok := first[k]
		if !ok {
			first[k] = i
			continue
		}
		if cands[i].sh == cands[j].sh && cands[i].MessageID < cands[j].MessageID {
			first[k] = i
		}
	}
	for i := range items {
		if items[i].Text == "" || cands[i].MessageID == "" {
			continue
		}
		j := first[copyKey{items[i].Kind, items[i].Tool, items[i].Text, items[i].Time}]
		if j != i && cands[i].sh == cands[j].sh {
			items[i].Root = items[j].Root
		}
	}
}

// maxRepeatCheck bounds the texts repeats compares (a few microseconds
// each): subagent prompts and answers are far shorter, and two long texts
// that hold one another are rare enough to show.
const maxRepeatCheck = 16 << 10

// repeats reports a document whose text a shown one holds or that holds
// a shown one's: a subagent's prompt is its task call's input and its
// answer the task's output, a file read twice reads the same.
func repeats(items []rank.Item, shown []int, pair map[int]int, i int) bool {
	t := strings.TrimSpace(items[i].Text)
	if t == "" || len(t) > maxRepeatCheck {
		return false
	}
	holds := func(j int) bool {
		o := strings.TrimSpace(items[j].Text)
		return o != "" && len(o) <= maxRepeatCheck && (strings.Contains(o, t) || strings.Contains(t, o))
	}
	for _, j := range shown {
		if holds(j) {
			return true
		}
		if p, ok := pair[j]; ok && holds(p) {
			return true
		}
	}
	return false
}

// pickSlots chooses the documents one family shows, best first, up to n:
// each from a different part (a tool call and its output are one slot, the
// call shown with its output: pair records which), no copy of a document
// already shown, and the session's title only when nothing else matched
// (the title heads every hit already).
func pickSlots(cands []cand, items []rank.Item, fam []int, n int, pair map[int]int) []int {
	var out []int
	part := map[string]int{}
	seen := map[copyKey]bool{}
	hasBody := false
	for _, i := range fam {
		if items[i].Kind != "title" {
			hasBody = true
			break
		}
	}
	for _, i := range fam {
		full := len(out) == n // past the slots: only partners of shown calls
		if full && items[i].Part == "" {
			continue
		}
		if hasBody && items[i].Kind == "title" {
			continue
		}
		if items[i].Text != "" {
			k := copyKey{items[i].Kind, items[i].Tool, items[i].Text, items[i].Time}
			if seen[k] || (!full && repeats(items, out, pair, i)) {
				continue
			}
			seen[k] = true
		}
		if id := cands[i].PartID; id != "" {
			pk := cands[i].sh.name + "\x00" + id
			if j, ok := part[pk]; ok {
				if _, taken := pair[j]; !taken {
					pair[j] = i
				}
				continue
			}
			if full {
				continue
			}
			part[pk] = i
		}
		if full {
			continue
		}
		out = append(out, i)
	}
	return out
}

// render cuts order to the limit and renders hits with snippets; texts and
// titles come from each hit's shard, one query per shard for each.
func (e *Engine) render(ctx context.Context, p SearchParams, cands []cand, items []rank.Item, order []int, pair map[int]int, needles []needle, explain func(int) *Explain, res *SearchResult) error {
	if len(order) > p.Limit {
		order = order[:p.Limit]
	}
	textOf := func(i int) string { return items[i].Text }
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
		snip, hl := snippet(e.show(text), needles, isProse(c.Kind, c.Role))
		if j, ok := pair[i]; ok && textOf(j) != "" {
			// A call and its output share one snippet's length, the output
			// (where answers are) the larger share.
			in, out := i, j
			if items[i].Kind == "output" {
				in, out = j, i
			}
			o := snippetOf(e.show(textOf(out)), needles, snippetMax-pairInput)
			size := max(pairInput, snippetMax-utf8.RuneCountInString(o.text))
			snip, hl = pairSnippets(snippetOf(e.show(textOf(in)), needles, size), o)
		}
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

// isProse: an assistant's answer, whose first sentence a snippet leads with.
func isProse(kind, role string) bool {
	return role == "assistant" && (kind == "text" || kind == "summary")
}

func snippetOf(text string, needles []needle, size int) snip {
	s, hl := snippetSized(text, needles, false, size)
	return snip{s, hl}
}

type snip struct {
	text string
	hl   [][2]int
}

// pairSeparator sits between a tool call's input and its output in one
// snippet.
const pairSeparator = " ⇒ "

// pairInput is the share of a paired snippet the call's input gets (a
// command line, a path and a pattern fit).
const pairInput = 150

// pairSnippets joins the snippets of a tool call's input and output.
func pairSnippets(first, second snip) (string, [][2]int) {
	off := utf8.RuneCountInString(first.text) + utf8.RuneCountInString(pairSeparator)
	out := append([][2]int{}, first.hl...)
	for _, r := range second.hl {
		out = append(out, [2]int{r[0] + off, r[1] + off})
	}
	return first.text + pairSeparator + second.text, out
}
