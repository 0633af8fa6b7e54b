package embed

import (
	"context"
	"errors"
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
