package rank

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Term is one query term as ranking sees it.
type Term struct {
	Needles []string // lowercase stems to find in text; any one matches
	Parts   []string // a compound's parts: all must appear (when no needle does)
	Weight  float64  // idf-like weight
	// Exact is an identifier as typed (`retryBackoff`): a document holding
	// that very form ranks above one holding a near form (`retry_backoff`).
	Exact string
}

// Item is one candidate document.
type Item struct {
	Root      string // session family
	Kind      string
	Tool      string
	Role      string
	Synthetic bool
	Time      int64
	BM25      float64 // lower is better (FTS5)
	Vector    float64 // cosine similarity, 0 when absent
	HasVector bool    // the document has a vector (Vector is set)
	Text      string
	Score     float64 // output
	Matched   []bool  // output: per term
	// Part keys the part a document came from ("" for none): a tool
	// call's input and output are two documents of one part.
	Part string
	// Session and Ord place the document in its family: its session and
	// its message's position there (adjacent messages are one exchange).
	Session string
	Ord     int
	cov     float64 // coverage of the query, weighted (Score's)
	prior   float64 // priorOf, once Score has run
}

// Kind priors: how much a match in each kind of document is worth relative
// to prose. Set by the public eval (make eval): tool outputs and attached
// files are long and mention many things in passing, so a match there says
// less about what a session was about than a match in what someone wrote.
var kindPrior = map[string]float64{
	"title": 1.0, "text": 1.0, "reasoning": 0.95, "subtask": 1.0, "summary": 0.8,
	"tool": 0.9, "output": 0.8, "patch": 0.9, "file": 0.7, "other": 0.5,
}

// fileReadPrior scales the output of tools that dump a file's content
// (read, and v2's read): the file mentions everything in it, which says
// little about what the session was about.
const fileReadPrior = 0.75

// syntheticPrior scales text OpenCode inserted itself (file dumps, shell
// notices): it was not written by anyone.
const syntheticPrior = 0.6

// Weights of the document score (tuned on the public eval).
const (
	weightBM25     = 0.35 // normalised FTS5 BM25
	weightCoverage = 0.65 // share of the query's (idf-weighted) terms present
	phraseBonus    = 0.25 // the whole multi-word query appears verbatim
	exactBonus     = 0.15 // an identifier appears as typed (times its weight share)
	familyCoverage = 0.35 // a family covering more query terms across documents
)

// Score scores items in place for terms; phrase is the normalised query
// text for the verbatim bonus ("" for single terms).
func Score(items []Item, terms []Term, phrase string) {
	best := 0.0
	for i := range items {
		if b := -items[i].BM25; b > best {
			best = b
		}
	}
	total := 0.0
	for _, t := range terms {
		total += t.Weight
	}
	var scratch []byte // each item's lowered text, in turn (see lowerInto)
	for i := range items {
		it := &items[i]
		var lower string
		lower, scratch = lowerInto(scratch, it.Text)
		it.Matched = make([]bool, len(terms))
		cov, exact := 0.0, 0.0
		for j, t := range terms {
			if termIn(it.Text, lower, t) {
				it.Matched[j] = true
				cov += t.Weight
				if t.Exact != "" && strings.Contains(it.Text, t.Exact) {
					exact += t.Weight
				}
			}
		}
		if total > 0 {
			exact /= total
		}
		if total > 0 {
			cov /= total
		}
		bm := 0.0
		if best > 0 {
			bm = -it.BM25 / best
		}
		s := weightBM25*bm + weightCoverage*math.Pow(cov, 1.5) + exactBonus*exact
		if phrase != "" && containsCollapsed(lower, phrase) {
			s += phraseBonus
		}
		it.prior = priorOf(it)
		it.Score = s * it.prior
		it.cov = cov
	}
	pairParts(items, terms, total)
}

// priorOf is what a match in the item is worth relative to prose.
func priorOf(it *Item) float64 {
	prior := kindPrior[it.Kind]
	if prior == 0 {
		prior = 0.5
	}
	if it.Synthetic {
		prior *= syntheticPrior
	}
	if it.Kind == "output" && it.Tool == "read" {
		prior *= fileReadPrior
	}
	return prior
}

// pairParts scores a tool call's input and output as the one call they
// are: when the two together cover more of the query than either alone
// (the command names `pg_stat_activity`, its output shows `idle in
// transaction`), each gets the coverage the pair adds.
func pairParts(items []Item, terms []Term, total float64) {
	if total == 0 {
		return
	}
	byPart := map[string][]int{}
	for i := range items {
		if items[i].Part != "" {
			byPart[items[i].Part] = append(byPart[items[i].Part], i)
		}
	}
	for _, idx := range byPart {
		if len(idx) < 2 {
			continue
		}
		union := 0.0
		for j, t := range terms {
			for _, i := range idx {
				if items[i].Matched[j] {
					union += t.Weight
					break
				}
			}
		}
		union /= total
		for _, i := range idx {
			it := &items[i]
			if union > it.cov {
				prior := kindPrior[it.Kind]
				if prior == 0 {
					prior = 0.5
				}
				it.Score += weightCoverage * (math.Pow(union, 1.5) - math.Pow(it.cov, 1.5)) * prior
			}
		}
	}
}

// FamilyWindow is how many messages of one session count as adjacent
// when a family's coverage is measured. OpenCode writes each step of an
// assistant's turn (a tool call, its reasoning) as a message of its own,
// so a question, the work on it and the answer span about 5 to 15
// messages in the public corpus; 12 holds one such exchange, and a
// session that mentions each query word once, an hour apart, no longer
// covers the query the way a short one about it does.
const FamilyWindow = 12

// windowCoverage is the family's coverage of the query (weighted, not yet
// divided by the total weight) in its best window of adjacent messages:
// each term counts by the best kind prior of a document in the window that
// holds it (a file read that mentions every word is worth less than the
// words someone wrote), and the session's title, which states what the
// whole session is about, counts in every window.
func windowCoverage(items []Item, fam []int, terms []Term, idx []int, title, worth []float64) float64 {
	idx = append(idx[:0], fam...)
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := &items[a], &items[b]
		if c := strings.Compare(x.Session, y.Session); c != 0 {
			return c
		}
		return x.Ord - y.Ord
	})
	clear(title)
	for _, i := range idx {
		if items[i].Kind == "title" {
			mergeWorth(title, &items[i])
		}
	}
	best := 0.0
	for a, i := range idx {
		if items[i].Kind == "title" {
			continue
		}
		copy(worth, title)
		for _, k := range idx[a:] {
			it := &items[k]
			if it.Session != items[i].Session || it.Ord > items[i].Ord+FamilyWindow {
				break
			}
			if it.Kind != "title" {
				mergeWorth(worth, it)
			}
		}
		cov := 0.0
		for j, w := range worth {
			cov += terms[j].Weight * w
		}
		best = max(best, cov)
	}
	if best == 0 { // a family of titles only
		for j, w := range title {
			best += terms[j].Weight * w
		}
	}
	return best
}

// mergeWorth raises each term's worth to the item's prior where it holds
// the term.
func mergeWorth(worth []float64, it *Item) {
	p := it.prior
	if p == 0 { // not scored here (a semantic-only hit)
		p = priorOf(it)
	}
	for j, m := range it.Matched {
		if m && j < len(worth) && p > worth[j] {
			worth[j] = p
		}
	}
}

// Families orders session families by their best document plus how much of
// the query the family covers across all its documents, and returns the
// families best first with their items best first.
func Families(items []Item, terms []Term) [][]int {
	type fam struct {
		idx     []int
		best    float64
		matched []bool
	}
	byRoot := map[string]*fam{}
	var order []*fam
	for i, it := range items {
		f := byRoot[it.Root]
		if f == nil {
			f = &fam{matched: make([]bool, len(terms))}
			byRoot[it.Root] = f
			order = append(order, f)
		}
		f.idx = append(f.idx, i)
		if it.Score > f.best {
			f.best = it.Score
		}
		for j, m := range it.Matched {
			if m {
				f.matched[j] = true
			}
		}
	}
	total := 0.0
	for _, t := range terms {
		total += t.Weight
	}
	score := map[*fam]float64{}
	var idx []int
	title, worth := make([]float64, len(terms)), make([]float64, len(terms))
	for _, f := range order {
		sort.SliceStable(f.idx, func(a, b int) bool { return items[f.idx[a]].Score > items[f.idx[b]].Score })
		cov := windowCoverage(items, f.idx, terms, idx, title, worth)
		if total > 0 {
			cov /= total
		}
		score[f] = f.best + familyCoverage*cov*cov
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	out := make([][]int, len(order))
	for i, f := range order {
		out[i] = f.idx
	}
	return out
}

// termIn reports whether text holds the term: any needle at a word start,
// or all of a compound's parts.
func termIn(text, lower string, t Term) bool {
	for _, n := range t.Needles {
		if len(FindWord(text, lower, n, 1)) > 0 {
			return true
		}
	}
	if len(t.Parts) > 1 {
		for _, p := range t.Parts {
			if len(FindWord(text, lower, p, 1)) == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// FindWord returns up to max byte offsets where needle starts a word in
// text (lower is text ASCII-lowercased, same length). A word starts after a
// non-alphanumeric byte, at a lower-to-upper case change (camelCase), or at
// a letter/digit change.
func FindWord(text, lower, needle string, max int) []int {
	var out []int
	if needle == "" {
		return nil
	}
	from := 0
	for from < len(lower) {
		i := strings.Index(lower[from:], needle)
		if i < 0 {
			break
		}
		i += from
		if wordStart(text, i) {
			out = append(out, i)
			if len(out) == max {
				break
			}
		}
		from = i + 1
	}
	return out
}

func wordStart(text string, i int) bool {
	if i == 0 {
		return true
	}
	p, c := text[i-1], text[i]
	if !isAlnum(p) {
		return true
	}
	if isLowerASCII(p) && c >= 'A' && c <= 'Z' {
		return true
	}
	return isDigit(p) != isDigit(c)
}

func isAlnum(b byte) bool      { return isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'z') || b >= 0x80 }
func isDigit(b byte) bool      { return b >= '0' && b <= '9' }
func isLowerASCII(b byte) bool { return b >= 'a' && b <= 'z' }

// ASCIILower lowercases ASCII letters only, keeping byte offsets aligned
// with the original text.
func ASCIILower(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s // nothing to lower: no copy
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	// b is not kept, so it becomes the string without a second copy (as
	// strings.Builder does): a search lowers each of its 400 candidates'
	// texts, and the copy was fresh heap, page faults in a CLI process.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// lowerInto is ASCIILower(s) written over buf (grown as needed, and
// returned for the next call), which the result reads until buf is used
// again: Score lowers each of a search's 400 candidates' texts and drops
// each before the next, and a copy of each was 7% of a CLI search's
// allocations (fresh memory: page faults, in a process of its own).
func lowerInto(buf []byte, s string) (string, []byte) {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s, buf
	}
	buf = append(buf[:0], s...)
	for ; i < len(buf); i++ {
		if c := buf[i]; c >= 'A' && c <= 'Z' {
			buf[i] = c + 32
		}
	}
	return unsafe.String(unsafe.SliceData(buf), len(buf)), buf
}

// containsCollapsed reports whether s holds phrase (words joined by single
// spaces) once each run of white space in s is read as one space, without
// building that collapsed copy of s (the copy, one per candidate, was 4%
// of a search's CPU on the benchmark history).
func containsCollapsed(s, phrase string) bool {
	if phrase == "" {
		return true
	}
	first := phrase
	if i := strings.IndexByte(phrase, ' '); i >= 0 {
		first = phrase[:i]
	}
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], first)
		if i < 0 {
			return false
		}
		i += from
		if matchCollapsedAt(s, i, phrase) {
			return true
		}
		from = i + 1
	}
	return false
}

// matchCollapsedAt reports whether s from i reads phrase, each of its
// spaces standing for a run of white space in s.
func matchCollapsedAt(s string, i int, phrase string) bool {
	for j := 0; j < len(phrase); j++ {
		if phrase[j] != ' ' {
			if i >= len(s) || s[i] != phrase[j] {
				return false
			}
			i++
			continue
		}
		n := 0
		for i < len(s) {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += w
			n++
		}
		if n == 0 {
			return false
		}
	}
	return true
}

// Stem strips a few English suffixes so "connection", "connections" and
// "connected" find each other by prefix. It is deliberately crude: it only
// decides what counts as present in a text, never what the index matches.
func Stem(w string) string {
	if len(w) <= 4 {
		return w
	}
	for _, suf := range []string{"ations", "ation", "ings", "ing", "ions", "ion", "ies", "ied", "ed", "es", "ly", "s", "e"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}
