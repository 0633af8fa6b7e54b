package rank

import (
	"strings"
	"testing"
)

// benchVocab is a vocabulary the size of the 845k-part benchmark
// history's typo vocabulary (5,868 words): every third word of the
// embedded English list, sorted as the index reads it.
func benchVocab() ([]string, []int) {
	var terms []string
	var df []int
	for i, w := range strings.Split(strings.TrimSpace(wordList), "\n") {
		if i%3 == 0 {
			terms = append(terms, w)
			df = append(df, 1+i%97)
		}
	}
	return terms, df
}

// BenchmarkCorrections corrects the six typos of the public queries' typo
// kind (the misspelt words themselves): what a search with them pays
// after its vocabulary is read.
func BenchmarkCorrections(b *testing.B) {
	v := NewVocab(benchVocab())
	b.ReportAllocs()
	for b.Loop() {
		for _, w := range []string{"postgress", "conection", "exausted", "borow", "eror", "validaton"} {
			v.Corrections(w)
		}
	}
}

// BenchmarkNewVocab builds the vocabulary from its sorted words, as each
// CLI search with a typo does once.
func BenchmarkNewVocab(b *testing.B) {
	terms, df := benchVocab()
	b.ReportAllocs()
	for b.Loop() {
		NewVocab(terms, df)
	}
}
