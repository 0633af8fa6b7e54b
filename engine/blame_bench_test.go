package engine

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// BenchmarkBlameBusiestFile blames the file most sessions touched in the
// benchmark history (RECALL_BENCH_DB/INDEX): on the 7,799-session clone,
// dispatcher.go, touched by 953 sessions with 1,335 recorded changes, so
// the session and change budgets bind. The file's text is made of the
// newest changes' blocks, so most lines match something.
func BenchmarkBlameBusiestFile(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+e.IndexPath()+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	var path string
	err = db.QueryRow(`SELECT path FROM file_touches WHERE path LIKE '/%' GROUP BY path ORDER BY count(*) DESC LIMIT 1`).Scan(&path)
	db.Close()
	if err != nil {
		b.Fatal(err)
	}
	fc, err := e.shards[0].fileCalls(ctx, path, true)
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	for i := len(fc.changes) - 1; i >= 0 && len(lines) < 400; i-- {
		for _, bl := range fc.changes[i].blocks {
			lines = append(lines, bl.Lines...)
		}
	}
	text := strings.Join(lines, "\n") + "\n"
	b.ResetTimer()
	var res BlameResult
	for i := 0; i < b.N; i++ {
		if res, err = e.Blame(ctx, BlameOptions{Path: path, Text: text, HasText: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Edits), "edits")
	b.ReportMetric(float64(res.Lines), "lines")
	b.ReportMetric(float64(res.Attributed), "attributed")
	b.Logf("%s: %d changes read, %d of %d lines attributed, %d ranges, notices %v", path, res.Edits, res.Attributed, res.Lines, len(res.Ranges), res.Notices)
}
