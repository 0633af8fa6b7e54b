package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
)

// textDocumentContent serves recall: URIs (LSP 3.18).
func (s *Server) textDocumentContent(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	p, err := decode[protocol.TextDocumentContentParams](raw)
	if err != nil {
		return nil, err
	}
	res, err := s.readTranscript(ctx, string(p.URI))
	if err != nil {
		return nil, err
	}
	return &protocol.TextDocumentContentResult{Text: res.Text}, nil
}

// transcript is recall/transcript {uri}: the same read for clients without
// 3.18, answered with the full read result.
func (s *Server) transcript(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	var p transcriptParams
	if err := decodeStrict(raw, &p); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v; recall/transcript takes {uri}", err)
	}
	res, err := s.readTranscript(ctx, p.URI)
	if err != nil {
		return nil, err
	}
	return encodeResult(res)
}

// transcriptParams are recall/transcript's params.
type transcriptParams struct {
	URI string `json:"uri"`
}

func (s *Server) readTranscript(ctx context.Context, u string) (engine.ReadResult, error) {
	t, err := engine.ParseTranscript(u)
	if err != nil {
		return engine.ReadResult{}, err
	}
	if t.Format != "markdown" && t.Format != "chatml" {
		return engine.ReadResult{}, fmt.Errorf("%w %q: format must be markdown or chatml", engine.ErrBadURI, echo(u))
	}
	eng, err := s.historyEngine(ctx) // the session is looked up: wait for the first sync
	if err != nil {
		return engine.ReadResult{}, err
	}
	cursor, err := eng.SessionCursor(ctx, t.Source, t.SessionID, t.Around)
	if err != nil {
		return engine.ReadResult{}, err
	}
	params := &commands.ReadParams{Cursor: cursor, Mode: t.Mode, Limit: t.Limit, Format: t.Format}
	return runTyped(ctx, s, commands.Read, params)
}

// Documents.
