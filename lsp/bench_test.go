package lsp

import (
	"encoding/json"
	"testing"

	"github.com/recallhq/recall/engine"
)

// The server's overhead per request: the same search and read through the
// in-process LSP server (JSON-RPC framing over net.Pipe, param decoding,
// the command table, result encoding) and as a direct engine call.
//
//	go test ./lsp -run '^$' -bench . -count 6
func BenchmarkSearch(b *testing.B) {
	s, eng := benchSession(b)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := eng.Search(s.ctx, engine.SearchParams{Query: "rounding drift invoice", Limit: 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lsp", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.call("recall/search", map[string]any{"query": "rounding drift invoice", "limit": 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkRead(b *testing.B) {
	s, eng := benchSession(b)
	raw, err := s.call("recall/search", map[string]any{"query": "ERR_QUOTA_7731", "limit": 1})
	if err != nil {
		b.Fatal(err)
	}
	var res engine.SearchResult
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Hits) == 0 {
		b.Fatalf("no hit to read: %s", raw)
	}
	cursor := res.Hits[0].Cursor
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := eng.Read(s.ctx, engine.ReadParams{Cursor: cursor, Format: "chatml"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lsp", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.call("recall/read", map[string]any{"cursor": cursor, "format": "chatml"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchSession(b *testing.B) (*session, *engine.Engine) {
	s := startSession(b, sessionOptions{})
	eng, err := s.server.engine()
	if err != nil {
		b.Fatal(err)
	}
	return s, eng
}
