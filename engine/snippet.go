package engine

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/rank"
)

// Snippet sizes, in characters. One window of 220 characters anchored on
// the densest cluster of matches missed the answer in a quarter of the
// public queries whose session was right (needle@5 0.759): the cluster was
// often of common words, and the answer sat a few lines further on. Up to
// three shorter windows, each anchored on a query term not shown yet (the
// rarest first), raised needle@5 while keeping the median snippet near one
// window's length (docs/ranking.md, "Snippets").
const (
	// snippetWindow is one window's length around its anchor.
	snippetWindow = 150
	// snippetMax bounds the total of a snippet's windows.
	snippetMax = 300
	// snippetWindows is the most windows one snippet joins.
	snippetWindows = 3
)

// codeSpanWeight scales a query word's match inside a `code span` of an
// assistant's prose: there it names what was done (`mask_email`, a flag, a
// file), where the answer is. 1.5 makes one such match outweigh the same
// word used in passing without outweighing a second term; it is the only
// value tried (public eval: p024's needle found, none lost, 6 goldens'
// windows moved to identifiers).
const codeSpanWeight = 1.5

// windowSep joins two windows of one text.
const windowSep = " … "

// needle is something a snippet looks for: a stem, a compound as typed, a
// phrase. Needles of one query term share a group, so a window is worth
// a term once, by its best needle.
type needle struct {
	text   string // lower-case
	group  int
	weight float64
}

type snipHit struct {
	start, end int
	group      int
	weight     float64
}

// snippet cuts up to snippetWindows windows of text around the needles,
// each anchored on the rarest query term no earlier window shows (the
// verbatim phrase counts as the rarest of all), and returns them joined by
// windowSep with highlight ranges in characters (Unicode code points)
// relative to the snippet.
//
// With lead set (an assistant's prose) the text's first sentence comes
// first, up to snippetLead characters: an answer states its conclusion
// there ("Recommendation: don't migrate.", "I'd use DB_MAX_OPEN_CONNS=14"),
// often in words the question did not use.
func snippet(text string, needles []needle, lead bool) (string, [][2]int) {
	return snippetSized(text, needles, lead, snippetMax)
}

// snippetSized is snippet within size characters (a text that short is
// shown whole).
func snippetSized(text string, needles []needle, lead bool, size int) (string, [][2]int) {
	lower := rank.ASCIILower(text)
	var code [][2]int
	if lead {
		code = codeSpans(text)
	}
	var hits []snipHit
	for _, n := range needles {
		for _, i := range rank.FindWord(text, lower, n.text, 50) {
			end := i + len(n.text)
			// Extend to the end of the word so "connect" highlights "connection".
			for end < len(text) && isWordByte(text[end]) {
				end++
			}
			w := n.weight
			if inSpan(code, i) {
				w *= codeSpanWeight
			}
			hits = append(hits, snipHit{i, end, n.group, w})
		}
	}
	sort.Slice(hits, func(a, b int) bool { return hits[a].start < hits[b].start })
	return snippetHits(text, hits, lead, size)
}

// snippetAt is the snippet of text around the byte ranges at (a literal
// or regex scan's matches), each its own term of equal weight.
func snippetAt(text string, at [][2]int) (string, [][2]int) {
	hits := make([]snipHit, len(at))
	for i, a := range at {
		hits[i] = snipHit{start: a[0], end: a[1], group: i, weight: 1}
	}
	sort.Slice(hits, func(a, b int) bool { return hits[a].start < hits[b].start })
	return snippetHits(text, hits, false, snippetMax)
}

// snippetHits cuts the windows of text that show the most of hits (sorted
// by start) within size characters.
func snippetHits(text string, hits []snipHit, lead bool, size int) (string, [][2]int) {
	if utf8.RuneCountInString(text) <= size {
		return render1(text, [][2]int{{0, len(text)}}, hits)
	}
	if len(hits) == 0 {
		return flatten(cutRunes(text, 0, min(size, snippetWindow))), nil
	}
	var wins [][2]int
	shown := map[int]float64{} // group -> best weight shown
	total := 0
	if lead {
		for _, w := range [][2]int{leadWindow(text, 0, snippetLead), leadWindow(text, conclusionAt(text), snippetConclusion)} {
			if w[1] == 0 || overlaps(wins, w) || total+w[1]-w[0] > size {
				continue
			}
			wins = append(wins, w)
			total += w[1] - w[0]
			for _, o := range hits {
				if o.start >= w[0] && o.end <= w[1] && o.weight > shown[o.group] {
					shown[o.group] = o.weight
				}
			}
		}
	}
	got := map[int]float64{}
	for len(wins) < snippetWindows {
		best, bestGain := [2]int{}, 0.0
		for _, h := range hits {
			w := windowAround(text, h.start, h.end)
			if overlaps(wins, w) {
				continue
			}
			// A group counts once, by its best needle in the window,
			// summed in hit order so equal windows always tie the same way.
			// Hits are sorted by start: the window's are a run of them.
			gain := 0.0
			clear(got)
			n := 0
			first := sort.Search(len(hits), func(k int) bool { return hits[k].start >= w[0] })
			for _, o := range hits[first:] {
				if o.start >= w[1] {
					break
				}
				if o.end <= w[1] {
					n++
					if prev := max(got[o.group], shown[o.group]); o.weight > prev {
						gain += o.weight - prev
						got[o.group] = o.weight
					}
				}
			}
			// Among windows that show the same terms, the one with more
			// matches, then the earlier one.
			gain += 0.001 * float64(n)
			if gain > bestGain {
				best, bestGain = w, gain
			}
		}
		// A later window must show a term the earlier ones do not.
		if bestGain < 0.01 || (total > 0 && total+best[1]-best[0] > size) {
			break
		}
		wins = append(wins, best)
		total += best[1] - best[0]
		for _, o := range hits {
			if o.start >= best[0] && o.end <= best[1] && o.weight > shown[o.group] {
				shown[o.group] = o.weight
			}
		}
	}
	sort.Slice(wins, func(a, b int) bool { return wins[a][0] < wins[b][0] })
	wins = mergeWindows(text, wins)
	grow(text, wins, size-total)
	return render1(text, mergeWindows(text, wins), hits)
}

// snippetLead bounds the lead window of an assistant's prose, and
// snippetConclusion the window of its labelled conclusion, which names
// what was chosen after saying what it is for.
const (
	snippetLead       = 110
	snippetConclusion = 160
)

// leadWindow is the sentence or line that starts at from, at most n bytes
// cut at a word end ({0,0} when there is none).
func leadWindow(text string, from, n int) [2]int {
	if from < 0 || from >= len(text) {
		return [2]int{}
	}
	end := min(len(text), from+n)
	for i := from; i < end; i++ {
		// A sentence ends at a line end, or at ". " before a capital
		// ("e.g. `sony/gobreaker`" goes on).
		if text[i] == '\n' || (text[i] == '.' && i+2 < len(text) && text[i+1] == ' ' && text[i+2] >= 'A' && text[i+2] <= 'Z') {
			end = i + 1
			break
		}
	}
	if end < len(text) && end == from+n {
		for end > from && isWordByte(text[end-1]) {
			end--
		}
	}
	for end > from && end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	if strings.TrimSpace(text[from:end]) == "" {
		return [2]int{}
	}
	return [2]int{from, end}
}

// conclusionLabels open the line where an answer states its conclusion
// ("Recommendation: keep the backoff change now, and add ... gobreaker").
var conclusionLabels = []string{"recommendation", "conclusion", "decision", "root cause", "answer", "tl;dr", "in short", "verdict"}

// conclusionAt is the start of the first line that opens with a
// conclusion label (after markdown emphasis), or -1.
func conclusionAt(text string) int {
	lower := rank.ASCIILower(text)
	for at := 0; at < len(text); {
		line := strings.TrimLeft(lower[at:], "*_#> -")
		for _, l := range conclusionLabels {
			if strings.HasPrefix(line, l) && len(line) > len(l) && !isWordByte(line[len(l)]) {
				return at
			}
		}
		nl := strings.IndexByte(text[at:], '\n')
		if nl < 0 {
			break
		}
		at += nl + 1
	}
	return -1
}

// windowAround is the byte span of a window holding the match [start,end):
// it opens a quarter window before the match, backs up to a word start,
// and closes on a rune boundary past the match's end.
func windowAround(text string, start, end int) [2]int {
	s := max(0, start-snippetWindow/4)
	for s > 0 && s > start-snippetWindow/2 && isWordByte(text[s-1]) {
		s--
	}
	for s > 0 && !utf8.RuneStart(text[s]) {
		s--
	}
	e := max(s+snippetWindow, end)
	if e > len(text) {
		e = len(text)
	}
	for e < len(text) && !utf8.RuneStart(text[e]) {
		e++
	}
	return [2]int{s, e}
}

// grow spends what is left of the snippet's length on its windows, each
// the same share, forward first: the answer to a question usually follows
// the words it shares with it ("because plain exponential backoff still
// sends retries in synchronized waves"); a window at the end of the text
// grows backward.
func grow(text string, wins [][2]int, left int) {
	if left <= 0 || len(wins) == 0 {
		return
	}
	share := left / len(wins)
	for i := range wins {
		limit := len(text)
		if i+1 < len(wins) {
			limit = wins[i+1][0]
		}
		e := min(limit, wins[i][1]+share)
		for e < len(text) && !utf8.RuneStart(text[e]) {
			e++
		}
		back := share - (e - wins[i][1])
		wins[i][1] = e
		if back > 0 {
			floor := 0
			if i > 0 {
				floor = wins[i-1][1]
			}
			s := max(floor, wins[i][0]-back)
			for s > floor && !utf8.RuneStart(text[s]) {
				s--
			}
			wins[i][0] = s
		}
	}
}

func overlaps(wins [][2]int, w [2]int) bool {
	for _, x := range wins {
		if w[0] < x[1] && x[0] < w[1] {
			return true
		}
	}
	return false
}

// mergeWindows joins windows (sorted) that touch or nearly touch: a gap
// shorter than its separator is shown rather than elided.
func mergeWindows(text string, wins [][2]int) [][2]int {
	out := wins[:0]
	for _, w := range wins {
		if n := len(out); n > 0 && w[0]-out[n-1][1] <= 2*len(windowSep) {
			out[n-1][1] = max(out[n-1][1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

// render1 renders windows of text (byte spans, sorted, disjoint) joined by
// windowSep, with the highlights of the hits inside them.
func render1(text string, wins [][2]int, hits []snipHit) (string, [][2]int) {
	var b strings.Builder
	var ranges [][2]int
	if wins[0][0] > 0 {
		b.WriteString("…")
	}
	for i, w := range wins {
		if i > 0 {
			b.WriteString(windowSep)
		}
		base := utf8.RuneCountInString(b.String())
		window := text[w[0]:w[1]]
		for _, h := range hits {
			if h.start < w[0] || h.end > w[1] {
				continue
			}
			r := [2]int{base + runeOffset(window, h.start-w[0]), 0}
			r[1] = r[0] + utf8.RuneCountInString(text[h.start:h.end])
			ranges = append(ranges, r)
		}
		// Whitespace is collapsed only where it cannot shift the ranges: the
		// snippet keeps the text's characters one for one, newlines as spaces.
		b.WriteString(flatten(window))
	}
	if wins[len(wins)-1][1] < len(text) {
		b.WriteString("…")
	}
	sortRanges(ranges)
	ranges = mergeRanges(ranges)
	return b.String(), ranges
}

func isWordByte(b byte) bool {
	return b == '_' || (b >= '0' && b <= '9') || (b|0x20 >= 'a' && b|0x20 <= 'z') || b >= 0x80
}

func runeOffset(s string, byteOff int) int { return utf8.RuneCountInString(s[:byteOff]) }

func cutRunes(s string, from, n int) string {
	i := 0
	for idx := range s {
		if i == from+n {
			return s[:idx] + "…"
		}
		i++
	}
	return s
}

// flatten turns newlines and tabs into spaces, one for one.
func flatten(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// mergeRanges joins overlapping or touching ranges (sorted by start), so a
// client never paints one character twice.
func mergeRanges(r [][2]int) [][2]int {
	out := r[:0]
	for _, x := range r {
		if n := len(out); n > 0 && x[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out
}

func sortRanges(r [][2]int) {
	sort.Slice(r, func(i, j int) bool { return r[i][0] < r[j][0] })
}

// codeSpans are the byte spans inside `code spans` of text, in order (a
// backtick left open at a line end closes there).
func codeSpans(text string) [][2]int {
	var out [][2]int
	open := -1
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '`':
			if open < 0 {
				open = i + 1
			} else {
				out = append(out, [2]int{open, i})
				open = -1
			}
		case '\n':
			if open >= 0 {
				out = append(out, [2]int{open, i})
				open = -1
			}
		}
	}
	if open >= 0 {
		out = append(out, [2]int{open, len(text)})
	}
	return out
}

// inSpan: byte i is inside one of spans (sorted, disjoint).
func inSpan(spans [][2]int, i int) bool {
	k := sort.Search(len(spans), func(k int) bool { return spans[k][1] > i })
	return k < len(spans) && spans[k][0] <= i
}
