package lsp

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
)

// lensSessions is how many session ids a file lens carries.
const lensSessions = 20

// codeLens: "N past sessions touched this file" on line 0 of a file that
// past sessions read, edited or patched (one indexed lookup), then the
// newest error they hit in it and, per range a recorded change wrote,
// which session wrote it (blame).
func (s *Server) codeLens(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	p, err := decode[protocol.CodeLensParams](raw)
	if err != nil {
		return nil, err
	}
	lenses := []protocol.CodeLens{}
	if !p.TextDocument.URI.IsFile() {
		return lenses, nil
	}
	fr, err := runTyped(ctx, s, commands.Files, &commands.FilesParams{Path: p.TextDocument.URI.FsPath(), Limit: lensSessions})
	if err != nil {
		return nil, err
	}
	if fr.Total == 0 {
		return lenses, nil
	}
	ids := make([]string, len(fr.Sessions))
	for i, si := range fr.Sessions {
		ids[i] = si.ID
	}
	arg, err := encodeResult(fileLensArgs{Path: fr.Path, SessionIDs: ids, Total: fr.Total})
	if err != nil {
		return nil, err
	}
	title := fmt.Sprintf("%d past sessions touched this file", fr.Total)
	if fr.Total == 1 {
		title = "1 past session touched this file"
	}
	lenses = append(lenses, protocol.CodeLens{Command: protocol.Command{Title: title, Command: ShowFileSessions,
		Arguments: []protocol.LSPAny{protocol.LSPAny(arg)}}})
	res, ok, err := s.blameDoc(ctx, p.TextDocument.URI)
	if err != nil {
		// The file lens stands on its own; a file blame cannot read (gone,
		// too large) only loses the per-range lenses.
		s.log.Warn("blame for code lens", "path", fr.Path, "err", err)
		ok = false
	}
	if !ok {
		res = engine.BlameResult{}
	}
	more, err := blameLenses(res, fr.Pitfalls, time.Now())
	if err != nil {
		return nil, err
	}
	return append(lenses, more...), nil
}

// fileLensArgs is the argument of the file lens's ShowFileSessions (the
// fields in the order clients have always received them).
type fileLensArgs struct {
	Path       string   `json:"path"`
	SessionIDs []string `json:"sessionIds"`
	Total      int      `json:"total"`
}
