package engine

import (
	"context"
	"slices"
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
		fams := rank.Families(items, terms)
		slots := make([][]int, len(fams))
		for k, fam := range fams {
			slots[k] = pickSlots(cands, items, fam, p.PerSession, pair)
		}
		if terms != nil && p.PerSession > 1 {
			n := len(items)
			var err error
			if cands, items, err = answerSlots(ctx, p, cands, items, fams, slots, pair); err != nil {
				return err
			}
			if inner := explain; inner != nil && len(items) > n {
				// An answer read from the index was not a candidate: it has
				// no BM25 or matched words to explain.
				explain = func(i int) *Explain {
					if i >= n {
						return answerExplain(p)
					}
					return inner(i)
				}
			}
		}
		for _, s := range slots {
			order = append(order, s...)
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

// answerSlots gives each family on the page that matched in more than one
// part and whose slots hold nothing the assistant said in prose its answer,
// in the second slot (after the best match, the last slot making room):
// the family's best-scoring assistant prose, or else its session's final
// answer, read from the index. The answer to a question often shares few
// words with it ("make the dashboard
// stop hammering the API" is answered by "usePolling now backs off while
// the API is failing"), so the matched parts are the prompt, the reasoning
// and the tool calls; on the public eval this slot found 3 of the 4
// needles the matched parts missed (docs/ranking.md, "Snippets").
func answerSlots(ctx context.Context, p SearchParams, cands []cand, items []rank.Item, fams, slots [][]int, pair map[int]int) ([]cand, []rank.Item, error) {
	type want struct {
		k, si int // the family, its shard's place in shs
		root  string
	}
	var wants []want
	roots := map[*shard][]string{}
	var shs []*shard
	shown := 0
	for k, fam := range fams {
		if shown >= p.Limit {
			break
		}
		shown += len(slots[k])
		// A family matched in one part only is an exact hit (an
		// error code, a token): it shows that match alone, and a search's
		// hits stay its matches. Matched in several (its title counts), it
		// is a topic, whose answer is what the searcher is after.
		if !severalParts(items, fam) || len(slots[k]) == 0 || slotsHoldProse(cands, slots[k], pair) {
			continue
		}
		if i := bestProse(cands, items, fam, slots[k], pair); i >= 0 {
			slots[k] = answerSecond(items, slots[k], i, p.PerSession)
			continue
		}
		first := slots[k][0]
		_, root, _ := strings.Cut(items[first].Root, "\x00")
		sh := cands[first].sh
		si := slices.Index(shs, sh)
		if si < 0 {
			si, shs = len(shs), append(shs, sh)
		}
		roots[sh] = append(roots[sh], root)
		wants = append(wants, want{k, si, root})
	}
	if len(wants) == 0 {
		return cands, items, nil
	}
	got := make([]map[string]index.Candidate, len(shs))
	if err := eachShard(shs, func(i int, sh *shard) error {
		var err error
		got[i], err = sh.ix.FinalAnswers(ctx, roots[sh], p.Filter)
		return sh.wrap(err)
	}); err != nil {
		return cands, items, err
	}
	for _, w := range wants {
		sh := shs[w.si]
		c, ok := got[w.si][w.root]
		if !ok || candidateOf(cands, fams[w.k], sh, c.DocRID) {
			continue // a candidate bestProse passed over repeats a shown slot
		}
		first := slots[w.k][0]
		cands = append(cands, cand{sh: sh, Candidate: c})
		items = append(items, rank.Item{Root: items[first].Root, Kind: c.Kind, Tool: c.Tool, Role: c.Role, Synthetic: c.Synthetic,
			Time: c.Time, Part: partKey(sh, c.PartID)})
		slots[w.k] = answerSecond(items, slots[w.k], len(items)-1, p.PerSession)
	}
	return cands, items, nil
}

// candidateOf: the document is one of the family's candidates.
func candidateOf(cands []cand, fam []int, sh *shard, rid int64) bool {
	for _, i := range fam {
		if cands[i].sh == sh && cands[i].DocRID == rid {
			return true
		}
	}
	return false
}

// severalParts: the family matched in more than one part (a tool call's
// input and output are one; the title is one of its own).
func severalParts(items []rank.Item, fam []int) bool {
	first, title := "", false
	for _, i := range fam {
		p := items[i].Part
		switch {
		case p == "":
			if title {
				return true
			}
			title = true
		case first == "":
			first = p
		case p != first:
			return true
		}
		if title && first != "" {
			return true
		}
	}
	return false
}

// answerExplain explains an answer slot read from the index (nil when
// no explanation was asked for).
func answerExplain(p SearchParams) *Explain {
	if !p.Explain {
		return nil
	}
	return &Explain{Answer: true}
}

// slotsHoldProse: one of a family's slots (or a call's partner) is an
// assistant's prose.
func slotsHoldProse(cands []cand, slots []int, pair map[int]int) bool {
	for _, i := range slots {
		if isProse(cands[i].Kind, cands[i].Role) {
			return true
		}
		if j, ok := pair[i]; ok && isProse(cands[j].Kind, cands[j].Role) {
			return true
		}
	}
	return false
}

// bestProse is the family's best-scoring assistant prose that no slot
// shows or holds (-1 when there is none): fam is sorted best first.
func bestProse(cands []cand, items []rank.Item, fam, slots []int, pair map[int]int) int {
	for _, i := range fam {
		if isProse(cands[i].Kind, cands[i].Role) && !repeats(items, slots, pair, i) {
			return i
		}
	}
	return -1
}

// answerSecond puts the answer i in the second of at most n slots; it
// takes the score of the slot it precedes, so scores still fall down a
// family's hits.
func answerSecond(items []rank.Item, slots []int, i, n int) []int {
	if len(slots) > 1 {
		items[i].Score = items[slots[1]].Score
	} else {
		items[i].Score = items[slots[0]].Score
	}
	out := append([]int{slots[0], i}, slots[1:]...)
	return out[:min(len(out), n)]
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
