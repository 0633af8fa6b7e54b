package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/recallhq/recall/engine"
)

// ForgetParams are the params of `forget`.
type ForgetParams struct {
	Session string `json:"session" arg:"1" help:"the session id (ses_...) to drop from the index, with its subagents"`
}

// Validate checks the params.
func (p *ForgetParams) Validate() error {
	if p.Session == "" {
		return &ParamError{Field: "session", Msg: "is required; see `recall sessions` for ids"}
	}
	return nil
}

func init() {
	register(&Command{
		Name:      "forget",
		Summary:   "drop a session from Recall's index for good (OpenCode's own history is not touched)",
		Doors:     CLI | Server, // writes only Recall's own index
		Sync:      true,
		NewParams: func() Params { return &ForgetParams{} },
		Run: func(ctx context.Context, env *Env, p Params) (any, error) {
			return env.Engine.Forget(ctx, p.(*ForgetParams).Session)
		},
		Print: func(w io.Writer, result any) error {
			r := result.(engine.ForgetResult)
			_, err := fmt.Fprintf(w, "forgot %s; it stays in OpenCode but Recall will not index it again\n", strings.Join(r.Forgotten, ", "))
			return err
		},
	})
}
