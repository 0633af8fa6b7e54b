package redact

import (
	"cmp"
	"slices"
)

// wordIndex finds every occurrence of a set of ASCII words in a text,
// ignoring case: the keyword and anchor pass that decides which rules run
// and where.
//
// Why not an Aho-Corasick library: the fastest one tried
// (petar-dambovaliev/aho-corasick, DFA) scans at 86 MB/s but takes 30 ms
// to build for Recall's 409 words, at the start of every CLI command;
// built as an NFA it takes 3 ms and scans at 31 MB/s. This index builds in
// well under a millisecond and scans faster than both (see
// BenchmarkWordIndex): a bitset of the words' first two bytes rejects
// nearly every position with one lookup, and the few words that begin
// with a pair are compared in place.
type wordIndex struct {
	words []string
	pairs [1 << 16 / 64]uint64 // first two bytes (folded) of some word
	// byPair lists the words by their first two bytes: those of pair p
	// at byPair[span[p]&0xffff:], span[p]>>16 of them. span is written
	// only at the pairs some word begins with (keywords begin with letters
	// and digits: a few of its pages), so a fresh process touches little
	// of it. The offset array over every pair it replaced, with the counts
	// that built it (384 KB, every element written), cost each process
	// that redacts (every CLI search) about 60 page faults.
	span   [1 << 16]uint32
	byPair []int32
}

// fold maps ASCII upper case to lower case and leaves every other byte.
var fold = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// pairOf is the folded first two bytes of s.
func pairOf(s string) uint16 { return uint16(fold[s[0]])<<8 | uint16(fold[s[1]]) }

// newWordIndex indexes words (lowercase ASCII, two bytes or more).
func newWordIndex(words []string) *wordIndex {
	if len(words) >= 1<<16 {
		panic("redact: more keywords than a span holds")
	}
	x := &wordIndex{words: words, byPair: make([]int32, len(words))}
	for i, w := range words {
		if len(w) < 2 {
			panic("redact: keyword " + w + " is shorter than two bytes")
		}
		p := pairOf(w)
		x.pairs[p/64] |= 1 << (p % 64)
		x.byPair[i] = int32(i)
	}
	// Words in pair order, each pair's in the order given.
	slices.SortStableFunc(x.byPair, func(a, b int32) int { return cmp.Compare(pairOf(words[a]), pairOf(words[b])) })
	for i, j := range x.byPair {
		p := pairOf(words[j])
		if x.span[p] == 0 {
			x.span[p] = uint32(i)
		}
		x.span[p] += 1 << 16
	}
	return x
}

// each calls fn(word, start, end) for every occurrence, in text order.
func (x *wordIndex) each(s string, fn func(word, start, end int)) {
	for i := 0; i+1 < len(s); i++ {
		p := uint16(fold[s[i]])<<8 | uint16(fold[s[i+1]])
		if x.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		sp := x.span[p]
		for _, j := range x.byPair[sp&0xffff : sp&0xffff+sp>>16] {
			w := x.words[j]
			if i+len(w) <= len(s) && foldedPrefix(s[i:], w) {
				fn(int(j), i, i+len(w))
			}
		}
	}
}

// foldedPrefix reports whether s begins with the lowercase w, ignoring
// ASCII case.
func foldedPrefix(s, w string) bool {
	for k := 2; k < len(w); k++ {
		if fold[s[k]] != w[k] {
			return false
		}
	}
	return true
}
