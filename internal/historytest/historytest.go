// Package historytest changes a copy of an OpenCode history the way OpenCode
// writes it, for tests: every change to a session's rows comes with an event
// of that session, in the same transaction (OpenCode's projector writes the
// row and the event together). A sync after a write reads the changes from
// those events; a test that writes without them plays a writer OpenCode is
// not, which only a listing of every session finds. Recall itself never
// writes a history.
package historytest

import (
	"context"
	"database/sql"
	"fmt"
)

// Execer runs a statement: a *sql.DB, *sql.Conn or *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// AppendEvent appends an event of type typ ("session.updated.1",
// "message.part.updated.1") of session sid.
func AppendEvent(ctx context.Context, x Execer, sid, typ string) error {
	if _, err := x.ExecContext(ctx, `INSERT INTO event_sequence(aggregate_id, seq) VALUES (?, 0)
		ON CONFLICT(aggregate_id) DO UPDATE SET seq = seq + 1`, sid); err != nil {
		return fmt.Errorf("event of %s: %w", sid, err)
	}
	if _, err := x.ExecContext(ctx, `INSERT INTO event(id, aggregate_id, seq, type, data)
		SELECT 'evt_test' || hex(randomblob(8)), ?, seq, ?, '{}' FROM event_sequence WHERE aggregate_id = ?`, sid, typ, sid); err != nil {
		return fmt.Errorf("event of %s: %w", sid, err)
	}
	return nil
}

// Write runs query with args and an event of type typ of session sid, in
// one transaction.
func Write(db *sql.DB, sid, typ, query string, args ...any) error {
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("%s: %w", query, err)
	}
	if err := AppendEvent(ctx, tx, sid, typ); err != nil {
		return err
	}
	return tx.Commit()
}

// Rename renames session sid as OpenCode does: its title, a later
// time_updated, and its session.updated event.
func Rename(db *sql.DB, sid, title string) error {
	return Write(db, sid, "session.updated.1", `UPDATE session SET title = ?, time_updated = time_updated + 1 WHERE id = ?`, title, sid)
}
