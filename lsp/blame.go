package lsp

import (
	"context"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// OpenTranscript is the client-side command of the blame and pitfall
// lenses: open its argument's uri ({uri, sessionId, messageId}).
const OpenTranscript = "recall.openTranscript"

// openTranscriptArgs is OpenTranscript's one argument.
type openTranscriptArgs struct {
	URI       string `json:"uri"`
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId,omitempty"`
}

// blameDoc blames a file document as the client has it (or as it is on
// disk when the client never opened it).
func (s *Server) blameDoc(ctx context.Context, u uri.URI) (engine.BlameResult, bool, error) {
	if !u.IsFile() {
		return engine.BlameResult{}, false, nil
	}
	text, ok := s.docText(u)
	if !ok || text == "" {
		return engine.BlameResult{}, false, nil
	}
	res, err := runTyped(ctx, s, commands.Blame, &commands.BlameParams{Path: u.FsPath(), Text: text})
	return res, err == nil, err
}

// blameHover is the hover on a line a recorded change wrote (with the
// file's newest pitfall), nil for a line nobody's.
func (s *Server) blameHover(ctx context.Context, u uri.URI, pos protocol.Position) (*protocol.Hover, error) {
	res, ok, err := s.blameDoc(ctx, u)
	if err != nil || !ok {
		return nil, err
	}
	line := int(pos.Line) + 1
	var h render.BlameHover
	for _, r := range res.Ranges {
		if r.StartLine <= line && line <= r.EndLine {
			h = render.BlameHover{Title: r.Title, SessionID: r.SessionID, MessageID: r.MessageID, Source: r.Source, Tool: r.Tool,
				Time: r.Time, Link: r.URI, StartLine: r.StartLine, EndLine: r.EndLine}
			break
		}
	}
	if h.SessionID == "" {
		return nil, nil
	}
	if len(res.Pitfalls) > 0 {
		p := res.Pitfalls[0]
		h.Pitfall, h.PitfallTitle, h.PitfallLink = p.Error, p.Title, p.URI
	}
	rng := protocol.Range{Start: protocol.Position{Line: uint32(h.StartLine - 1)}, End: protocol.Position{Line: uint32(h.EndLine - 1)}}
	return &protocol.Hover{Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: render.BlameHoverMarkdown(h)}, Range: &rng}, nil
}

// blameLenses are a lens for the file's newest pitfall (line 0) and one
// per blamed range at its first line.
func blameLenses(res engine.BlameResult, pitfalls []engine.Pitfall, now time.Time) ([]protocol.CodeLens, error) {
	var out []protocol.CodeLens
	lens := func(line int, title string, a openTranscriptArgs) error {
		arg, err := encodeResult(a)
		if err != nil {
			return err
		}
		pos := protocol.Position{Line: uint32(line)}
		out = append(out, protocol.CodeLens{Range: protocol.Range{Start: pos, End: pos},
			Command: protocol.Command{Title: title, Command: OpenTranscript, Arguments: []protocol.LSPAny{protocol.LSPAny(arg)}}})
		return nil
	}
	if len(pitfalls) > 0 {
		p := pitfalls[0]
		if err := lens(0, "bit us before: "+render.ClipLine(p.Error, 80), openTranscriptArgs{URI: p.URI, SessionID: p.SessionID, MessageID: p.MessageID}); err != nil {
			return nil, err
		}
	}
	for _, r := range res.Ranges {
		title := "written in " + render.ClipLine(r.Title, 60)
		if age := render.Age(r.Time, now); age != "" {
			title += " · " + age
		}
		if err := lens(r.StartLine-1, title, openTranscriptArgs{URI: r.URI, SessionID: r.SessionID, MessageID: r.MessageID}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
