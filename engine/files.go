package engine

import (
	"context"
	"path/filepath"
)

// Files limits.
const (
	// DefaultFileSessionsLimit is how many sessions a file lookup lists; an
	// editor lens names a handful, the count says how many there are.
	DefaultFileSessionsLimit = 20
	// MaxFileSessionsLimit bounds one file lookup.
	MaxFileSessionsLimit = 200
)

// FileSessionsResult lists the sessions that touched one file.
type FileSessionsResult struct {
	Path     string        `json:"path"`
	Total    int           `json:"total"` // every top-level session that touched the file
	Sessions []SessionInfo `json:"sessions"`
}

// FileSessions lists the top-level sessions whose tools read, edited or
// patched path, newest first: one indexed lookup, cheap enough for an editor
// to ask on every opened file. A relative path is made absolute first (tools
// record absolute paths).
func (e *Engine) FileSessions(ctx context.Context, path string, limit int) (FileSessionsResult, error) {
	if limit <= 0 {
		limit = DefaultFileSessionsLimit
	}
	limit = min(limit, MaxFileSessionsLimit)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	res := FileSessionsResult{Path: path, Sessions: []SessionInfo{}}
	rows, total, err := e.ix.SessionsTouching(ctx, path, limit)
	if err != nil {
		return res, err
	}
	res.Total = total
	for _, s := range rows {
		res.Sessions = append(res.Sessions, e.sessionInfo(s, nil))
	}
	return res, nil
}
