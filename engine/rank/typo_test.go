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

// osa is the optimal-string-alignment distance by its definition, the
// whole matrix at once: what editDistance's two reused rows must give.
func osa(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// One editDistance measures from a word to many, of every length in turn
// (longer then shorter than the rows it grew to), multi-byte runes
// included: each distance within limit is the definition's, and each
// beyond it is reported beyond it.
func TestEditDistanceReused(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	letters := []rune("abcdeéñ")
	word := func() string {
		r := make([]rune, rng.IntN(12))
		for i := range r {
			r[i] = letters[rng.IntN(len(letters))]
		}
		return string(r)
	}
	var e editDistance
	for round := 0; round < 200; round++ {
		a := word()
		e.set(a)
		for k := 0; k < 20; k++ {
			b, limit := word(), rng.IntN(4)
			want, got := osa(a, b), e.to(b, limit)
			if got != want && (want <= limit || got <= limit) {
				t.Fatalf("distance %q -> %q (limit %d) = %d, want %d", a, b, limit, got, want)
			}
		}
	}
}

// A vocabulary answers each term's frequency whether it came sorted (as
// the index reads it) or not, and the caller's slices are not reordered.
func TestVocabDF(t *testing.T) {
	terms, df := []string{"lock", "alpha", "state", "zeta"}, []int{6, 1, 7, 9}
	for _, v := range []*Vocab{NewVocab(terms, df), NewVocab([]string{"alpha", "lock", "state", "zeta"}, []int{1, 6, 7, 9})} {
		for term, want := range map[string]int{"alpha": 1, "lock": 6, "state": 7, "zeta": 9, "beta": 0, "": 0, "zz": 0} {
			if got := v.DF(term); got != want {
				t.Errorf("DF(%q) = %d, want %d", term, got, want)
			}
		}
	}
	if terms[0] != "lock" || df[0] != 6 {
		t.Errorf("NewVocab reordered its caller's slices: %q %v", terms, df)
	}
}

func TestTypable(t *testing.T) {
	for term, want := range map[string]bool{"connection": true, "café": true, "naïve": true, "": true,
		"db_max": false, "utf8": false, "0x": false, "_": false, "señor9": false} {
		if got := Typable(term); got != want {
			t.Errorf("Typable(%q) = %v, want %v", term, got, want)
		}
	}
}
