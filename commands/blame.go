package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// BlameParams are the params of `blame`.
type BlameParams struct {
	Path string `json:"path" arg:"1" help:"the file, FILE or FILE:LINE (absolute, or relative to the current directory)"`
	Line int    `json:"line,omitempty" flag:"line" help:"only the range that holds this line (1-based; FILE:LINE says the same)"`
	// Text is for editors: the buffer as it is, saved or not ("" reads
	// the file; an empty buffer has no lines to blame anyway).
	Text   string     `json:"text,omitempty" help:"the file's contents as the editor has them (default: the file on disk)"`
	Source SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"only this source (repeat, or a comma list; default: every source)"`
}

// Validate checks the params; FILE:LINE becomes path and line when no file
// is named FILE:LINE itself.
func (p *BlameParams) Validate() error {
	if p.Path == "" {
		return &ParamError{Field: "path", Msg: "is required; pass the file to blame (FILE or FILE:LINE)"}
	}
	if i := strings.LastIndexByte(p.Path, ':'); i > 0 && p.Line == 0 {
		if n, err := strconv.Atoi(p.Path[i+1:]); err == nil {
			if _, statErr := os.Stat(p.Path); statErr != nil {
				if n < 1 {
					return &ParamError{Field: "path", Msg: fmt.Sprintf("line %d in %q: lines count from 1", n, p.Path)}
				}
				p.Path, p.Line = p.Path[:i], n
			}
		}
	}
	if p.Line < 0 {
		return &ParamError{Field: "line", Msg: "must be positive (lines count from 1)"}
	}
	return nil
}

// Blame is `blame`: which past session wrote each line of a file.
var Blame = Register(&Command[BlameParams, engine.BlameResult]{
	Name:    "blame",
	Summary: "which past session wrote each line of a file, from the edits OpenCode recorded",
	Doors:   CLI | Server,
	Sync:    true,
	Run: func(ctx context.Context, env *Env, p *BlameParams) (engine.BlameResult, error) {
		opts := engine.BlameOptions{Path: p.Path, Line: p.Line, Sources: p.Source.names()}
		if p.Text != "" {
			opts.Text, opts.HasText = p.Text, true
		}
		res, err := env.Engine.Blame(ctx, opts)
		if errors.Is(err, engine.ErrBlameFile) {
			err = &ParamError{Field: "path", Msg: err.Error()}
		}
		return res, err
	},
	Print: printBlame,
})

func printBlame(w io.Writer, res engine.BlameResult) error {
	sessions := map[string]bool{}
	for _, r := range res.Ranges {
		sessions[r.SessionID] = true
	}
	if res.Line > 0 {
		if len(res.Ranges) == 0 {
			_, err := fmt.Fprintf(w, "%s:%d: not written by a recorded session\n", res.Path, res.Line)
			return err
		}
	} else {
		who := fmt.Sprintf("%d past sessions", len(sessions))
		if len(sessions) == 1 {
			who = "1 past session"
		}
		fmt.Fprintf(w, "%s: %d of %d lines written by %s (times UTC)\n", res.Path, res.Attributed, res.Lines, who)
	}
	var sources []string
	for _, r := range res.Ranges {
		sources = append(sources, r.Source)
	}
	several := mixed(sources...)
	lines := func(a, b int) string {
		if a == b {
			return strconv.Itoa(a)
		}
		return fmt.Sprintf("%d-%d", a, b)
	}
	next := 1
	for _, r := range res.Ranges {
		if res.Line == 0 && r.StartLine > next {
			fmt.Fprintf(w, "%-9s  (not from a recorded session)\n", lines(next, r.StartLine-1))
		}
		id := r.SessionID
		if several {
			id = r.Source + " · " + id
		}
		fmt.Fprintf(w, "%-9s  %-40s  %s  %s  %s\n", lines(r.StartLine, r.EndLine), render.Clip(r.Title, 40), render.ShortTime(r.Time), id, r.Tool)
		next = r.EndLine + 1
	}
	if res.Line == 0 && next <= res.Lines && len(res.Ranges) > 0 {
		fmt.Fprintf(w, "%-9s  (not from a recorded session)\n", lines(next, res.Lines))
	}
	if len(res.Pitfalls) > 0 {
		fmt.Fprintf(w, "pitfalls (errors past sessions hit in this file):\n")
		for _, p := range res.Pitfalls {
			fmt.Fprintf(w, "  %s  %s  %s: %s\n", render.ShortTime(p.Time), p.SessionID, render.Clip(p.Title, 40), p.Error)
		}
	}
	for _, n := range res.Notices {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}
