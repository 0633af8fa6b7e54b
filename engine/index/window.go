package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine/model"
)

// SessionRow is a session as the index lists it.
type SessionRow struct {
	ID, RootID, ParentID, ProjectID, Directory, Title, Agent, Era, FirstPrompt string
	Created, Updated, Archived                                                 int64
	Messages, Turns, ToolCalls                                                 int
}

const sessionCols = `id, root_id, parent_id, project_id, directory, title, agent, era, first_prompt, created, updated, archived, messages, turns, tool_calls`

func scanSession(sc interface{ Scan(...any) error }) (SessionRow, error) {
	var s SessionRow
	err := sc.Scan(&s.ID, &s.RootID, &s.ParentID, &s.ProjectID, &s.Directory, &s.Title, &s.Agent, &s.Era, &s.FirstPrompt,
		&s.Created, &s.Updated, &s.Archived, &s.Messages, &s.Turns, &s.ToolCalls)
	return s, err
}

// ErrNoSession is returned when a session is not in the index.
var ErrNoSession = errors.New("session not in the index")

// Session reads one session row.
func (ix *Index) Session(ctx context.Context, id string) (SessionRow, error) {
	s, err := scanSession(ix.db.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("%w: %s", ErrNoSession, id)
	}
	return s, err
}

// SessionQuery selects sessions for a listing.
type SessionQuery struct {
	Parent        string // "" = top-level sessions
	AnyLevel      bool   // ignore Parent: every session
	Directory     string
	After, Before int64 // on updated
	// Keyset: sessions after (AfterUpdated, AfterID) in the listing's
	// order: older, or as old with a greater id. AfterTies changes what
	// "as old" keeps, for a listing merged with other indexes' (the
	// engine's shards): TiesNone keeps none, TiesAll every one.
	AfterUpdated int64
	AfterID      string
	AfterTies    Ties
	Limit        int // 0 = no limit
}

// Ties says which sessions as old as a keyset position come after it.
type Ties int

// The keyset tie rules.
const (
	TiesByID Ties = iota // those with a greater id (one index's own listing)
	TiesNone             // none: the position is in an index listed after this one
	TiesAll              // all: it is in an index listed before this one
)

// Sessions lists sessions newest first. With a limit it reads only that
// many rows through the (updated, id) index.
func (ix *Index) Sessions(ctx context.Context, q SessionQuery) ([]SessionRow, error) {
	var conds []string
	var args []any
	if !q.AnyLevel {
		conds = append(conds, `parent_id = ?`)
		args = append(args, q.Parent)
	}
	if q.Directory != "" {
		dir := strings.TrimRight(q.Directory, "/")
		conds = append(conds, `(directory = ? OR substr(directory, 1, ?) = ?)`)
		args = append(args, dir, len(dir)+1, dir+"/")
	}
	if q.After != 0 {
		conds = append(conds, `updated >= ?`)
		args = append(args, q.After)
	}
	if q.Before != 0 {
		conds = append(conds, `updated < ?`)
		args = append(args, q.Before)
	}
	switch {
	case q.AfterTies == TiesNone:
		conds = append(conds, `updated < ?`)
		args = append(args, q.AfterUpdated)
	case q.AfterTies == TiesAll:
		conds = append(conds, `updated <= ?`)
		args = append(args, q.AfterUpdated)
	case q.AfterID != "":
		conds = append(conds, `(updated < ? OR (updated = ? AND id > ?))`)
		args = append(args, q.AfterUpdated, q.AfterUpdated, q.AfterID)
	}
	sqlText := `SELECT ` + sessionCols + ` FROM sessions`
	if len(conds) > 0 {
		sqlText += ` WHERE ` + strings.Join(conds, " AND ")
	}
	sqlText += ` ORDER BY updated DESC, id`
	if q.Limit > 0 {
		sqlText += fmt.Sprintf(` LIMIT %d`, q.Limit)
	}
	rows, err := ix.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []SessionRow
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Children lists the sessions whose parent is one of ids, keyed by parent.
func (ix *Index) Children(ctx context.Context, ids []string) (map[string][]SessionRow, error) {
	out := map[string][]SessionRow{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE parent_id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`) ORDER BY created, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list subagent sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out[s.ParentID] = append(out[s.ParentID], s)
	}
	return out, rows.Err()
}

// MessageOrd finds a message's position in its session.
func (ix *Index) MessageOrd(ctx context.Context, sessionID, messageID string) (int, error) {
	var ord int
	err := ix.db.QueryRowContext(ctx, `SELECT ord FROM messages WHERE session_id = ? AND id = ?`, sessionID, messageID).Scan(&ord)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: message %s", ErrNoSession, messageID)
	}
	return ord, err
}

// MessageIDAt returns the id of the message at ord.
func (ix *Index) MessageIDAt(ctx context.Context, sessionID string, ord int) (string, error) {
	var id string
	err := ix.db.QueryRowContext(ctx, `SELECT id FROM messages WHERE session_id = ? AND ord = ?`, sessionID, ord).Scan(&id)
	return id, err
}

// Window reads messages first..last (inclusive, by ord) with their parts.
// It touches only those rows, however long the session is.
func (ix *Index) Window(ctx context.Context, sessionID string, first, last int) ([]model.Message, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT id, ord, role, created, completed, agent, model, finish, error, summary, parent_id
		FROM messages WHERE session_id = ? AND ord BETWEEN ? AND ? ORDER BY ord`, sessionID, first, last)
	if err != nil {
		return nil, fmt.Errorf("read window: %w", err)
	}
	var msgs []model.Message
	pos := map[int]int{}
	for rows.Next() {
		var m model.Message
		var summary int
		if err := rows.Scan(&m.ID, &m.Ord, &m.Role, &m.Created, &m.Completed, &m.Agent, &m.Model, &m.Finish, &m.Error, &summary, &m.ParentID); err != nil {
			rows.Close()
			return nil, err
		}
		m.SessionID, m.Summary = sessionID, summary != 0
		pos[m.Ord] = len(msgs)
		msgs = append(msgs, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	prow, err := ix.db.QueryContext(ctx, `SELECT msg_ord, id, message_id, type, kind, synthetic, text, text_len, tool, call_id, status, title,
		input, output, output_len, error, truncated, compacted, exit_code, paths, created
		FROM parts WHERE session_id = ? AND msg_ord BETWEEN ? AND ? ORDER BY msg_ord, ord`, sessionID, first, last)
	if err != nil {
		return nil, fmt.Errorf("read window: %w", err)
	}
	defer prow.Close()
	for prow.Next() {
		var p model.Part
		var ord int
		var kind, paths string
		var synthetic, truncated, compacted int
		var exit sql.NullInt64
		if err := prow.Scan(&ord, &p.ID, &p.MessageID, &p.Type, &kind, &synthetic, &p.Text, &p.TextLen, &p.Tool, &p.CallID,
			&p.Status, &p.Title, &p.Input, &p.Output, &p.OutputLen, &p.Error, &truncated, &compacted, &exit, &paths, &p.Created); err != nil {
			return nil, err
		}
		p.SessionID, p.Kind = sessionID, model.Kind(kind)
		p.Synthetic, p.Truncated, p.Compacted = synthetic != 0, truncated != 0, compacted != 0
		if exit.Valid {
			code := int(exit.Int64)
			p.ExitCode = &code
		}
		if paths != "" {
			p.Paths = strings.Split(paths, "\n")
		}
		if i, ok := pos[ord]; ok {
			msgs[i].Parts = append(msgs[i].Parts, p)
		}
	}
	return msgs, prow.Err()
}

// SessionsTouching lists sessions that read, edited or patched path, newest
// first (for "N past sessions touched this file").
func (ix *Index) SessionsTouching(ctx context.Context, path string, limit int) ([]SessionRow, int, error) {
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(DISTINCT root_id) FROM file_touches WHERE path = ?`, path).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("count file sessions: %w", err)
	}
	if n == 0 || limit == 0 {
		return nil, n, nil
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id IN
		(SELECT root_id FROM file_touches WHERE path = ?) ORDER BY updated DESC LIMIT ?`, path, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list file sessions: %w", err)
	}
	defer rows.Close()
	var out []SessionRow
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, s)
	}
	return out, n, rows.Err()
}
