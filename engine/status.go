package engine

import (
	"context"
	"os"

	"github.com/recallhq/recall/engine/index"
)

// Status describes the source and the index.
type Status struct {
	Source     string    `json:"source"`
	Demo       bool      `json:"demo,omitempty"`
	Eras       []string  `json:"eras"`
	Index      string    `json:"index"`
	IndexBytes int64     `json:"indexBytes"`
	Sessions   int       `json:"sessions"`
	Messages   int       `json:"messages"`
	Parts      int       `json:"parts"`
	Documents  int       `json:"documents"`
	Freshness  Freshness `json:"freshness"`
	Schema     int       `json:"schemaVersion"`
	// Semantic is the embedding model and how many documents have vectors.
	Semantic SemanticStatus `json:"semantic"`
}

// Status reports counts and freshness.
func (e *Engine) Status(ctx context.Context) (Status, error) {
	src := e.source()
	st := Status{Source: src.Path(), Demo: e.demo, Eras: src.Eras(), Index: e.ix.Path(), Schema: index.SchemaVersion}
	if fi, err := os.Stat(e.ix.Path()); err == nil {
		st.IndexBytes = fi.Size()
	}
	c, err := e.ix.Counts(ctx)
	if err != nil {
		return st, err
	}
	st.Sessions, st.Messages, st.Parts, st.Documents = c.Sessions, c.Messages, c.Parts, c.Documents
	st.Freshness = e.freshness(ctx)
	sem, err := e.semanticStatus(ctx)
	if err != nil {
		return st, err
	}
	st.Semantic = sem
	return st, nil
}
