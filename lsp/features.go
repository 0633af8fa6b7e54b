package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// Feature budgets.
const (
	// symbolSessions and symbolHits bound a workspace/symbol answer: a
	// picker shows about twenty rows; more only slows the round trip.
	symbolSessions = 20
	symbolHits     = 20
	// recentSessions is the empty-query symbol list.
	recentSessions = 50
	// lensSessions is how many session ids a file lens carries.
	lensSessions = 20
	// maxDiskDoc bounds a file read from disk for a hover on a document the
	// client never opened.
	maxDiskDoc = 4 << 20
)

func decode[T any](raw jsonrpc2.RawMessage) (*T, error) {
	var p T
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v", err)
	}
	return &p, nil
}

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
		out = append(out, symbol(firstNonEmpty(si.Title, si.ID), protocol.SymbolKindNamespace, si.Directory, TranscriptURI(si.ID, "")))
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
		out = append(out, symbol(render.ClipLine(h.Snippet, 120), protocol.SymbolKindEvent, h.Title, TranscriptURI(h.SessionID, h.MessageID)))
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

// hover previews the ses_/msg_/prt_ id under the cursor; anything else is
// null without touching the index.
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
		return nil, nil
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
	return render.HoverPreview{SessionID: ses.ID, Title: ses.Title, Directory: ses.Directory, FirstPrompt: ses.FirstPrompt,
		Messages: ses.Messages, Time: pv.Time, Message: pv.Message, PartID: pv.PartID,
		Link: string(TranscriptURI(ses.ID, pv.MessageID))}
}

// codeLens: "N past sessions touched this file" on line 0 of a file that
// past sessions read, edited or patched (one indexed lookup).
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
	return lenses, nil
}

// fileLensArgs is the argument of the file lens's ShowFileSessions (the
// fields in the order clients have always received them).
type fileLensArgs struct {
	Path       string   `json:"path"`
	SessionIDs []string `json:"sessionIds"`
	Total      int      `json:"total"`
}

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
	var p struct {
		URI string `json:"uri"`
	}
	if err := decodeStrict(raw, &p); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v; recall/transcript takes {uri}", err)
	}
	res, err := s.readTranscript(ctx, p.URI)
	if err != nil {
		return nil, err
	}
	return encodeResult(res)
}

func (s *Server) readTranscript(ctx context.Context, u string) (engine.ReadResult, error) {
	t, err := ParseTranscript(u)
	if err != nil {
		return engine.ReadResult{}, err
	}
	if t.Format != "markdown" && t.Format != "chatml" {
		return engine.ReadResult{}, fmt.Errorf("%w %q: format must be markdown or chatml", errBadURI, echo(u))
	}
	eng, err := s.engine()
	if err != nil {
		return engine.ReadResult{}, err
	}
	params := &commands.ReadParams{Cursor: eng.SessionCursor(t.SessionID, t.Around), Mode: t.Mode, Limit: t.Limit, Format: t.Format}
	return runTyped(ctx, s, commands.Read, params)
}

// Documents.

func (s *Server) setDoc(u uri.URI, text string) {
	s.mu.Lock()
	s.docs[u] = text
	s.mu.Unlock()
}

func (s *Server) applyChanges(u uri.URI, changes []protocol.TextDocumentContentChangeEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range changes {
		switch c := c.(type) {
		case *protocol.TextDocumentContentChangeWholeDocument:
			s.docs[u] = c.Text
		case *protocol.TextDocumentContentChangePartial:
			// We advertise full sync; a client sending ranges anyway gets
			// them applied rather than a stale document.
			s.docs[u] = applyRange(s.docs[u], c.Range, c.Text)
		}
	}
}

// docText is an open document's text, or for a file the client never
// opened, the file on disk (bounded).
func (s *Server) docText(u uri.URI) (string, bool) {
	s.mu.Lock()
	text, ok := s.docs[u]
	s.mu.Unlock()
	if ok || !u.IsFile() {
		return text, ok
	}
	f, err := os.Open(u.FsPath())
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, maxDiskDoc)
	n, _ := f.Read(buf)
	return string(buf[:n]), true
}

// wordAt is the [A-Za-z0-9_] word at a UTF-16 position, with its range.
func wordAt(text string, pos protocol.Position) (string, protocol.Range, bool) {
	start := 0
	for i := uint32(0); i < pos.Line; i++ {
		j := strings.IndexByte(text[start:], '\n')
		if j < 0 {
			return "", protocol.Range{}, false
		}
		start += j + 1
	}
	line := text[start:]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	off := byteOffset(line, pos.Character)
	a, b := off, off
	for a > 0 && isWordByte(line[a-1]) {
		a--
	}
	for b < len(line) && isWordByte(line[b]) {
		b++
	}
	if a == b {
		return "", protocol.Range{}, false
	}
	rng := protocol.Range{Start: protocol.Position{Line: pos.Line, Character: utf16Len(line[:a])},
		End: protocol.Position{Line: pos.Line, Character: utf16Len(line[:b])}}
	return line[a:b], rng, true
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// byteOffset converts a UTF-16 column to a byte offset in line.
func byteOffset(line string, col uint32) int {
	units, off := uint32(0), 0
	for off < len(line) && units < col {
		r, size := utf8.DecodeRuneInString(line[off:])
		units += uint32(utf16.RuneLen(r))
		if utf16.RuneLen(r) < 0 {
			units++
		}
		off += size
	}
	return off
}

func utf16Len(s string) uint32 {
	n := uint32(0)
	for _, r := range s {
		if l := utf16.RuneLen(r); l > 0 {
			n += uint32(l)
		} else {
			n++
		}
	}
	return n
}

// applyRange replaces a UTF-16 range of text.
func applyRange(text string, r protocol.Range, with string) string {
	offset := func(p protocol.Position) int {
		start := 0
		for i := uint32(0); i < p.Line; i++ {
			j := strings.IndexByte(text[start:], '\n')
			if j < 0 {
				return len(text)
			}
			start += j + 1
		}
		line := text[start:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		return start + byteOffset(line, p.Character)
	}
	a, b := offset(r.Start), offset(r.End)
	if a > b {
		a, b = b, a
	}
	return text[:a] + with + text[b:]
}
