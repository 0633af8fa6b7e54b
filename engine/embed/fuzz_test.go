package embed

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokenize: any text tokenizes without panicking into ids the
// vocabulary holds; pieces are valid UTF-8 and never empty.
func FuzzTokenize(f *testing.F) {
	vocab, err := loadVocab(filepath.Join("..", "..", "testdata", "embed", "vocab.txt"))
	if err != nil {
		f.Fatal(err)
	}
	tok, err := newTokenizer(vocab, true)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"re-ran the café tests", "日本語のテキスト", "camelCaseIdentifier snake_case_name", "\x00\x07\u200b", "[CLS] x [SEP]", strings.Repeat("a", 300), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range tok.IDs(s) {
			if id < 0 || id >= len(vocab) {
				t.Fatalf("%q: id %d outside the vocabulary", s, id)
			}
		}
		for _, p := range tok.Tokenize(s) {
			if p == "" || !utf8.ValidString(p) {
				t.Fatalf("%q: bad piece %q", s, p)
			}
		}
	})
}
