package embed

import (
	"fmt"
	"os"
	"strings"
)

// Special tokens of BERT vocabularies.
const (
	tokenPad  = "[PAD]"
	tokenUnk  = "[UNK]"
	tokenCLS  = "[CLS]"
	tokenSEP  = "[SEP]"
	tokenMask = "[MASK]"
)

// specialTokens are kept whole when they appear in text, as HF's tokenizers do
// for a BERT vocabulary's special tokens.
var specialTokens = []string{tokenPad, tokenUnk, tokenCLS, tokenSEP, tokenMask}

// maxWordChars is Hugging Face's max_input_chars_per_word: longer words become [UNK].
const maxWordChars = 100

// tokenizer reproduces Hugging Face's BertTokenizer (BasicTokenizer followed by
// WordPiece): clean-up of control characters and whitespace, CJK ideographs as
// single tokens, lowercasing and accent stripping (NFD, drop non-spacing marks)
// for uncased models, punctuation split (including '-' and '_'), and greedy
// longest-match-first WordPiece with "##" continuations.
//
// cybertron's own tokenizer differs (it keeps '-' inside words and maps accented
// words to [UNK]), which would silently change what the model sees.
// A tokenizer is immutable and safe for concurrent use.
type tokenizer struct {
	vocab     map[string]int
	tokens    []string
	lowercase bool
	unkID     int
	clsID     int
	sepID     int
	padID     int
}

// loadVocab reads a BERT vocab.txt (one token per line; the line number is the id).
func loadVocab(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read vocabulary: %w", err)
	}
	// One string for the file, tokens as substrings of it: a token per
	// line as its own allocation was half of loading the tokenizer, which
	// a CLI search pays on every run.
	text := string(b)
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil, nil
	}
	tokens := strings.Split(text, "\n")
	for i, t := range tokens {
		tokens[i] = strings.TrimRight(t, "\r")
	}
	return tokens, nil
}

// newTokenizer builds a tokenizer over vocab (index = token id). lowercase selects
// an uncased model (HF's do_lower_case), which also strips accents as HF does.
func newTokenizer(vocab []string, lowercase bool) (*tokenizer, error) {
	t := &tokenizer{vocab: make(map[string]int, len(vocab)), tokens: vocab, lowercase: lowercase}
	for i, tok := range vocab {
		t.vocab[tok] = i // a duplicate keeps the last id, as HF's load_vocab does
	}
	for _, s := range []struct {
		tok string
		id  *int
	}{{tokenUnk, &t.unkID}, {tokenCLS, &t.clsID}, {tokenSEP, &t.sepID}} {
		id, ok := t.vocab[s.tok]
		if !ok {
			return nil, fmt.Errorf("vocabulary has no %s token; is this a BERT vocab.txt?", s.tok)
		}
		*s.id = id
	}
	t.padID = t.vocab[tokenPad]
	return t, nil
}

// Tokenize returns the WordPiece tokens of text, without [CLS] and [SEP].
func (t *tokenizer) Tokenize(text string) []string {
	ids := t.IDs(text)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = t.tokens[id]
	}
	return out
}

// IDs returns the token ids of text, without [CLS] and [SEP].
func (t *tokenizer) IDs(text string) []int {
	var ids []int
	for _, word := range preTokenize(text, t.lowercase) {
		if id, ok := t.vocab[word]; ok && isSpecial(word) {
			ids = append(ids, id)
			continue
		}
		ids = t.appendWordPieces(ids, word)
	}
	return ids
}

// appendWordPieces appends the greedy longest-match-first pieces of word to ids,
// or a single [UNK] when the word is too long or cannot be covered by the vocabulary.
func (t *tokenizer) appendWordPieces(ids []int, word string) []int {
	runes := []rune(word)
	if len(runes) > maxWordChars {
		return append(ids, t.unkID)
	}
	mark := len(ids)
	var sb strings.Builder
	for start := 0; start < len(runes); {
		end := len(runes)
		found := -1
		for ; start < end; end-- {
			sb.Reset()
			if start > 0 {
				sb.WriteString("##")
			}
			sb.WriteString(string(runes[start:end]))
			if id, ok := t.vocab[sb.String()]; ok {
				found = id
				break
			}
		}
		if found < 0 {
			return append(ids[:mark], t.unkID)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

func isSpecial(s string) bool {
	for _, sp := range specialTokens {
		if s == sp {
			return true
		}
	}
	return false
}
