package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// ReadParams are the params of `read`.
type ReadParams struct {
	Cursor string     `json:"cursor" arg:"1" help:"a cursor from search, sessions or a previous read, or a ses_/msg_/prt_ id"`
	Mode   string     `json:"mode,omitempty" flag:"mode" meta:"MODE" enum:"readMode" help:"which window (default around a hit)"`
	Limit  int        `json:"limit,omitempty" flag:"limit" help:"messages in the window (default 12, max 50; full: max 500)"`
	Format string     `json:"format,omitempty" flag:"format" meta:"FORMAT" enum:"readFormat" help:"how to print it (default chatml)"`
	Source SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"with an id: the source that holds it (default: the first that does)"`
}

// Validate checks the params.
func (p *ReadParams) Validate() error {
	if p.Cursor == "" {
		return &ParamError{Field: "cursor", Msg: "is required; pass the cursor field of a search hit or session"}
	}
	max := engine.MaxReadLimit
	if p.Mode == "full" {
		max = engine.MaxFullLimit
	}
	if p.Limit < 0 {
		return &ParamError{Field: "limit", Msg: "must be positive"}
	}
	if _, err := p.Source.one(); err != nil {
		return err
	}
	return checkRange("limit", p.Limit, 1, max)
}

// Read is `read`: a bounded window of a session around a cursor.
var Read = Register(&Command[ReadParams, engine.ReadResult]{
	Name:    "read",
	Summary: "a bounded window of a session around a cursor, as ChatML, markdown or JSON",
	Doors:   CLI | Server,
	Sync:    true,
	Run: func(ctx context.Context, env *Env, p *ReadParams) (engine.ReadResult, error) {
		src, _ := p.Source.one()
		res, err := env.Engine.Read(ctx, engine.ReadParams{Cursor: p.Cursor, Source: src, Mode: engine.ReadMode(p.Mode), Limit: p.Limit, Format: render.Format(p.Format)})
		if errors.Is(err, engine.ErrUnknownID) {
			err = &ParamError{Field: "cursor", Msg: err.Error()}
		}
		return res, err
	},
	Print: func(w io.Writer, res engine.ReadResult) error {
		if res.Format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(res.Messages)
		}
		_, err := fmt.Fprint(w, res.Text)
		return err
	},
})
