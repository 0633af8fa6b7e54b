package redact

import (
	"sort"
	"strings"
	"testing"

	ahocorasick "github.com/petar-dambovaliev/aho-corasick"
)

// indexWords are the words Recall's redactor indexes.
func indexWords() []string {
	return Default().words.words
}

// The index finds every occurrence of every word, in any case, as an
// Aho-Corasick automaton does.
func TestWordIndexFindsWhatAhoCorasickFinds(t *testing.T) {
	texts, _ := historyTexts(t)
	texts = append(texts, "SK_LIVE_x sk_Live_ AKIA akia Private Key", "aaa", "", "k")
	words := indexWords()
	x := newWordIndex(words)
	b := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{AsciiCaseInsensitive: true, MatchKind: ahocorasick.StandardMatch, DFA: true})
	ac := b.Build(words)
	for _, s := range texts {
		var got, want []string
		x.each(s, func(w, start, end int) { got = append(got, words[w]+"@"+itoa(start)) })
		it := ac.IterOverlapping(s)
		for m := it.Next(); m != nil; m = it.Next() {
			want = append(want, words[m.Pattern()]+"@"+itoa(m.Start()))
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("in %.80q: index found %d, automaton %d", s, len(got), len(want))
		}
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}

// BenchmarkWordIndex: the word pass over real history, with the index
// and with the Aho-Corasick library it replaces (build time in ms).
func BenchmarkWordIndex(b *testing.B) {
	texts, n := historyTexts(b)
	words := indexWords()
	b.Run("ours", func(b *testing.B) {
		x := newWordIndex(words)
		b.SetBytes(n)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, s := range texts {
				x.each(s, func(int, int, int) {})
			}
		}
	})
	for _, dfa := range []bool{true, false} {
		name := "aho-corasick-nfa"
		if dfa {
			name = "aho-corasick-dfa"
		}
		b.Run(name, func(b *testing.B) {
			bl := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{AsciiCaseInsensitive: true, MatchKind: ahocorasick.StandardMatch, DFA: dfa})
			ac := bl.Build(words)
			b.SetBytes(n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, s := range texts {
					it := ac.IterOverlapping(s)
					for m := it.Next(); m != nil; m = it.Next() {
					}
				}
			}
		})
	}
}

// BenchmarkBuild is the redactor's start-up cost (rules, anchors, word
// index): every process that redacts pays it once.
func BenchmarkBuild(b *testing.B) {
	for i := 0; i < b.N; i++ {
		build(append(ownRules(), gitleaksRuleSet()...), true)
	}
}
