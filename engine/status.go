package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/render"
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

// ExportParams is one export.
type ExportParams struct {
	SessionID string
	Format    string // chatml | markdown | jsonl
}

// Export writes a whole session to w, page by page, so a long session never
// sits in memory at once.
func (e *Engine) Export(ctx context.Context, p ExportParams, w io.Writer) error {
	s, err := e.ix.Session(ctx, p.SessionID)
	if err != nil {
		return fmt.Errorf("export %s: %w (see `recall sessions` for ids)", p.SessionID, err)
	}
	const page = 100
	for first := 0; first < max(s.Messages, 1); first += page {
		last := min(first+page-1, s.Messages-1)
		msgs, err := e.ix.Window(ctx, s.ID, first, last)
		if err != nil {
			return err
		}
		e.showMessages(msgs)
		win := render.Window{SessionID: s.ID, Title: e.show(s.Title), Directory: s.Directory, ParentID: s.ParentID,
			First: first, Last: last, Total: s.Messages, Messages: msgs}
		switch p.Format {
		case "jsonl":
			if err := writeJSONL(w, msgs); err != nil {
				return err
			}
		case "markdown":
			if first > 0 {
				win.Title = "" // one heading per export
			}
			if _, err := io.WriteString(w, render.Markdown(win)); err != nil {
				return err
			}
		default:
			if _, err := io.WriteString(w, render.ChatML(win)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ExportPath makes a user-given output path absolute, for messages.
func ExportPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
