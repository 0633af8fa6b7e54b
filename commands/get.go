package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/recallhq/recall/engine"
)

// GetParams are the params of `get`.
type GetParams struct {
	ID     string     `json:"id" arg:"1" help:"a part id (prt_…), a message id (msg_…) or a search hit's cursor"`
	Offset int        `json:"offset,omitempty" flag:"offset" help:"characters to skip (a previous page's nextOffset)"`
	Length int        `json:"length,omitempty" flag:"length" help:"characters of the page (default 8000, about 2.5k tokens; max 100000)"`
	Source SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"with an id: the source that holds it (default: the first that does)"`
}

// Validate checks the params.
func (p *GetParams) Validate() error {
	if strings.TrimSpace(p.ID) == "" {
		return &ParamError{Field: "id", Msg: "is required; pass a hit's cursor or partId/messageId from recall search"}
	}
	if p.Offset < 0 {
		return &ParamError{Field: "offset", Msg: "must not be negative; pass 0 or a previous page's nextOffset"}
	}
	if p.Length < 0 {
		return &ParamError{Field: "length", Msg: "must be positive"}
	}
	if _, err := p.Source.one(); err != nil {
		return err
	}
	return checkRange("length", p.Length, 1, engine.MaxGetLength)
}

// Get is `get`: one part or message whole, exactly as OpenCode stored it,
// paged by characters.
var Get = Register(&Command[GetParams, engine.GetResult]{
	Name:    "get",
	Summary: "one part or message exactly as OpenCode stored it (read from the history), paged by characters",
	Doors:   CLI | Server,
	Sync:    true,
	Warm:    true,
	Run: func(ctx context.Context, env *Env, p *GetParams) (engine.GetResult, error) {
		src, _ := p.Source.one()
		res, err := env.Engine.Get(ctx, engine.GetParams{ID: p.ID, Source: src, Offset: p.Offset, Length: p.Length})
		if errors.Is(err, engine.ErrNotFound) || errors.Is(err, engine.ErrBadCursor) {
			err = &ParamError{Field: "id", Msg: err.Error()}
		}
		return res, err
	},
	Print: printGet,
})

func printGet(w io.Writer, r engine.GetResult) error {
	what := r.Kind
	if r.Tool != "" {
		what += " " + r.Tool
	}
	if r.Status != "" {
		what += " " + r.Status
	}
	if r.Pruned {
		what += ", pruned by OpenCode (hidden from the model, kept in the history)"
	}
	id := r.PartID
	if id == "" {
		id = r.MessageID
	}
	fmt.Fprintf(w, "# %s  %s  [%s]  characters %d-%d of %d\n", id, r.SessionID, what, r.Offset, r.Offset+r.Length, r.OriginalChars)
	if r.Input != "" {
		fmt.Fprintf(w, "input: %s\n", r.Input)
	}
	fmt.Fprint(w, r.Text)
	if !strings.HasSuffix(r.Text, "\n") {
		fmt.Fprintln(w)
	}
	if r.NextOffset != nil {
		fmt.Fprintf(w, "# more: recall get %s --offset %d\n", id, *r.NextOffset)
	}
	return nil
}
