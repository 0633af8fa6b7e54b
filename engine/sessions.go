package engine

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sahilm/fuzzy"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/render"
)

// Sessions limits.
const (
	DefaultSessionsLimit = 20
	MaxSessionsLimit     = 200
)

// SessionsParams is one listing.
type SessionsParams struct {
	Filter        string // fuzzy on titles
	Directory     string
	After, Before int64 // on last activity, Unix ms
	Parent        string
	Limit         int
	Cursor        string
	Sources       []string // only these sources (nil: all)
}

// SessionRef names a related session.
type SessionRef struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Source string `json:"source"`
}

// SessionInfo is a session as listings show it.
type SessionInfo struct {
	ID          string       `json:"id"`
	Title       string       `json:"title"`
	Directory   string       `json:"directory"`
	ProjectID   string       `json:"projectId,omitempty"`
	ParentID    string       `json:"parentId,omitempty"`
	Created     string       `json:"created"`
	Updated     string       `json:"updated"`
	Archived    bool         `json:"archived,omitempty"`
	Agent       string       `json:"agent,omitempty"`
	Era         string       `json:"era,omitempty"`
	Messages    int          `json:"messages"`
	Turns       int          `json:"turns"`
	ToolCalls   int          `json:"toolCalls"`
	FirstPrompt string       `json:"firstPrompt,omitempty"`
	Children    []SessionRef `json:"children"`
	Cursor      string       `json:"cursor"`
	// Source is the history the session is in; URI is its transcript
	// (recall:) for an editor to open.
	Source string `json:"source"`
	URI    string `json:"uri"`
}

// SessionsResult is a page of sessions.
type SessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
	Next     string        `json:"next,omitempty"`
}

func (e *Engine) sessionInfo(sh *shard, s index.SessionRow, children []index.SessionRow) SessionInfo {
	info := SessionInfo{ID: s.ID, Title: s.Title, Directory: s.Directory, ProjectID: s.ProjectID, ParentID: s.ParentID,
		Created: render.Time(s.Created), Updated: render.Time(s.Updated), Archived: s.Archived != 0, Agent: s.Agent, Era: s.Era,
		Messages: s.Messages, Turns: s.Turns, ToolCalls: s.ToolCalls, FirstPrompt: s.FirstPrompt,
		Children: []SessionRef{}, Cursor: e.encodeCursor(Cursor{Source: sh.name, SessionID: s.ID, Hint: "head"}), Source: sh.name}
	for _, c := range children {
		info.Children = append(info.Children, SessionRef{ID: c.ID, Title: c.Title, Source: sh.name})
	}
	info = e.showSession(info)
	info.URI = TranscriptURI(sh.name, info.ID, info.Title, "")
	return info
}

// shardRow is a session row and the shard it came from.
type shardRow struct {
	sh *shard
	index.SessionRow
}

// listedBefore is the listing's order: newest activity first, then source
// (in name order, so a page cursor means the same when sources are added),
// then id.
func listedBefore(a, b shardRow) bool {
	if a.Updated != b.Updated {
		return a.Updated > b.Updated
	}
	if a.sh.name != b.sh.name {
		return a.sh.name < b.sh.name
	}
	return a.ID < b.ID
}

// Sessions lists sessions, newest activity first. Without a filter it
// reads only one page of rows from each shard (limit+1, from where the
// page cursor says that shard's listing continues) and merges them; a
// fuzzy title filter scores every title.
func (e *Engine) Sessions(ctx context.Context, p SessionsParams) (SessionsResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultSessionsLimit
	}
	limit = min(limit, MaxSessionsLimit)
	res := SessionsResult{Sessions: []SessionInfo{}}
	shs, err := e.shardsFor(p.Sources)
	if err != nil {
		return res, err
	}
	base := index.SessionQuery{Parent: p.Parent, Directory: p.Directory, After: p.After, Before: p.Before}
	var rows []shardRow
	if strings.TrimSpace(p.Filter) == "" {
		var pos pagePos
		if p.Cursor != "" {
			if pos, err = e.decodePage(p.Cursor); err != nil {
				return res, err
			}
		}
		all, err := e.sessionRows(ctx, shs, func(sh *shard) index.SessionQuery {
			q := base
			q.Limit = limit + 1
			if p.Cursor != "" {
				q.AfterUpdated, q.AfterID = pos.updated, pos.id
				switch {
				case sh.name < pos.source:
					q.AfterTies = index.TiesNone
				case sh.name > pos.source:
					q.AfterTies = index.TiesAll
				}
			}
			return q
		})
		if err != nil {
			return res, err
		}
		rows = all
		if len(rows) > limit {
			last := rows[limit-1]
			res.Next = encodePage(pagePos{updated: last.Updated, source: last.sh.name, id: last.ID})
			rows = rows[:limit]
		}
	} else {
		all, err := e.sessionRows(ctx, shs, func(*shard) index.SessionQuery { return base })
		if err != nil {
			return res, err
		}
		// The filter sees titles as the listing shows them: filtering by
		// a secret must not find the session it is in.
		titles := make([]string, len(all))
		for i, s := range all {
			titles[i] = e.show(s.Title)
		}
		matches := fuzzy.Find(p.Filter, titles)
		sort.SliceStable(matches, func(i, j int) bool { return matches[i].Score > matches[j].Score })
		offset := 0
		if p.Cursor != "" {
			pos, err := e.decodePage(p.Cursor)
			if err != nil {
				return res, err
			}
			offset, _ = strconv.Atoi(pos.id)
		}
		for i := offset; i < len(matches) && len(rows) < limit; i++ {
			rows = append(rows, all[matches[i].Index])
		}
		if offset+limit < len(matches) {
			res.Next = encodePage(pagePos{id: strconv.Itoa(offset + limit)})
		}
	}
	kids, err := children(ctx, rows)
	if err != nil {
		return res, err
	}
	for _, s := range rows {
		res.Sessions = append(res.Sessions, e.sessionInfo(s.sh, s.SessionRow, kids[s.sh][s.ID]))
	}
	return res, nil
}

// sessionRows reads each shard's rows for its query and merges them in
// listing order.
func (e *Engine) sessionRows(ctx context.Context, shs []*shard, query func(*shard) index.SessionQuery) ([]shardRow, error) {
	per := make([][]index.SessionRow, len(shs))
	if err := eachShard(shs, func(i int, sh *shard) error {
		var err error
		per[i], err = sh.ix.Sessions(ctx, query(sh))
		return err
	}); err != nil {
		return nil, err
	}
	var out []shardRow
	for i, rows := range per {
		for _, r := range rows {
			out = append(out, shardRow{sh: shs[i], SessionRow: r})
		}
	}
	if len(shs) > 1 {
		sort.SliceStable(out, func(a, b int) bool { return listedBefore(out[a], out[b]) })
	}
	return out, nil
}

// children reads the subagent sessions of rows, from each row's shard.
func children(ctx context.Context, rows []shardRow) (map[*shard]map[string][]index.SessionRow, error) {
	ids := map[*shard][]string{}
	var shs []*shard
	for _, r := range rows {
		if _, ok := ids[r.sh]; !ok {
			shs = append(shs, r.sh)
		}
		ids[r.sh] = append(ids[r.sh], r.ID)
	}
	out := make(map[*shard]map[string][]index.SessionRow, len(shs))
	kids := make([]map[string][]index.SessionRow, len(shs))
	if err := eachShard(shs, func(i int, sh *shard) error {
		var err error
		kids[i], err = sh.ix.Children(ctx, ids[sh])
		return err
	}); err != nil {
		return nil, err
	}
	for i, sh := range shs {
		out[sh] = kids[i]
	}
	return out, nil
}

// pagePos is where a sessions page ended: the last session's activity
// time, source and id (for a fuzzy-filtered listing, id is the offset).
type pagePos struct {
	updated int64
	source  string
	id      string
}

// pagePrefix versions the sessions page cursor; rp1 (no source) was the
// one-history format, read as the first source's.
const pagePrefix = "rp2."

func encodePage(p pagePos) string {
	return pagePrefix + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d|%s|%s", p.updated, p.source, p.id)))
}

func (e *Engine) decodePage(s string) (pagePos, error) {
	bad := fmt.Errorf("%w: %q is not a sessions page cursor; use the next field of a sessions result", ErrBadCursor, clip(s, 40))
	var pos pagePos
	rest, ok := strings.CutPrefix(s, pagePrefix)
	old := false
	if !ok {
		if rest, ok = strings.CutPrefix(s, "rp1."); !ok {
			return pos, bad
		}
		old = true
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return pos, bad
	}
	f := strings.Split(string(raw), "|")
	if old {
		if len(f) < 2 {
			return pos, bad
		}
		f = []string{f[0], e.shards[0].name, strings.Join(f[1:], "|")}
	}
	if len(f) != 3 {
		return pos, bad
	}
	if pos.updated, err = strconv.ParseInt(f[0], 10, 64); err != nil {
		return pos, bad
	}
	pos.source, pos.id = f[1], f[2]
	return pos, nil
}
