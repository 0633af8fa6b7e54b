package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/render"
)

// SearchParams are the params of `search` (CLI flags, JSON-RPC fields).
type SearchParams struct {
	Query          string     `json:"query" arg:"rest" help:"what to look for; \"phrases\" and -exclusions work; empty lists recent activity"`
	Limit          int        `json:"limit,omitempty" flag:"limit" help:"hits to return (1-200, default 10)"`
	Directory      string     `json:"directory,omitempty" flag:"directory" meta:"DIR" help:"only sessions under this directory"`
	After          string     `json:"after,omitempty" flag:"after" meta:"TIME" help:"only after this time (2026-11-01, 2d, 3h, yesterday)"`
	Before         string     `json:"before,omitempty" flag:"before" meta:"TIME" help:"only before this time"`
	Role           string     `json:"role,omitempty" flag:"role" meta:"ROLE" enum:"role" help:"only messages of this role"`
	Kind           string     `json:"kind,omitempty" flag:"kind" meta:"KINDS" enum:"kind" list:"," help:"comma list of part kinds"`
	Tool           string     `json:"tool,omitempty" flag:"tool" meta:"TOOLS" help:"comma list of tool names (bash, edit, read, ...)"`
	Session        string     `json:"session,omitempty" flag:"session" meta:"ID" help:"only this session and its subagents"`
	ExcludeSession string     `json:"excludeSession,omitempty" flag:"exclude-session" meta:"ID" help:"leave out this session and its subagent family"`
	Mode           string     `json:"mode,omitempty" flag:"mode" meta:"MODE" enum:"searchMode" help:"how to match (default auto)"`
	Group          string     `json:"group,omitempty" flag:"group" meta:"GROUP" enum:"group" help:"a few hits per session (session, the default) or every hit (none)"`
	Explain        bool       `json:"explain,omitempty" flag:"explain" help:"say why each hit ranked where it did"`
	Source         SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"only this source (repeat, or a comma list; default: every source)"`

	after, before int64
}

// Validate checks the params (roles, kinds, modes and groups are checked
// from their enums first).
func (p *SearchParams) Validate() error {
	if err := checkQuerySize("query", p.Query); err != nil {
		return err
	}
	var err error
	if p.after, err = parseTime("after", p.After); err != nil {
		return err
	}
	if p.before, err = parseTime("before", p.Before); err != nil {
		return err
	}
	if p.after != 0 && p.before != 0 && p.after >= p.before {
		return &ParamError{Field: "after", Msg: "must be earlier than before"}
	}
	if err := checkRange("limit", p.Limit, 1, engine.MaxSearchLimit); err != nil {
		return err
	}
	if p.Limit < 0 {
		return &ParamError{Field: "limit", Msg: "must be positive"}
	}
	return nil
}

// checkQuerySize refuses text over engine.MaxQueryBytes before anything
// parses it.
func checkQuerySize(field, s string) error {
	if len(s) > engine.MaxQueryBytes {
		return &ParamError{Field: field, Msg: fmt.Sprintf("is %d bytes, over the %d KiB limit; search for a distinctive line of it instead", len(s), engine.MaxQueryBytes>>10)}
	}
	return nil
}

// engineParams converts the validated wire params to the engine's search,
// once.
func (p *SearchParams) engineParams() engine.SearchParams {
	f := query.Filter{Directory: p.Directory, After: p.after, Before: p.before, Tools: splitList(p.Tool),
		Session: p.Session, ExcludeSession: p.ExcludeSession, Sources: p.Source.names()}
	for _, k := range splitList(p.Kind) {
		f.Kinds = append(f.Kinds, model.Kind(k))
	}
	if p.Role != "" {
		f.Roles = []query.Role{query.Role(p.Role)}
	}
	return engine.SearchParams{Query: p.Query, Filter: f, Limit: p.Limit, Mode: query.Mode(p.Mode),
		Group: query.Group(p.Group), Explain: p.Explain}
}

// Search is `search`: ranked hits over every session. Its notices (a
// lexical fallback, a correction) go to Notify.
var Search = Register(&Command[SearchParams, engine.SearchResult]{
	Name:    "search",
	Summary: "ranked search over every session: prompts, answers, reasoning, tool calls and outputs",
	Doors:   CLI | Server,
	Sync:    true,
	Run: func(ctx context.Context, env *Env, p *SearchParams) (engine.SearchResult, error) {
		ep := p.engineParams()
		if ep.Filter.ExcludeSession == "" {
			ep.Filter.ExcludeSession = env.ExcludeSession
		}
		res, err := env.Engine.Search(ctx, ep)
		if err == nil {
			for _, n := range res.Notices {
				env.notify(n)
			}
		}
		return res, err
	},
	Print: printSearch,
})

func printSearch(w io.Writer, res engine.SearchResult) error {
	if len(res.Hits) == 0 {
		_, err := fmt.Fprintln(w, "no matches")
		return err
	}
	var sources []string
	for _, h := range res.Hits {
		sources = append(sources, h.Source)
	}
	several := mixed(sources...)
	for i, h := range res.Hits {
		label := strings.TrimSpace(h.Kind + " " + h.Role)
		if h.Tool != "" {
			label += " · " + h.Tool
		}
		fmt.Fprintf(w, "%2d. %s  [%s]  %s\n", i+1, h.Title, label, render.ShortTime(h.Time))
		fmt.Fprintf(w, "    %s\n", h.Snippet)
		where := h.Directory
		if several {
			where = h.Source + " · " + where
		}
		fmt.Fprintf(w, "    %s  read: recall read %s\n", where, h.Cursor)
	}
	return nil
}
