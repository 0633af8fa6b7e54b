package commands

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/recallhq/recall/engine"
)

// SessionsParams are the params of `sessions`.
type SessionsParams struct {
	Filter    string     `json:"filter,omitempty" flag:"filter" meta:"TEXT" help:"fuzzy match on titles"`
	Directory string     `json:"directory,omitempty" flag:"directory" meta:"DIR" help:"only sessions under this directory"`
	After     string     `json:"after,omitempty" flag:"after" meta:"TIME" help:"active after this time (2026-11-01, 2d, ...)"`
	Before    string     `json:"before,omitempty" flag:"before" meta:"TIME" help:"active before this time"`
	Parent    string     `json:"parent,omitempty" flag:"parent" meta:"ID" help:"list the subagent sessions of this session"`
	Limit     int        `json:"limit,omitempty" flag:"limit" help:"sessions per page (default 20, max 200)"`
	Cursor    string     `json:"cursor,omitempty" flag:"cursor" meta:"CURSOR" help:"the next field of a previous page"`
	Source    SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"only this source (repeat, or a comma list; default: every source)"`

	after, before int64
}

// Validate checks the params.
func (p *SessionsParams) Validate() error {
	if err := checkQuerySize("filter", p.Filter); err != nil {
		return err
	}
	var err error
	if p.Directory, err = absDir(p.Directory); err != nil {
		return err
	}
	if p.after, err = parseTime("after", p.After); err != nil {
		return err
	}
	if p.before, err = parseTime("before", p.Before); err != nil {
		return err
	}
	if p.Limit < 0 {
		return &ParamError{Field: "limit", Msg: "must be positive"}
	}
	return checkRange("limit", p.Limit, 1, engine.MaxSessionsLimit)
}

// Sessions is `sessions`: a page of recent sessions.
var Sessions = Register(&Command[SessionsParams, engine.SessionsResult]{
	Name:    "sessions",
	Summary: "recent sessions with counts, parents and subagent children",
	Doors:   CLI | Server,
	Sync:    true,
	Warm:    true,
	Run: func(ctx context.Context, env *Env, p *SessionsParams) (engine.SessionsResult, error) {
		return env.Engine.Sessions(ctx, engine.SessionsParams{Filter: p.Filter, Directory: p.Directory,
			After: p.after, Before: p.before, Parent: p.Parent, Limit: p.Limit, Cursor: p.Cursor, Sources: p.Source.names()})
	},
	PrintFor: func(w io.Writer, p *SessionsParams, res engine.SessionsResult) error {
		if len(res.Sessions) == 0 {
			_, err := fmt.Fprintln(w, noSessions(p))
			return err
		}
		var sources []string
		for _, s := range res.Sessions {
			sources = append(sources, s.Source)
		}
		several := mixed(sources...)
		for _, s := range res.Sessions {
			arch := ""
			if s.Archived {
				arch = " (archived)"
			}
			where := s.Directory
			if several {
				where = s.Source + " · " + where
			}
			fmt.Fprintf(w, "%s  %s%s\n    %s · %s · %s, %s, %s\n", s.ID, s.Title, arch,
				where, clock(s.Updated), count(s.Messages, "message"), count(s.Turns, "turn"), count(s.ToolCalls, "tool call"))
			for _, c := range s.Children {
				fmt.Fprintf(w, "    └ %s  %s\n", c.ID, c.Title)
			}
		}
		if res.Next != "" {
			fmt.Fprintf(w, "more: recall sessions --cursor %s\n", res.Next)
		}
		return nil
	},
})

// noSessions is an empty page for people: what was asked, so a filter
// that matched nothing is seen as the reason.
func noSessions(p *SessionsParams) string {
	var f []string
	add := func(flag, val string) {
		if val != "" {
			f = append(f, fmt.Sprintf("--%s %s", flag, val))
		}
	}
	if p.Filter != "" {
		add("filter", strconv.Quote(p.Filter))
	}
	add("directory", p.Directory)
	add("after", p.After)
	add("before", p.Before)
	add("parent", p.Parent)
	add("source", strings.Join(p.Source.names(), ","))
	switch {
	case p.Cursor != "":
		return "no more sessions after this cursor"
	case p.Parent != "" && len(f) == 1:
		return "no sessions: " + p.Parent + " has no subagent sessions"
	case len(f) > 0:
		return "no sessions match " + strings.Join(f, " ")
	}
	return "no sessions: the history holds none yet"
}
