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
	Path  string `json:"path" arg:"1" help:"the file (absolute, or relative to the current directory)"`
	Limit int    `json:"limit,omitempty" flag:"limit" help:"sessions to list (default 20, max 200)"`
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
		return env.Engine.FileSessions(ctx, p.Path, p.Limit)
	},
	Print: func(w io.Writer, res engine.FileSessionsResult) error {
		if res.Total == 0 {
			_, err := fmt.Fprintf(w, "no past session touched %s\n", res.Path)
			return err
		}
		fmt.Fprintf(w, "%d past sessions touched %s\n", res.Total, res.Path)
		for _, s := range res.Sessions {
			fmt.Fprintf(w, "%s  %s\n    %s · %s\n", s.ID, s.Title, s.Directory, render.ShortTime(s.Updated))
		}
		return nil
	},
})
