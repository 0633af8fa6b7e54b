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
}

// SessionRef names a related session.
type SessionRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
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
}

// SessionsResult is a page of sessions.
type SessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
	Next     string        `json:"next,omitempty"`
}

func (e *Engine) sessionInfo(s index.SessionRow, children []index.SessionRow) SessionInfo {
	info := SessionInfo{ID: s.ID, Title: s.Title, Directory: s.Directory, ProjectID: s.ProjectID, ParentID: s.ParentID,
		Created: render.Time(s.Created), Updated: render.Time(s.Updated), Archived: s.Archived != 0, Agent: s.Agent, Era: s.Era,
		Messages: s.Messages, Turns: s.Turns, ToolCalls: s.ToolCalls, FirstPrompt: s.FirstPrompt,
		Children: []SessionRef{}, Cursor: e.encodeCursor(Cursor{SessionID: s.ID, Hint: "head"})}
	for _, c := range children {
		info.Children = append(info.Children, SessionRef{ID: c.ID, Title: c.Title})
	}
	return e.showSession(info)
}

// Sessions lists sessions, newest activity first. Without a filter it
// reads only one page of rows; a fuzzy title filter scores every title.
func (e *Engine) Sessions(ctx context.Context, p SessionsParams) (SessionsResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultSessionsLimit
	}
	limit = min(limit, MaxSessionsLimit)
	q := index.SessionQuery{Parent: p.Parent, Directory: p.Directory, After: p.After, Before: p.Before}
	res := SessionsResult{Sessions: []SessionInfo{}}
	var rows []index.SessionRow
	if strings.TrimSpace(p.Filter) == "" {
		if p.Cursor != "" {
			upd, id, err := decodePage(p.Cursor)
			if err != nil {
				return res, err
			}
			q.AfterUpdated, q.AfterID = upd, id
		}
		q.Limit = limit + 1
		var err error
		if rows, err = e.ix.Sessions(ctx, q); err != nil {
			return res, err
		}
		if len(rows) > limit {
			last := rows[limit-1]
			res.Next = encodePage(last.Updated, last.ID)
			rows = rows[:limit]
		}
	} else {
		all, err := e.ix.Sessions(ctx, q)
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
			_, off, err := decodePage(p.Cursor)
			if err != nil {
				return res, err
			}
			offset, _ = strconv.Atoi(off)
		}
		for i := offset; i < len(matches) && len(rows) < limit; i++ {
			rows = append(rows, all[matches[i].Index])
		}
		if offset+limit < len(matches) {
			res.Next = encodePage(0, strconv.Itoa(offset+limit))
		}
	}
	ids := make([]string, len(rows))
	for i, s := range rows {
		ids[i] = s.ID
	}
	kids, err := e.ix.Children(ctx, ids)
	if err != nil {
		return res, err
	}
	for _, s := range rows {
		res.Sessions = append(res.Sessions, e.sessionInfo(s, kids[s.ID]))
	}
	return res, nil
}

func encodePage(updated int64, id string) string {
	return "rp1." + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d|%s", updated, id)))
}

func decodePage(s string) (int64, string, error) {
	bad := fmt.Errorf("%w: %q is not a sessions page cursor; use the next field of a sessions result", ErrBadCursor, clip(s, 40))
	rest, ok := strings.CutPrefix(s, "rp1.")
	if !ok {
		return 0, "", bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return 0, "", bad
	}
	a, b, ok := strings.Cut(string(raw), "|")
	if !ok {
		return 0, "", bad
	}
	upd, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0, "", bad
	}
	return upd, b, nil
}
