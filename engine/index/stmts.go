package index

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps the search path's statements prepared: SQLite parses
// and plans a statement on every ad hoc query, 4.6% of a search's CPU on
// the benchmark history (most of it the candidate query, whose text
// depends only on the filter's shape). database/sql prepares a cached
// statement again on each connection it runs on.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// maxStmts bounds the cache: statements whose text grows with their
// arguments (IN lists) would otherwise fill it.
const maxStmts = 64

// stmt returns the prepared statement for q, or nil when the cache is full
// or the statement cannot be prepared (the caller runs q ad hoc, which
// reports the error).
func (ix *Index) stmt(ctx context.Context, q string) *sql.Stmt {
	c := &ix.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[q]; ok {
		return s
	}
	if len(c.m) >= maxStmts {
		return nil
	}
	s, err := ix.db.PrepareContext(ix.readContext(ctx), q)
	if err != nil {
		return nil
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[q] = s
	return s
}

// readContext is the context a read statement runs with. A statement
// whose context can be cancelled costs two goroutines, database/sql's that
// closes its rows and the driver's that interrupts SQLite, each started
// and stopped per statement: 40 page faults and 3 ms of a 57 ms CLI search
// at 845k parts (docs/benchmarks.md). A process that runs one command
// (Options.OneCommand) runs its reads without the cancellation: each
// statement there is bounded (the match window, the candidate limit), and
// a Ctrl-C stops the command at the next statement or loop that checks
// its context. A server keeps it: a request cancelled mid-statement stops
// there.
func (ix *Index) readContext(ctx context.Context) context.Context {
	if ix.uncancelled {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// query is db.QueryContext through the statement cache.
func (ix *Index) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx = ix.readContext(ctx)
	if s := ix.stmt(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return ix.db.QueryContext(ctx, q, args...)
}

// queryRow is db.QueryRowContext through the statement cache.
func (ix *Index) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	ctx = ix.readContext(ctx)
	if s := ix.stmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return ix.db.QueryRowContext(ctx, q, args...)
}

// closeStmts closes the cached statements (before the handle closes).
func (ix *Index) closeStmts() {
	c := &ix.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		s.Close()
	}
	c.m = nil
}

// txQuery is tx.QueryContext, through the statement cache in a
// long-running process (see txStmt).
func (ix *Index) txQuery(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	ctx = ix.readContext(ctx)
	if s := ix.txStmt(ctx, tx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return tx.QueryContext(ctx, q, args...)
}

// txQueryRow is tx.QueryRowContext, through the statement cache in a
// long-running process (see txStmt).
func (ix *Index) txQueryRow(ctx context.Context, tx *sql.Tx, q string, args ...any) *sql.Row {
	ctx = ix.readContext(ctx)
	if s := ix.txStmt(ctx, tx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, q, args...)
}

// txStmt is q's cached statement on tx, or nil in a process that runs one
// command (Options.OneCommand), which runs each statement once: the cache
// prepares a statement on a connection of its own choosing, and the
// transaction's connection prepares it again, 0.4 to 0.7 ms of a CLI
// search in all.
func (ix *Index) txStmt(ctx context.Context, tx *sql.Tx, q string) *sql.Stmt {
	if ix.uncancelled {
		return nil
	}
	if s := ix.stmt(ctx, q); s != nil {
		return tx.StmtContext(ctx, s)
	}
	return nil
}
