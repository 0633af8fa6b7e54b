package lsp

import (
	"cmp"
	"context"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine/render"
)

// workspace/symbol budgets.
const (
	// symbolSessions and symbolHits bound a workspace/symbol answer: a
	// picker shows about twenty rows; more only slows the round trip.
	symbolSessions = 20
	symbolHits     = 20
	// recentSessions is the empty-query symbol list.
	recentSessions = 50
)

// symbols answers workspace/symbol: sessions by fuzzy title, then the top
// search hits, each located at its transcript URI.
func (s *Server) symbols(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	p, err := decode[protocol.WorkspaceSymbolParams](raw)
	if err != nil {
		return nil, err
	}
	query := strings.TrimSpace(p.Query)
	sessParams := &commands.SessionsParams{Filter: query, Limit: symbolSessions}
	if query == "" {
		sessParams = &commands.SessionsParams{Limit: recentSessions}
	}
	res, err := runTyped(ctx, s, commands.Sessions, sessParams)
	if err != nil {
		return nil, err
	}
	out := protocol.SymbolInformationSlice{}
	for _, si := range res.Sessions {
		out = append(out, symbol(cmp.Or(si.Title, si.ID), protocol.SymbolKindNamespace, si.Directory, uri.URI(si.URI)))
	}
	if query == "" {
		return out, nil
	}
	hits, err := runTyped(ctx, s, commands.Search, &commands.SearchParams{Query: query, Limit: symbolHits})
	if err != nil {
		return nil, err
	}
	for _, h := range hits.Hits {
		if h.MessageID == "" {
			continue // a title hit: the session is listed already
		}
		out = append(out, symbol(render.ClipLine(h.Snippet, 120), protocol.SymbolKindEvent, h.Title, uri.URI(h.URI)))
	}
	return out, nil
}

func symbol(name string, kind protocol.SymbolKind, container string, u uri.URI) protocol.SymbolInformation {
	si := protocol.SymbolInformation{Location: protocol.Location{URI: u}}
	si.Name, si.Kind = name, kind
	if container != "" {
		si.ContainerName = &container
	}
	return si
}
