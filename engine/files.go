package engine

import (
	"context"
	"path/filepath"
	"sort"

	"github.com/recallhq/recall/engine/index"
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
	// Pitfalls are errors those sessions hit in the file, newest first
	// (see Blame).
	Pitfalls []Pitfall `json:"pitfalls"`
}

// FileSessions lists the top-level sessions whose tools read, edited or
// patched path, newest first: one indexed lookup per source, cheap enough
// for an editor to ask on every opened file. A relative path is made absolute first (tools
// record absolute paths).
func (e *Engine) FileSessions(ctx context.Context, path string, limit int, sources ...string) (FileSessionsResult, error) {
	if limit <= 0 {
		limit = DefaultFileSessionsLimit
	}
	limit = min(limit, MaxFileSessionsLimit)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	res := FileSessionsResult{Path: path, Sessions: []SessionInfo{}, Pitfalls: []Pitfall{}}
	shs, err := e.shardsFor(sources)
	if err != nil {
		return res, err
	}
	per := make([][]index.SessionRow, len(shs))
	totals := make([]int, len(shs))
	calls := make([]fileCalls, len(shs))
	if err := eachShard(shs, func(i int, sh *shard) error {
		var err error
		if per[i], totals[i], err = sh.ix.SessionsTouching(ctx, path, limit); err != nil || totals[i] == 0 {
			return err
		}
		calls[i], err = sh.fileCalls(ctx, path, false)
		return err
	}); err != nil {
		return res, err
	}
	var rows []shardRow
	for i, rs := range per {
		res.Total += totals[i]
		res.Pitfalls = append(res.Pitfalls, calls[i].pitfalls...)
		for _, r := range rs {
			rows = append(rows, shardRow{sh: shs[i], SessionRow: r})
		}
	}
	if len(shs) > 1 {
		sort.SliceStable(rows, func(a, b int) bool { return rows[a].Updated > rows[b].Updated })
		rows = rows[:min(len(rows), limit)]
	}
	for _, s := range rows {
		res.Sessions = append(res.Sessions, e.sessionInfo(s.sh, s.SessionRow, nil))
	}
	res.Pitfalls = sortPitfalls(res.Pitfalls)
	return res, nil
}
