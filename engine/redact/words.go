package redact

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
	// byPair lists the words by their first two bytes p:
	// byPair[off[p]:off[p+1]].
	off    [1<<16 + 1]uint16
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

// newWordIndex indexes words (lowercase ASCII, two bytes or more).
func newWordIndex(words []string) *wordIndex {
	x := &wordIndex{words: words, byPair: make([]int32, len(words))}
	pair := func(w string) uint16 { return uint16(fold[w[0]])<<8 | uint16(fold[w[1]]) }
	var count [1 << 16]uint16
	for _, w := range words {
		if len(w) < 2 {
			panic("redact: keyword " + w + " is shorter than two bytes")
		}
		p := pair(w)
		x.pairs[p/64] |= 1 << (p % 64)
		count[p]++
	}
	for p := range count {
		x.off[p+1] = x.off[p] + count[p]
	}
	next := x.off
	for i, w := range words {
		p := pair(w)
		x.byPair[next[p]] = int32(i)
		next[p]++
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
		for _, j := range x.byPair[x.off[p]:x.off[p+1]] {
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
