package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/recallhq/recall/engine"
)

// ForgetParams are the params of `forget`.
type ForgetParams struct {
	Session string     `json:"session" arg:"1" help:"the session id (ses_...) to drop from the index, with its subagents"`
	Source  SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"the source that holds it (needed when several do)"`
}

// Validate checks the params.
func (p *ForgetParams) Validate() error {
	if p.Session == "" {
		return &ParamError{Field: "session", Msg: "is required; see `recall sessions` for ids"}
	}
	_, err := p.Source.one()
	return err
}

// Forget is `forget`: drop a session from Recall's index for good.
var Forget = Register(&Command[ForgetParams, engine.ForgetResult]{
	Name:    "forget",
	Summary: "drop a session from Recall's index for good (OpenCode's own history is not touched)",
	Doors:   CLI | Server, // writes only Recall's own index
	Sync:    true,
	Run: func(ctx context.Context, env *Env, p *ForgetParams) (engine.ForgetResult, error) {
		res, err := env.Engine.Forget(ctx, p.Session, p.Source.names()...)
		if errors.Is(err, engine.ErrUnknownID) {
			// Bad input, not a failure: exit 2, -32602.
			return res, &ParamError{Field: "session", Msg: fmt.Sprintf("%q is not in the index (a typo, or forgotten already); run `recall sessions` to list session ids", clipText(p.Session, 80))}
		}
		if errors.Is(err, engine.ErrAmbiguousID) {
			return res, &ParamError{Field: "source", Msg: err.Error()}
		}
		return res, err
	},
	Print: func(w io.Writer, r engine.ForgetResult) error {
		_, err := fmt.Fprintf(w, "forgot %s; it stays in OpenCode but Recall will not index it again\n", strings.Join(r.Forgotten, ", "))
		return err
	},
})

// clipText cuts s to at most n bytes on a rune boundary, for messages that
// quote input.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
