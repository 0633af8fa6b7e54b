package index

import (
	"context"
	"fmt"
	"testing"
)

// The statement cache holds at most maxStmts statements; a query past
// that runs ad hoc and answers the same, and Close closes what it holds.
func TestStatementCacheIsBounded(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	for i := range maxStmts + 10 {
		var n int
		if err := ix.queryRow(ctx, fmt.Sprintf(`SELECT %d + count(*) FROM meta`, i)).Scan(&n); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		if n < i {
			t.Fatalf("query %d answered %d", i, n)
		}
	}
	if got := len(ix.stmts.m); got != maxStmts {
		t.Errorf("the cache holds %d statements, want %d", got, maxStmts)
	}
	// A cached statement answers again, and a bad one reports its error.
	if _, err := ix.DF(ctx, "connection"); err != nil {
		t.Fatal(err)
	}
	if err := ix.queryRow(ctx, `SELECT nope FROM nowhere`).Scan(new(int)); err == nil {
		t.Error("a statement that cannot be prepared answered")
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if ix.stmts.m != nil {
		t.Error("Close left statements open")
	}
}
