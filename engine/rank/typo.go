// Package rank scores search candidates: typo tolerance against the index
// vocabulary, coverage of the query's terms, kind priors, per-session
// diversity and fusion with vector similarity (Fuse). It is pure: no I/O.
package rank

import (
	_ "embed"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"
)

// wordList holds the whole English words (four letters or more) of the
// bert-base-uncased WordPiece vocabulary (Apache-2.0; the copy the embed
// tests carry): 20,362 words, the most frequent of a large English corpus,
// one a line, in byte order. A query word in it is spelt right even when
// this history never used it (`progress`, `wiped`, `carrier`): correcting
// it to the nearest word the history holds (`process`, `wired`,
// `carries`) lost queries spelt right.
//
//go:embed words.txt
var wordList string

// IsWord reports an English word (see wordList). It searches the embedded
// list in place: a map of it cost every CLI search that may correct a
// typo 0.6 ms of CPU and about 200 page faults of fresh memory, to look
// up a few query words.
func IsWord(w string) bool {
	if w == "" || strings.IndexByte(w, '\n') >= 0 {
		return false
	}
	lo, hi := 0, len(wordList) // a range of whole lines
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(wordList[lo:mid], '\n') + 1 + lo
		end := strings.IndexByte(wordList[start:hi], '\n')
		if end < 0 {
			end = hi
		} else {
			end += start
		}
		switch line := wordList[start:end]; {
		case line == w:
			return true
		case line < w:
			lo = end + 1
		default:
			hi = start
		}
	}
	return false
}

// Vocab is the index vocabulary, or the part of it typo corrections read
// (the Typable terms: Corrections answers the same from either): raw
// (unstemmed) terms and how many documents hold each, sorted by term.
//
// A term's frequency is found by binary search, not in a map: the
// vocabulary comes sorted (the index reads it in its key's order), and a
// map of the 845k-part benchmark history's 5,868 words took 0.3 ms and
// 218 KB to build in each CLI search with a typo, for a handful of
// lookups.
type Vocab struct {
	terms []string
	df    []int
}

// NewVocab builds a vocabulary of terms and their frequencies (df[i] is
// terms[i]'s). It keeps both slices, sorting them together when terms
// are not sorted already.
func NewVocab(terms []string, df []int) *Vocab {
	if !slices.IsSorted(terms) {
		order := make([]int, len(terms))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(terms[a], terms[b]) })
		st, sd := make([]string, len(terms)), make([]int, len(terms))
		for i, j := range order {
			st[i], sd[i] = terms[j], df[j]
		}
		terms, df = st, sd
	}
	return &Vocab{terms: terms, df: df}
}

// DF is how many documents hold term (0 when unknown).
func (v *Vocab) DF(term string) int {
	if i, ok := slices.BinarySearch(v.terms, term); ok {
		return v.df[i]
	}
	return 0
}

// Len is the vocabulary size.
func (v *Vocab) Len() int { return len(v.terms) }

// maxEdits is the typo budget by term length: short words are easy to turn
// into other real words, so they get one edit; longer words two.
func maxEdits(n int) int {
	switch {
	case n < 4:
		return 0
	case n < 8:
		return 1
	default:
		return 2
	}
}

// maxTypedLen: a word longer than this was pasted (a hash, a blob), not
// typed, so it has no typos; and matching it against the whole vocabulary
// would cost the most for the least.
const maxTypedLen = 64

// maxCorrections bounds the alternatives one misspelt term adds.
const maxCorrections = 3

// Typable reports a term a typo may be corrected to, or corrected from:
// one with no digits or connectors (typos do not add those).
func Typable(term string) bool {
	// A byte loop: strings.ContainsAny built its set of 11 bytes on every
	// call, a quarter of Corrections' time (no byte of a multi-byte UTF-8
	// character is ASCII, so bytes can be compared).
	for i := 0; i < len(term); i++ {
		if c := term[i]; c == '_' || '0' <= c && c <= '9' {
			return false
		}
	}
	return true
}

// MayCorrect reports whether Corrections may propose anything for term:
// it is long enough to have a typo budget, short enough to have been typed,
// has no digits or connectors, and is no English word. The caller skips
// reading the vocabulary when it may not.
func MayCorrect(term string) bool {
	n := utf8.RuneCountInString(term)
	return maxEdits(n) > 0 && n <= maxTypedLen && Typable(term) && !IsWord(term)
}

// Corrections proposes vocabulary terms for a term that matches nothing and
// is no English word:
// close spellings (Damerau-Levenshtein within maxEdits, so transpositions
// like "shutdwon" count as one edit), terms the typed letters are a fuzzy
// subsequence of ("conection" in "connection"), and a split of a glued word
// into two known words ("statelock" -> "state lock", returned as a phrase).
// The most frequent candidates at the smallest distance come first.
func (v *Vocab) Corrections(term string) []string {
	if !MayCorrect(term) {
		return nil
	}
	n := utf8.RuneCountInString(term)
	budget := maxEdits(n)
	type cand struct {
		term string
		dist int
		df   int
	}
	var cands []cand
	seen := map[string]bool{}
	add := func(t string, d int) {
		if !seen[t] {
			seen[t] = true
			cands = append(cands, cand{t, d, v.DF(t)})
		}
	}
	var near []string
	var dist editDistance
	dist.set(term)
	for _, t := range v.terms {
		if len(t) < n-budget { // a term has no more runes than bytes
			continue
		}
		m := utf8.RuneCountInString(t)
		if m < n-budget || m > n+budget || !Typable(t) {
			continue
		}
		if d := dist.to(t, budget); d <= budget {
			add(t, d)
		}
		if m > n && m <= n+budget {
			near = append(near, t)
		}
	}
	// Subsequence matches catch dropped letters the edit budget already
	// covers, and rank them by sahilm/fuzzy's contiguity score.
	for _, m := range fuzzy.Find(term, near) {
		if m.Score > 0 {
			add(m.Str, len(m.Str)-n)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].df > cands[j].df
	})
	// Only the closest spellings: a farther one is usually another word
	// ("conection" is one edit from "connection", two from "convention").
	var out []string
	for _, c := range cands {
		if len(out) == maxCorrections || c.dist > cands[0].dist {
			break
		}
		out = append(out, c.term)
	}
	if split := v.split(term); split != "" {
		out = append(out, split)
	}
	return out
}

// split finds the best way to read term as two known words.
func (v *Vocab) split(term string) string {
	best, bestDF := "", 0
	for i := 3; i <= len(term)-3; i++ {
		a, b := term[:i], term[i:]
		da, db := v.DF(a), v.DF(b)
		if da == 0 || db == 0 {
			continue
		}
		if m := min(da, db); m > bestDF {
			best, bestDF = a+" "+b, m
		}
	}
	return best
}

// damerau is the optimal-string-alignment distance between a and b, giving
// up (returning limit+1) once it must exceed limit.
func damerau(a, b string, limit int) int {
	var e editDistance
	e.set(a)
	return e.to(b, limit)
}

// editDistance measures the distance from one word to many (Corrections
// runs it over the vocabulary's words of about the term's length: 1,000
// to 3,000 calls a typo on the 845k-part benchmark history). Its runes
// and rows are reused from call to call: allocated each call, they were
// 26,550 allocations and 1.8 MB for six typos, fresh memory a CLI search
// faults in page by page.
type editDistance struct {
	a, b             []rune
	prev2, prev, cur []int
}

// set makes a the word measured from.
func (e *editDistance) set(a string) {
	e.a = appendRunes(e.a[:0], a)
}

func appendRunes(dst []rune, s string) []rune {
	for _, r := range s {
		dst = append(dst, r)
	}
	return dst
}

// to is the optimal-string-alignment distance from the word set to b,
// limit+1 once it must exceed limit.
func (e *editDistance) to(b string, limit int) int {
	e.b = appendRunes(e.b[:0], b)
	ra, rb := e.a, e.b
	if abs(len(ra)-len(rb)) > limit {
		return limit + 1
	}
	n := len(rb) + 1
	if cap(e.cur) < n {
		e.prev2, e.prev, e.cur = make([]int, n), make([]int, n), make([]int, n)
	}
	prev2, prev, cur := e.prev2[:n], e.prev[:n], e.cur[:n]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
