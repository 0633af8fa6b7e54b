package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// FilePart is a tool call of a session that touched a file, as indexed
// (input, output and error bounded and redacted).
type FilePart struct {
	SessionID, RootID, MessageID, PartID string
	// Session is the part's session row (title, directory, era).
	Session              SessionRow
	MsgOrd, Ord          int
	Tool, Status         string
	Input, Output, Error string
	ExitCode             *int
	Paths                []string
	Created              int64
}

// FileParts lists the tool calls of the newest sessions (at most
// sessionLimit, subagent sessions counted on their own) that touched path,
// in session then display order: what blame and pitfalls read. Only the
// calls that can matter are returned: those of tools in tools, and failed
// calls of any tool.
func (ix *Index) FileParts(ctx context.Context, path string, sessionLimit int, tools []string) ([]FilePart, error) {
	args := []any{path, sessionLimit}
	marks := make([]string, len(tools))
	for i, t := range tools {
		marks[i] = "?"
		args = append(args, t)
	}
	inTools := "0"
	if len(tools) > 0 {
		inTools = "p.tool IN (" + strings.Join(marks, ",") + ")"
	}
	// The session row comes along (one query, not one per session: 100
	// lookups were a quarter of a blame's time on the benchmark history).
	rows, err := ix.db.QueryContext(ctx, `SELECT t.session_id, t.root_id, p.message_id, p.id, p.msg_ord, p.ord, p.tool, p.status,
		p.input, p.output, p.error, p.exit_code, p.paths, p.created,
		s.id, s.root_id, s.parent_id, s.project_id, s.directory, s.title, s.era
		FROM (SELECT session_id, root_id FROM file_touches WHERE path = ? ORDER BY time DESC LIMIT ?) t
		JOIN parts p ON p.session_id = t.session_id
		JOIN sessions s ON s.id = t.session_id
		WHERE p.kind = 'tool' AND (`+inTools+` OR p.status = 'error')
		ORDER BY t.session_id, p.msg_ord, p.ord`, args...)
	if err != nil {
		return nil, fmt.Errorf("read file tool calls: %w", err)
	}
	defer rows.Close()
	var out []FilePart
	for rows.Next() {
		var p FilePart
		var paths string
		var exit sql.NullInt64
		if err := rows.Scan(&p.SessionID, &p.RootID, &p.MessageID, &p.PartID, &p.MsgOrd, &p.Ord, &p.Tool, &p.Status,
			&p.Input, &p.Output, &p.Error, &exit, &paths, &p.Created,
			&p.Session.ID, &p.Session.RootID, &p.Session.ParentID, &p.Session.ProjectID, &p.Session.Directory, &p.Session.Title, &p.Session.Era); err != nil {
			return nil, fmt.Errorf("read file tool calls: %w", err)
		}
		if exit.Valid {
			code := int(exit.Int64)
			p.ExitCode = &code
		}
		if paths != "" {
			p.Paths = strings.Split(paths, "\n")
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
