package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/render"
)

// ReadParams are the params of `read`.
type ReadParams struct {
	Cursor string     `json:"cursor" arg:"1" help:"a cursor from search, sessions or a previous read, or a ses_/msg_/prt_ id"`
	Mode   string     `json:"mode,omitempty" flag:"mode" meta:"MODE" enum:"readMode" help:"which window (default around a hit)"`
	Limit  int        `json:"limit,omitempty" flag:"limit" help:"messages in the window (default 12, max 50; full: max 500)"`
	Format string     `json:"format,omitempty" flag:"format" meta:"FORMAT" enum:"readFormat" help:"how to print it (default chatml)"`
	Source SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"with an id: the source that holds it (default: the first that does)"`
	// OutputBudget is render.DefaultOutputBudget when 0.
	OutputBudget int `json:"outputBudget,omitempty" flag:"output-budget" help:"bytes of each tool output shown, head and tail (default 1600, max 65536; recall get reads one whole)"`
}

// Validate checks the params.
func (p *ReadParams) Validate() error {
	if p.Cursor == "" {
		return missing("cursor", "read needs a cursor or a session id: recall read ses_… (find one with recall search or recall sessions)")
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
	if p.OutputBudget < 0 {
		return &ParamError{Field: "outputBudget", Msg: "must be positive"}
	}
	if err := checkRange("outputBudget", p.OutputBudget, 100, render.MaxOutputBudget); err != nil {
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
	Warm:    true,
	Run: func(ctx context.Context, env *Env, p *ReadParams) (engine.ReadResult, error) {
		src, _ := p.Source.one()
		res, err := env.Engine.Read(ctx, engine.ReadParams{Cursor: p.Cursor, Source: src, Mode: engine.ReadMode(p.Mode), Limit: p.Limit, Format: render.Format(p.Format), OutputBudget: p.OutputBudget})
		if errors.Is(err, engine.ErrUnknownID) {
			err = &ParamError{Field: "cursor", Msg: err.Error()}
		}
		return res, err
	},
	PrintFor: printRead,
})

// printRead is read for people. ChatML carries its <nav> cursors; the
// markdown window gets the same as lines of commands after it, and the
// JSON window is an object with its nav beside its messages, so every
// format can page on.
func printRead(w io.Writer, p *ReadParams, res engine.ReadResult) error {
	switch res.Format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			Session  engine.SessionInfo `json:"session"`
			Range    engine.Range       `json:"range"`
			Anchor   string             `json:"anchor,omitempty"`
			Partial  bool               `json:"partial,omitempty"`
			Nav      render.Nav         `json:"nav"`
			Messages []model.Message    `json:"messages"`
		}{res.Session, res.Range, res.Anchor, res.Partial, res.Nav, res.Messages})
	case "markdown":
		if _, err := fmt.Fprint(w, res.Text); err != nil {
			return err
		}
		again := "recall read --format markdown"
		if p.Limit != 0 {
			again += fmt.Sprintf(" --limit %d", p.Limit)
		}
		fmt.Fprintln(w, "---")
		for _, l := range []struct{ name, cursor string }{{"prev", res.Nav.Prev}, {"next", res.Nav.Next}, {"head", res.Nav.Head}, {"tail", res.Nav.Tail}} {
			if l.cursor != "" {
				fmt.Fprintf(w, "%s: %s %s\n", l.name, again, l.cursor)
			}
		}
		return nil
	}
	_, err := fmt.Fprint(w, res.Text)
	return err
}
