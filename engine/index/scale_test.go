package index

import (
	"context"
	"strconv"
	"testing"
)

// The document count a search weighs terms by is kept in meta by every
// write, so a search never counts the docs table (a walk of it, in
// proportion to the index, on every CLI process); adds, deletes and an
// index written before the count was kept all agree with count(*).
func TestDocCountKeptByWrites(t *testing.T) {
	ctx := context.Background()
	ix := testIndex(t)
	counted := func() int {
		t.Helper()
		var n int
		if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	kept := func() string {
		t.Helper()
		v, err := ix.Meta(ctx, "doc_count")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(when string) {
		t.Helper()
		n, err := ix.DocCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := counted(); n != want || n == 0 {
			t.Fatalf("%s: DocCount = %d, count(*) = %d", when, n, want)
		}
	}
	if kept() == "" {
		t.Fatal("a write left no doc_count in meta")
	}
	check("after the first write")

	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.DeleteSession(ctx, "ses_other"); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	check("after a delete")

	// An index from before the count: the next write counts once.
	if _, err := ix.db.ExecContext(ctx, `DELETE FROM meta WHERE key = 'doc_count'`); err != nil {
		t.Fatal(err)
	}
	check("with no count kept")
	w, err = ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.DeleteSession(ctx, "ses_child"); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if kept() == "" {
		t.Fatal("a write to an index without doc_count did not start it")
	}
	check("after a write to an index without a count")
}

// DF reads one term's frequency; a term the vocabulary lacks is 0.
func TestDFPointLookup(t *testing.T) {
	ctx := context.Background()
	ix := testIndex(t)
	terms, df, err := ix.Vocabulary(ctx)
	if err != nil || len(terms) == 0 {
		t.Fatalf("vocabulary: %v (%d terms)", err, len(terms))
	}
	for i, term := range terms {
		n, err := ix.DF(ctx, term)
		if err != nil || n != df[i] {
			t.Fatalf("DF(%q) = %d, %v; vocabulary says %d", term, n, err, df[i])
		}
	}
	if n, err := ix.DF(ctx, "zzzunknownzzz"); err != nil || n != 0 {
		t.Fatalf("DF of an unknown term = %d, %v", n, err)
	}
}

// An index written before doc_count was kept gets it at its next open.
func TestOpenStartsDocCount(t *testing.T) {
	ctx := context.Background()
	ix := testIndex(t)
	var want int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.db.ExecContext(ctx, `DELETE FROM meta WHERE key = 'doc_count'`); err != nil {
		t.Fatal(err)
	}
	path := ix.Path()
	ix.Close()
	ix2 := openIndex(t, path)
	defer ix2.Close()
	v, err := ix2.Meta(ctx, "doc_count")
	if err != nil || v != strconv.Itoa(want) {
		t.Fatalf("doc_count after open = %q, %v; the index has %d docs", v, err, want)
	}
}

// ReleaseMemory closes the idle connections (their page caches); the index
// still answers afterwards.
func TestReleaseMemoryClosesIdleConnections(t *testing.T) {
	ctx := context.Background()
	ix := testIndex(t)
	if _, err := ix.DocCount(ctx); err != nil {
		t.Fatal(err)
	}
	if ix.db.Stats().Idle == 0 {
		t.Fatal("no idle connection to release after a query")
	}
	ix.ReleaseMemory()
	if n := ix.db.Stats().Idle; n != 0 {
		t.Fatalf("%d idle connections after ReleaseMemory", n)
	}
	if n, err := ix.DocCount(ctx); err != nil || n == 0 {
		t.Fatalf("after ReleaseMemory: DocCount = %d, %v", n, err)
	}
}
