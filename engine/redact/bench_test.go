package redact

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/source/opencode"
)

// benchHistories are real OpenCode histories: the public corpus (code,
// logs, diffs, prose) and the two secrets fixtures.
var benchHistories = []string{
	filepath.Join("..", "..", "testdata", "corpus", "public", "opencode.db"),
	filepath.Join("..", "..", "testdata", "opencode", "secrets", "opencode.db"),
	filepath.Join("..", "..", "testdata", "opencode", "secrets2", "opencode.db"),
}

// historyTexts is every text the index redacts from those histories:
// titles, prose, reasoning, tool inputs, outputs and errors.
func historyTexts(tb testing.TB) (texts []string, bytes int64) {
	tb.Helper()
	ctx := context.Background()
	for _, path := range benchHistories {
		if _, err := os.Stat(path); err != nil {
			tb.Fatalf("benchmark history: %v", err)
		}
		src, err := opencode.Open(ctx, path)
		if err != nil {
			tb.Fatal(err)
		}
		sessions, err := src.Sessions(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		for _, s := range sessions {
			texts = append(texts, s.Title)
			err := src.Messages(ctx, s, func(m *model.Message) error {
				for _, p := range m.Parts {
					for _, t := range []string{p.Text, p.Input, p.Output, p.Error} {
						if t != "" {
							texts = append(texts, t)
						}
					}
				}
				return nil
			})
			if err != nil {
				tb.Fatal(err)
			}
		}
		src.Close()
	}
	for _, t := range texts {
		bytes += int64(len(t))
	}
	return texts, bytes
}

// BenchmarkRedact reports redaction throughput (MB/s) and the cost per
// text on real history; make bench prints its MB/s.
func BenchmarkRedact(b *testing.B) {
	texts, n := historyTexts(b)
	r, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range texts { // compile the rules the texts need, once
		r.Redact(t)
	}
	b.SetBytes(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, t := range texts {
			r.Redact(t)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(texts)), "µs/text")
}
