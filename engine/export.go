package engine

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/recallhq/recall/engine/render"
)

// ExportParams is one export.
type ExportParams struct {
	SessionID string
	Format    render.Format // one of render.ExportFormats; "" = chatml
	// Source names the history to export from ("": the first, in source
	// order, that holds the session).
	Source string
}

// Export writes a whole session to w, page by page, so a long session never
// sits in memory at once.
func (e *Engine) Export(ctx context.Context, p ExportParams, w io.Writer) error {
	sh, s, err := e.findSession(ctx, p.Source, p.SessionID)
	if err != nil {
		return fmt.Errorf("export %s: %w (see `recall sessions` for ids)", p.SessionID, err)
	}
	const page = 100
	for first := 0; first < max(s.Messages, 1); first += page {
		last := min(first+page-1, s.Messages-1)
		msgs, err := sh.ix.Window(ctx, s.ID, first, last)
		if err != nil {
			return err
		}
		e.showMessages(msgs)
		win := render.Window{Source: sh.name, SessionID: s.ID, Title: e.show(s.Title), Directory: s.Directory, ParentID: s.ParentID,
			First: first, Last: last, Total: s.Messages, Messages: msgs}
		switch p.Format {
		case render.FormatJSONL:
			if err := render.JSONL(w, msgs); err != nil {
				return err
			}
		case render.FormatMarkdown:
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
