package embed

import (
	"context"
	"errors"
	"strings"
	"unicode"
)

// Embedder turns texts into L2-normalised vectors. Implementations are safe
// for concurrent use.
type Embedder interface {
	// Embed returns one unit-length vector per text. A text longer than
	// Info().MaxTokens is cut into chunks whose vectors are averaged and
	// re-normalised, so nothing is silently truncated.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Info describes the model; store vectors keyed by ID and Revision.
	Info() Info
	// Close releases the model's memory.
	Close() error
}

// Info describes a loaded model.
type Info struct {
	ID        string `json:"id"`        // e.g. "sentence-transformers/all-MiniLM-L6-v2"
	Revision  string `json:"revision"`  // Hugging Face commit the weights came from, "" if unknown
	Dims      int    `json:"dims"`      // vector length
	Pooling   string `json:"pooling"`   // "mean" or "cls"
	MaxTokens int    `json:"maxTokens"` // tokens per chunk, [CLS] and [SEP] included
}

// ErrNoModel means no embedding model is installed; search falls back to lexical.
var ErrNoModel = errors.New("no embedding model installed: run `recall models pull` to download " +
	DefaultModel + ", or `recall models import DIR` to install a downloaded Hugging Face snapshot")

// ErrClosed is returned by Embed after Close.
var ErrClosed = errors.New("embedder is closed")

// Chunk splits text into pieces of at most maxTokens pre-tokens (words and
// punctuation marks, as the BERT tokenizer splits them), cutting only between
// pre-tokens and returning substrings of text with surrounding space trimmed.
// A pre-token count is a lower bound on model tokens (WordPiece may split a
// word further), so callers that need a hard limit should leave headroom;
// Embed itself re-chunks by exact token count.
func Chunk(text string, maxTokens int) []string {
	if maxTokens <= 0 {
		maxTokens = 1
	}
	var chunks []string
	start, count := -1, 0
	inWord := false
	for i, r := range text {
		space := isWhitespace(r) || r == 0 || isControl(r)
		single := !space && (isPunctuation(r) || isCJK(r))
		begins := single || (!space && !inWord)
		inWord = !space && !single
		if !begins {
			continue
		}
		if count == maxTokens {
			chunks = append(chunks, strings.TrimSpace(text[start:i]))
			start, count = -1, 0
		}
		if start < 0 {
			start = i
		}
		count++
	}
	if start >= 0 {
		chunks = append(chunks, strings.TrimRightFunc(text[start:], unicode.IsSpace))
	}
	return chunks
}
