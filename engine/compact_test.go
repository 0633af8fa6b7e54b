package engine

import (
	"context"
	"testing"
)

// A cold index is merged into one full-text segment: FTS5 leaves a bulk
// load as a segment or more per transaction, and a match reads each
// segment's part of every term (5% of search p95 on the benchmark
// history).
func TestColdIndexIsOneSegment(t *testing.T) {
	defer func(n int) { commitEvery = n }(commitEvery)
	commitEvery = 5                                           // many transactions on a small history
	e := openAt(t, fixture(t, "v1"), t.TempDir()+"/index.db") // syncs
	db := rawIndex(t, e)
	var parts, segs int
	if err := db.QueryRow(`SELECT count(*) FROM parts`).Scan(&parts); err != nil {
		t.Fatal(err)
	}
	if parts < 4*commitEvery {
		t.Fatalf("the sync wrote %d parts, too few for several transactions", parts)
	}
	if err := db.QueryRow(`SELECT count(DISTINCT segid) FROM docs_fts_idx`).Scan(&segs); err != nil {
		t.Fatal(err)
	}
	if segs != 1 {
		t.Errorf("the cold index holds %d full-text segments, want 1", segs)
	}
	// And it still answers.
	r, err := e.Search(context.Background(), SearchParams{Query: "currency", Limit: 3})
	if err != nil || len(r.Hits) == 0 {
		t.Fatalf("search after compaction: %d hits, %v", len(r.Hits), err)
	}
}
