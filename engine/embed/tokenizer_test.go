package embed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// testdataDir holds goldens shared with testdata/embed/tokenizer_hf.py.
var testdataDir = filepath.Join("..", "..", "testdata", "embed")

// TestTokenizerMatchesHuggingFace checks our tokenizer against goldens written by
// a transcription of Hugging Face's BertTokenizer running on Python's unicodedata.
func TestTokenizerMatchesHuggingFace(t *testing.T) {
	vocab, err := loadVocab(filepath.Join(testdataDir, "vocab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := newTokenizer(vocab, true)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(testdataDir, "tokenizer_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name   string
		Text   string
		Tokens []string
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := tok.Tokenize(c.Text)
			if len(got) == 0 && len(c.Tokens) == 0 {
				return
			}
			if !slices.Equal(got, c.Tokens) {
				t.Errorf("Tokenize(%q)\n got %q\nwant %q", c.Text, got, c.Tokens)
			}
			ids := tok.IDs(c.Text)
			for i, id := range ids {
				if vocab[id] != got[i] {
					t.Fatalf("IDs()[%d] = %d (%q), want token %q", i, id, vocab[id], got[i])
				}
			}
		})
	}
}

func TestNewTokenizerRejectsNonBertVocab(t *testing.T) {
	if _, err := newTokenizer([]string{"a", "b"}, true); err == nil {
		t.Fatal("want an error for a vocabulary without [UNK]/[CLS]/[SEP]")
	}
}
