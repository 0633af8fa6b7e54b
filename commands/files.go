package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// FilesParams are the params of `files`.
type FilesParams struct {
	Path   string     `json:"path" arg:"1" help:"the file (absolute, or relative to the current directory)"`
	Limit  int        `json:"limit,omitempty" flag:"limit" help:"sessions to list (default 20, max 200)"`
	Source SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"only this source (repeat, or a comma list; default: every source)"`
}

// Validate checks the params.
func (p *FilesParams) Validate() error {
	if p.Path == "" {
		return &ParamError{Field: "path", Msg: "is required; pass the file whose past sessions you want"}
	}
	if p.Limit < 0 {
		return &ParamError{Field: "limit", Msg: "must be positive"}
	}
	return checkRange("limit", p.Limit, 1, engine.MaxFileSessionsLimit)
}

// Files is `files`: the past sessions that touched a file.
var Files = Register(&Command[FilesParams, engine.FileSessionsResult]{
	Name:    "files",
	Summary: "the past sessions that read, edited or patched a file",
	Doors:   CLI | Server,
	Sync:    true,
	Run: func(ctx context.Context, env *Env, p *FilesParams) (engine.FileSessionsResult, error) {
		return env.Engine.FileSessions(ctx, p.Path, p.Limit, p.Source.names()...)
	},
	Print: func(w io.Writer, res engine.FileSessionsResult) error {
		if res.Total == 0 {
			_, err := fmt.Fprintf(w, "no past session touched %s\n", res.Path)
			return err
		}
		fmt.Fprintf(w, "%d past sessions touched %s\n", res.Total, res.Path)
		var sources []string
		for _, s := range res.Sessions {
			sources = append(sources, s.Source)
		}
		several := mixed(sources...)
		for _, s := range res.Sessions {
			where := s.Directory
			if several {
				where = s.Source + " · " + where
			}
			fmt.Fprintf(w, "%s  %s\n    %s · %s\n", s.ID, s.Title, where, render.ShortTime(s.Updated))
		}
		if len(res.Pitfalls) > 0 {
			fmt.Fprintf(w, "bit us before (errors those sessions hit in it):\n")
			for _, p := range res.Pitfalls {
				fmt.Fprintf(w, "  %s  %s  %s: %s\n", render.ShortTime(p.Time), p.SessionID, render.Clip(p.Title, 40), p.Error)
			}
		}
		return nil
	},
})
