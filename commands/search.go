package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

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
	ExcludeSession string     `json:"excludeSession,omitempty" flag:"exclude-session" meta:"ID" help:"leave out this session, its subagent family and its forks"`
	Mode           string     `json:"mode,omitempty" flag:"mode" meta:"MODE" enum:"searchMode" help:"how to match (default auto)"`
	Group          string     `json:"group,omitempty" flag:"group" meta:"GROUP" enum:"group" help:"a few hits per session (session, the default) or every hit (none)"`
	Explain        bool       `json:"explain,omitempty" flag:"explain" help:"say why each hit ranked where it did"`
	Source         SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"only this source (repeat, or a comma list; default: every source)"`
	Match          string     `json:"match,omitempty" flag:"match" meta:"MATCH" enum:"match" help:"ranked (default), literal (case-insensitive substring) or regex (Go RE2): literal and regex scan the history's full text, newest first"`
	Author         string     `json:"author,omitempty" flag:"author" meta:"AUTHOR" enum:"author" help:"only what a person typed (human) or what an agent wrote (agent)"`
	Continue       string     `json:"continue,omitempty" flag:"continue" meta:"CURSOR" help:"literal/regex: resume a scan where the last one stopped (its continue field)"`
	ScanMB         int        `json:"scanMB,omitempty" flag:"scan-mb" help:"literal/regex: MiB of text to read at most (default 256)"`
	ScanMS         int        `json:"scanMs,omitempty" flag:"scan-ms" help:"literal/regex: milliseconds to scan at most (default 1500, max 10000)"`

	after, before int64
}

// Validate checks the params (roles, kinds, modes and groups are checked
// from their enums first).
func (p *SearchParams) Validate() error {
	if err := checkQuerySize("query", p.Query); err != nil {
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
	if p.after != 0 && p.before != 0 && p.after >= p.before {
		return &ParamError{Field: "after", Msg: "must be earlier than before"}
	}
	if err := checkRange("limit", p.Limit, 1, engine.MaxSearchLimit); err != nil {
		return err
	}
	if p.Limit < 0 {
		return &ParamError{Field: "limit", Msg: "must be positive"}
	}
	if err := checkRange("scanMB", p.ScanMB, 1, 1<<14); err != nil {
		return err
	}
	if err := checkRange("scanMs", p.ScanMS, 1, int(engine.MaxScanTime/time.Millisecond)); err != nil {
		return err
	}
	scan := p.Match == string(query.MatchLiteral) || p.Match == string(query.MatchRegex)
	if !scan && (p.Continue != "" || p.ScanMB != 0 || p.ScanMS != 0) {
		return &ParamError{Field: "match", Msg: "continue, scanMB and scanMs belong to a literal or regex match; add match literal or regex"}
	}
	if err := engine.CheckMatch(query.Match(p.Match), p.Query); err != nil {
		return &ParamError{Field: "query", Msg: err.Error()}
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
		Session: p.Session, ExcludeSession: p.ExcludeSession, Sources: p.Source.names(), Author: query.Author(p.Author)}
	for _, k := range splitList(p.Kind) {
		f.Kinds = append(f.Kinds, model.Kind(k))
	}
	if p.Role != "" {
		f.Roles = []query.Role{query.Role(p.Role)}
	}
	return engine.SearchParams{Query: p.Query, Filter: f, Limit: p.Limit, Mode: query.Mode(p.Mode),
		Group: query.Group(p.Group), Explain: p.Explain, Match: query.Match(p.Match), Continue: p.Continue,
		ScanBytes: int64(p.ScanMB) << 20, ScanTime: time.Duration(p.ScanMS) * time.Millisecond}
}

// Search is `search`: ranked hits over every session. Its notices (a
// lexical fallback, a correction) go to Notify.
var Search = Register(&Command[SearchParams, engine.SearchResult]{
	Name:    "search",
	Summary: "ranked search over every session: prompts, answers, reasoning, tool calls and outputs",
	Doors:   CLI | Server,
	Sync:    true,
	Warm:    true,
	Run: func(ctx context.Context, env *Env, p *SearchParams) (engine.SearchResult, error) {
		ep := p.engineParams()
		ep.EveryNotice = env.EveryNotice
		// The door's own session (the plugin's live one) is left out of
		// searches across history, never out of one that names a session
		// to search in: that is the agent asking about its own past.
		if ep.Filter.ExcludeSession == "" && ep.Filter.Session == "" {
			ep.Filter.ExcludeSession = env.ExcludeSession
		}
		res, err := env.Engine.Search(ctx, ep)
		if errors.Is(err, engine.ErrBadCursor) && p.Continue != "" {
			err = &ParamError{Field: "continue", Msg: err.Error()}
		}
		if err == nil {
			for _, n := range res.Notices {
				env.notify(n)
			}
		}
		return res, err
	},
	Print: printSearch,
})

// printSearch is search for people. It shows what --json says besides
// the hits: the typo corrections made, a partial answer, and with
// --explain each hit's scores.
func printSearch(w io.Writer, res engine.SearchResult) error {
	if len(res.Corrections) > 0 {
		fmt.Fprintf(w, "corrected: %s\n", strings.Join(res.Corrections, ", "))
	}
	if res.Partial {
		fmt.Fprintln(w, "partial: the search ran out of time and these are the hits found so far; narrow it (--directory, --after, fewer words) for all of them")
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(w, "no matches")
		for _, s := range res.Suggestions {
			fmt.Fprintf(w, "  try: %s\n", s.Text)
		}
		printCoverage(w, res)
		return nil
	}
	defer printCoverage(w, res)
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
		fmt.Fprintf(w, "%2d. %s  [%s]  %s\n", i+1, h.Title, label, clock(h.Time))
		fmt.Fprintf(w, "    %s\n", h.Snippet)
		where := h.Directory
		if several {
			where = h.Source + " · " + where
		}
		fmt.Fprintf(w, "    %s  read: recall read %s\n", where, h.Cursor)
		if h.Explain != nil {
			fmt.Fprintf(w, "    why: %s\n", explainText(h.Score, *h.Explain))
		}
	}
	return nil
}

// explainText is one hit's --explain on one line.
func explainText(score float64, x engine.Explain) string {
	parts := []string{fmt.Sprintf("score %.3f", score)}
	if x.BM25 != 0 {
		parts = append(parts, fmt.Sprintf("bm25 %.2f", x.BM25))
	}
	if x.Vector != 0 {
		parts = append(parts, fmt.Sprintf("cosine %.3f", x.Vector))
	}
	if x.LexicalRank != 0 {
		parts = append(parts, fmt.Sprintf("lexical rank %d", x.LexicalRank))
	}
	if x.SemanticRank != 0 {
		parts = append(parts, fmt.Sprintf("semantic rank %d", x.SemanticRank))
	}
	if len(x.Matched) > 0 {
		parts = append(parts, "matched "+strings.Join(x.Matched, ", "))
	}
	if x.Answer {
		parts = append(parts, "the session's final answer (shown for its family, not matched)")
	}
	if x.Match != "" {
		parts = append(parts, "query "+x.Match)
	}
	return strings.Join(parts, " · ")
}

// printCoverage says how much a literal or regex scan read, and how to
// resume it.
func printCoverage(w io.Writer, res engine.SearchResult) {
	c := res.Coverage
	if c == nil {
		return
	}
	state := "complete"
	if !c.Complete {
		state = "stopped before the end: more may match"
	}
	fmt.Fprintf(w, "scanned %s, %s, %s (%s)\n", render.Count(c.Sessions, "session"), render.Count(c.Parts, "part"), humanBytes(c.Bytes), state)
	if res.Continue != "" {
		fmt.Fprintf(w, "more: recall search --match %s --continue %s (same query and filters)\n", res.Mode, res.Continue)
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
