package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// ReadParams are the params of `read`.
type ReadParams struct {
	Cursor string `json:"cursor" arg:"1" help:"a cursor from search, sessions or a previous read"`
	Mode   string `json:"mode,omitempty" flag:"mode" help:"around, next, prev, head, tail or full"`
	Limit  int    `json:"limit,omitempty" flag:"limit" help:"messages in the window (default 12, max 50; full: max 500)"`
	Format string `json:"format,omitempty" flag:"format" help:"chatml (default), markdown or json"`
}

// Validate checks the params.
func (p *ReadParams) Validate() error {
	if p.Cursor == "" {
		return &ParamError{Field: "cursor", Msg: "is required; pass the cursor field of a search hit or session"}
	}
	if err := checkEnum("mode", p.Mode, "around", "next", "prev", "head", "tail", "full"); err != nil {
		return err
	}
	max := engine.MaxReadLimit
	if p.Mode == "full" {
		max = engine.MaxFullLimit
	}
	if p.Limit < 0 {
		return &ParamError{Field: "limit", Msg: "must be positive"}
	}
	if err := checkRange("limit", p.Limit, 1, max); err != nil {
		return err
	}
	return checkEnum("format", p.Format, "chatml", "markdown", "json")
}

func init() {
	register(&Command{
		Name:      "read",
		Summary:   "a bounded window of a session around a cursor, as ChatML, markdown or JSON",
		Doors:     CLI | Server,
		Sync:      true,
		NewParams: func() Params { return &ReadParams{} },
		Run: func(ctx context.Context, env *Env, p Params) (any, error) {
			rp := p.(*ReadParams)
			return env.Engine.Read(ctx, engine.ReadParams{Cursor: rp.Cursor, Mode: engine.ReadMode(rp.Mode), Limit: rp.Limit, Format: render.Format(rp.Format)})
		},
		Print: func(w io.Writer, result any) error {
			res := result.(engine.ReadResult)
			if res.Format == "json" {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(res.Messages)
			}
			_, err := fmt.Fprint(w, res.Text)
			return err
		},
	})
}
