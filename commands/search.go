package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

// SearchParams are the params of `search` (CLI flags, JSON-RPC fields).
type SearchParams struct {
	Query          string `json:"query" arg:"rest" help:"what to look for; \"phrases\" and -exclusions work; empty lists recent activity"`
	Limit          int    `json:"limit,omitempty" flag:"limit" help:"hits to return (1-200, default 10)"`
	Directory      string `json:"directory,omitempty" flag:"directory" help:"only sessions under this directory"`
	After          string `json:"after,omitempty" flag:"after" help:"only after this time (2026-11-01, 2d, 3h, yesterday)"`
	Before         string `json:"before,omitempty" flag:"before" help:"only before this time"`
	Role           string `json:"role,omitempty" flag:"role" help:"user or assistant"`
	Kind           string `json:"kind,omitempty" flag:"kind" help:"comma list of text, reasoning, tool, output, patch, subtask, file, title, summary"`
	Tool           string `json:"tool,omitempty" flag:"tool" help:"comma list of tool names (bash, edit, read, ...)"`
	Session        string `json:"session,omitempty" flag:"session" help:"only this session and its subagents"`
	ExcludeSession string `json:"excludeSession,omitempty" flag:"exclude-session" help:"leave out this session and its subagent family"`
	Mode           string `json:"mode,omitempty" flag:"mode" help:"auto, lexical, semantic or hybrid"`
	Group          string `json:"group,omitempty" flag:"group" help:"session (a few hits per session, default) or none"`
	Explain        bool   `json:"explain,omitempty" flag:"explain" help:"say why each hit ranked where it did"`

	after, before int64
}

// Validate checks the params.
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
	if err := checkEnum("role", p.Role, "user", "assistant", "system"); err != nil {
		return err
	}
	for _, k := range splitList(p.Kind) {
		ok := false
		for _, known := range model.Kinds {
			if k == string(known) {
				ok = true
			}
		}
		if !ok {
			return &ParamError{Field: "kind", Msg: fmt.Sprintf("%q is not a kind; use %s", k, kindList())}
		}
	}
	if err := checkEnum("mode", p.Mode, "auto", "lexical", "semantic", "hybrid"); err != nil {
		return err
	}
	return checkEnum("group", p.Group, "session", "none")
}

// checkQuerySize refuses text over engine.MaxQueryBytes before anything
// parses it.
func checkQuerySize(field, s string) error {
	if len(s) > engine.MaxQueryBytes {
		return &ParamError{Field: field, Msg: fmt.Sprintf("is %d bytes, over the %d KiB limit; search for a distinctive line of it instead", len(s), engine.MaxQueryBytes>>10)}
	}
	return nil
}

func kindList() string {
	var s []string
	for _, k := range model.Kinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// engineParams converts the validated wire params to the engine's search,
// once.
func (p *SearchParams) engineParams() engine.SearchParams {
	f := query.Filter{Directory: p.Directory, After: p.after, Before: p.before, Tools: splitList(p.Tool),
		Session: p.Session, ExcludeSession: p.ExcludeSession}
	for _, k := range splitList(p.Kind) {
		f.Kinds = append(f.Kinds, model.Kind(k))
	}
	if p.Role != "" {
		f.Roles = []query.Role{query.Role(p.Role)}
	}
	return engine.SearchParams{Query: p.Query, Filter: f, Limit: p.Limit, Mode: query.Mode(p.Mode),
		Group: query.Group(p.Group), Explain: p.Explain}
}

func init() {
	register(&Command{
		Name:      "search",
		Summary:   "ranked search over every session: prompts, answers, reasoning, tool calls and outputs",
		Doors:     CLI | Server,
		Sync:      true,
		NewParams: func() Params { return &SearchParams{} },
		Run: func(ctx context.Context, env *Env, p Params) (any, error) {
			return env.Engine.Search(ctx, p.(*SearchParams).engineParams())
		},
		Print: printSearch,
	})
}

func printSearch(w io.Writer, result any) error {
	res := result.(engine.SearchResult)
	if len(res.Hits) == 0 {
		_, err := fmt.Fprintln(w, "no matches")
		return err
	}
	for i, h := range res.Hits {
		label := strings.TrimSpace(h.Kind + " " + h.Role)
		if h.Tool != "" {
			label += " · " + h.Tool
		}
		fmt.Fprintf(w, "%2d. %s  [%s]  %s\n", i+1, h.Title, label, shortTime(h.Time))
		fmt.Fprintf(w, "    %s\n", h.Snippet)
		fmt.Fprintf(w, "    %s  read: recall read %s\n", h.Directory, h.Cursor)
	}
	return nil
}

func shortTime(t string) string {
	if len(t) >= 16 {
		return strings.Replace(t[:16], "T", " ", 1)
	}
	return t
}
