package lsp

import (
	"context"
	"os"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// maxDiskDoc bounds a file read from disk for a hover on a document the
// client never opened.
const maxDiskDoc = 4 << 20

// didOpen keeps an opened document's text (hovers read it).
func (s *Server) didOpen(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidOpenTextDocumentParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.setDoc(p.TextDocument.URI, p.TextDocument.Text)
	return nil
}

// didChange applies a document's changes.
func (s *Server) didChange(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidChangeTextDocumentParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.applyChanges(p.TextDocument.URI, p.ContentChanges)
	return nil
}

// didClose forgets a document.
func (s *Server) didClose(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidCloseTextDocumentParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.docs, p.TextDocument.URI)
	s.mu.Unlock()
	return nil
}

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
