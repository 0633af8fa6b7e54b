package rank

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestCorrections(t *testing.T) {
	v := NewVocab([]string{"postgres", "connection", "exhausted", "shutdown", "state", "lock", "borrow", "error", "validation"},
		[]int{5, 9, 2, 4, 7, 6, 3, 20, 2})
	for typo, want := range map[string]string{
		"postgress": "postgres", "conection": "connection", "exausted": "exhausted",
		"shutdwon": "shutdown", "borow": "borrow", "eror": "error", "validaton": "validation",
		"statelock": "state lock",
	} {
		if got := v.Corrections(typo); !slices.Contains(got, want) {
			t.Errorf("Corrections(%q) = %q, want it to contain %q", typo, got, want)
		}
	}
	if got := v.Corrections("sql"); got != nil {
		t.Errorf("short words get no corrections, got %q", got)
	}
}

func TestDamerau(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"", "ab", 2}} {
		if got := damerau(c.a, c.b, 5); got != c.d {
			t.Errorf("damerau(%q,%q)=%d want %d", c.a, c.b, got, c.d)
		}
	}
}

// A word spelt right is never corrected, even when the history lacks it
// and holds a near one (issue 12: progress -> process lost the query).
func TestCorrectionsLeaveEnglishWords(t *testing.T) {
	v := NewVocab([]string{"process", "wired", "carries"}, []int{40, 3, 2})
	for _, w := range []string{"progress", "wiped", "carrier"} {
		if got := v.Corrections(w); got != nil {
			t.Errorf("Corrections(%q) = %q, want none: it is a word", w, got)
		}
	}
	if got := v.Corrections("proccess"); !slices.Contains(got, "process") {
		t.Errorf("Corrections(proccess) = %q, want process", got)
	}
}

// Corrections reads only Typable terms, so a vocabulary of those alone
// (what a search reads from the index) answers exactly as the whole one:
// over random vocabularies mixing words, identifiers and numbers, and
// misspellings of their words (an edit, a transposition, a glued pair).
func TestCorrectionsFromTheTypableTermsAlone(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	corrected := 0
	letters := "abcdeilnorst"
	word := func() string {
		b := make([]byte, 3+rng.IntN(9))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	for round := 0; round < 50; round++ {
		var terms []string
		var df []int
		var plainTerms []string
		var plainDF []int
		for i := 0; i < 400; i++ {
			w := word()
			switch rng.IntN(4) {
			case 0:
				w += "_" + word()
			case 1:
				w += strconv.Itoa(rng.IntN(100))
			}
			if slices.Contains(terms, w) {
				continue
			}
			n := 1 + rng.IntN(50)
			terms, df = append(terms, w), append(df, n)
			if Typable(w) {
				plainTerms, plainDF = append(plainTerms, w), append(plainDF, n)
			}
		}
		all, plain := NewVocab(terms, df), NewVocab(plainTerms, plainDF)
		for i := 0; i < 40; i++ {
			w := []byte(plainTerms[rng.IntN(len(plainTerms))])
			switch j := rng.IntN(len(w)); rng.IntN(3) {
			case 0:
				w[j] = letters[rng.IntN(len(letters))]
			case 1:
				if j+1 < len(w) {
					w[j], w[j+1] = w[j+1], w[j]
				}
			default:
				w = append(w, plainTerms[rng.IntN(len(plainTerms))]...)
			}
			typo := string(w)
			got, want := plain.Corrections(typo), all.Corrections(typo)
			if !slices.Equal(got, want) {
				t.Fatalf("%q: corrections from the typable terms %q, from all %q", typo, got, want)
			}
			if len(want) > 0 {
				corrected++
			}
		}
	}
	if corrected < 500 {
		t.Errorf("only %d of 2,000 misspellings were corrected; the test compares too little", corrected)
	}
}

// IsWord finds every word of the list and nothing else: each word, and
// each with a letter added, dropped or changed, against a set of them.
func TestIsWordSearchesTheWholeList(t *testing.T) {
	words := strings.Fields(wordList)
	if len(words) < 20000 || !sort.StringsAreSorted(words) {
		t.Fatalf("the word list holds %d words, sorted %v; want 20,000+ in byte order", len(words), sort.StringsAreSorted(words))
	}
	set := map[string]bool{}
	for _, w := range words {
		set[w] = true
	}
	for _, w := range words {
		if !IsWord(w) {
			t.Fatalf("IsWord(%q) = false for a word of the list", w)
		}
		for _, v := range []string{w + "s", w[1:], w[:len(w)-1], "a" + w, strings.ToUpper(w[:1]) + w[1:], w + "\n" + w} {
			if IsWord(v) != set[v] {
				t.Fatalf("IsWord(%q) = %v, the list says %v", v, IsWord(v), set[v])
			}
		}
	}
	for _, v := range []string{"", "\n", "zzzzzz", "aaaa"} {
		if IsWord(v) != set[v] {
			t.Errorf("IsWord(%q) = %v", v, IsWord(v))
		}
	}
}
