package lsp

import (
	"context"
	"errors"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// hover previews the ses_/msg_/prt_ id under the cursor; elsewhere in a
// file it says which past session wrote the line (blame), if one did.
func (s *Server) hover(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	p, err := decode[protocol.HoverParams](raw)
	if err != nil {
		return nil, err
	}
	text, ok := s.docText(p.TextDocument.URI)
	if !ok {
		return nil, nil
	}
	word, rng, ok := wordAt(text, p.Position)
	if !ok || engine.IDKind(word) == "" {
		return s.blameHover(ctx, p.TextDocument.URI, p.Position)
	}
	eng, err := s.historyEngine(ctx)
	if err != nil {
		return nil, err
	}
	pv, err := eng.Lookup(ctx, word)
	if errors.Is(err, engine.ErrUnknownID) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &protocol.Hover{Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: render.HoverMarkdown(hoverPreview(pv))}, Range: &rng}, nil
}

// hoverPreview is what render.HoverMarkdown needs of an engine preview.
func hoverPreview(pv engine.Preview) render.HoverPreview {
	ses := pv.Session
	return render.HoverPreview{Source: ses.Source, SessionID: ses.ID, Title: ses.Title, Directory: ses.Directory, FirstPrompt: ses.FirstPrompt,
		Messages: ses.Messages, Time: pv.Time, Message: pv.Message, PartID: pv.PartID,
		Link: pv.URI}
}
