package opencode

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// benchRows are the message and part JSON rows of RECALL_BENCH_DB (make
// bench's clone), else of the v1 fixture: what a cold sync decodes.
type benchRows struct {
	msgs, parts [][]byte
}

func loadBenchRows(tb testing.TB, path string) benchRows {
	tb.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	var r benchRows
	for q, dst := range map[string]*[][]byte{`SELECT data FROM message`: &r.msgs, `SELECT data FROM part`: &r.parts} {
		rows, err := s.db.QueryContext(context.Background(), q)
		if err != nil {
			tb.Fatal(err)
		}
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				tb.Fatal(err)
			}
			*dst = append(*dst, b)
		}
		rows.Close()
	}
	return r
}

func benchDB() string {
	if db := os.Getenv("RECALL_BENCH_DB"); db != "" {
		return db
	}
	return filepath.Join("..", "..", "..", "testdata", "opencode", "v1", "opencode.db")
}

// BenchmarkDecodeV1 is the JSON decoding of a cold sync, per part row
// (messages included, one per part row on average's share).
func BenchmarkDecodeV1(b *testing.B) {
	r := loadBenchRows(b, benchDB())
	s := &Source{}
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		for _, m := range r.msgs {
			s.decodeMessage("ses", "msg", 0, m)
		}
		for _, p := range r.parts {
			s.decodePart("ses", "msg", "prt", p)
		}
		n += len(r.parts)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "parts/s")
}
