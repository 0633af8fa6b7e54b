package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
)

// Titles returns the title of each session of ids that the index holds, in
// one query per 500 ids (a page of hits names a handful of sessions).
func (ix *Index) Titles(ctx context.Context, ids []string) (map[string]string, error) {
	return ix.sessionsColumn(ctx, "title", ids)
}

// StampsOf is Stamps for the sessions of ids that the index holds (a sync
// after a write reads the few it is to compare, not every one).
func (ix *Index) StampsOf(ctx context.Context, ids []string) (map[string]string, error) {
	return ix.sessionsColumn(ctx, "stamp", ids)
}

// sessionsColumn reads one text column of the sessions of ids the index
// holds, by id, in one query per 500 ids.
func (ix *Index) sessionsColumn(ctx context.Context, col string, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for start := 0; start < len(ids); start += 500 {
		batch := ids[start:min(start+500, len(ids))]
		rows, err := ix.db.QueryContext(ctx, `SELECT id, `+col+` FROM sessions WHERE id IN `+inList(len(batch)), anys(batch)...)
		if err != nil {
			return nil, fmt.Errorf("read session %ss: %w", col, err)
		}
		for rows.Next() {
			var id, v string
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read session %ss: %w", col, err)
			}
			out[id] = v
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read session %ss: %w", col, err)
		}
	}
	return out, nil
}

// RootOf returns the top-level session of id's subagent family (ok false
// when the index does not hold id).
func (ix *Index) RootOf(ctx context.Context, id string) (root string, ok bool, err error) {
	err = ix.db.QueryRowContext(ctx, `SELECT root_id FROM sessions WHERE id = ?`, id).Scan(&root)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read session %s: %w", id, err)
	}
	return root, true, nil
}

// Counts are the rows the index holds, for status.
type Counts struct {
	Sessions, Messages, Parts, Documents int
}

// Counts counts the index's sessions, messages, parts and documents.
func (ix *Index) Counts(ctx context.Context) (Counts, error) {
	var c Counts
	var kept, docsKept int
	// From the counts meta keeps (flushCounts, flushDocCount), in one
	// statement (one snapshot); counted in an index that does not keep them.
	err := ix.queryRow(ctx, `SELECT count(*) FILTER (WHERE key = ?1), count(*) FILTER (WHERE key = ?5),
		coalesce(max(CAST(value AS INTEGER)) FILTER (WHERE key = ?2), 0), coalesce(max(CAST(value AS INTEGER)) FILTER (WHERE key = ?3), 0),
		coalesce(max(CAST(value AS INTEGER)) FILTER (WHERE key = ?4), 0), coalesce(max(CAST(value AS INTEGER)) FILTER (WHERE key = ?5), 0)
		FROM meta WHERE key IN (?1, ?2, ?3, ?4, ?5)`, countsKept, countKey+countSessions, countKey+countMessages, countKey+countParts, "doc_count").
		Scan(&kept, &docsKept, &c.Sessions, &c.Messages, &c.Parts, &c.Documents)
	if err != nil {
		return c, fmt.Errorf("read index: %w", err)
	}
	if kept > 0 && docsKept > 0 {
		return c, nil
	}
	err = ix.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages),
		(SELECT count(*) FROM parts), (SELECT count(*) FROM docs)`).Scan(&c.Sessions, &c.Messages, &c.Parts, &c.Documents)
	if err != nil {
		return c, fmt.Errorf("read index: %w", err)
	}
	return c, nil
}

// Stamps returns the sync stamp stored with each indexed session (see
// SessionMeta.Stamp), by session id.
func (ix *Index) Stamps(ctx context.Context) (map[string]string, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT id, stamp FROM sessions`)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, st string
		if err := rows.Scan(&id, &st); err != nil {
			return nil, fmt.Errorf("read index: %w", err)
		}
		out[id] = st
	}
	return out, rows.Err()
}

// MessageSession returns the session a message belongs to (ok false when
// the index does not hold the message).
func (ix *Index) MessageSession(ctx context.Context, messageID string) (sessionID string, ok bool, err error) {
	err = ix.db.QueryRowContext(ctx, `SELECT session_id FROM messages WHERE id = ? LIMIT 1`, messageID).Scan(&sessionID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("look up %s: %w", messageID, err)
	}
	return sessionID, true, nil
}

// PartLocation returns the session and message a part belongs to (ok false
// when the index does not hold the part).
func (ix *Index) PartLocation(ctx context.Context, partID string) (sessionID, messageID string, ok bool, err error) {
	err = ix.db.QueryRowContext(ctx, `SELECT session_id, message_id FROM parts WHERE id = ? LIMIT 1`, partID).Scan(&sessionID, &messageID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", "", false, nil
	case err != nil:
		return "", "", false, fmt.Errorf("look up %s: %w", partID, err)
	}
	return sessionID, messageID, true, nil
}

// Forgotten is the set of sessions the user asked Recall to forget
// (Writer.Forget); a sync leaves them, and their subagents, out.
func (ix *Index) Forgotten(ctx context.Context) (map[string]bool, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT session_id FROM forgotten`)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read index: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// Origins keys each top-level session by where its history began: its
// first message's creation time (ms) and its first prompt. OpenCode 1.18
// records no link from a fork to its source (tools/ocgen/opencode-db.md
// §7): a fork is a new top-level session holding copies of the source's
// first messages under new ids, each keeping its original time.created.
// So sessions with the same origin were forked one from the other, or
// both from a third. Sessions without a first prompt have none.
func (ix *Index) Origins(ctx context.Context) (map[string]string, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT s.id, s.first_prompt, m.created FROM sessions s
		JOIN messages m ON m.session_id = s.id AND m.ord = 0 WHERE s.parent_id = '' AND s.first_prompt <> ''`)
	if err != nil {
		return nil, fmt.Errorf("read session origins: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, prompt string
		var created int64
		if err := rows.Scan(&id, &prompt, &created); err != nil {
			return nil, fmt.Errorf("read session origins: %w", err)
		}
		sum := sha256.Sum256([]byte(prompt))
		out[id] = fmt.Sprintf("%d:%x", created, sum[:12])
	}
	return out, rows.Err()
}
