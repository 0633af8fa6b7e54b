package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/recallhq/recall/engine"
)

// CiteParams are the params of `cite`.
type CiteParams struct {
	Target string     `json:"target" arg:"1" help:"what to cite: a ses_/msg_/prt_ id, a cursor, or a recall: transcript URI"`
	Source SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"with an id: the source that holds it (default: the first that does)"`
}

// Validate checks the params.
func (p *CiteParams) Validate() error {
	if strings.TrimSpace(p.Target) == "" {
		return &ParamError{Field: "target", Msg: "is required; pass a ses_/msg_ id, a cursor from search, or a transcript's recall: URI"}
	}
	_, err := p.Source.one()
	return err
}

// Cite is `cite`: a one-line citation of a session or message, and the
// command that resumes the session in OpenCode.
var Cite = Register(&Command[CiteParams, engine.Citation]{
	Name:    "cite",
	Summary: "a one-line citation of a session or message, and the command that resumes it in OpenCode",
	Doors:   CLI | Server,
	Sync:    true,
	Warm:    true,
	Run: func(ctx context.Context, env *Env, p *CiteParams) (engine.Citation, error) {
		res, err := env.Engine.Cite(ctx, p.Target, p.Source.names()...)
		if errors.Is(err, engine.ErrUnknownID) || errors.Is(err, engine.ErrBadCursor) || errors.Is(err, engine.ErrBadURI) {
			err = &ParamError{Field: "target", Msg: err.Error()}
		}
		return res, err
	},
	Print: func(w io.Writer, c engine.Citation) error {
		_, err := fmt.Fprintf(w, "%s\nresume: cd %s && %s\n", c.Citation, shellWord(c.Resume.Cwd), strings.Join(c.Resume.Argv, " "))
		return err
	},
})

// shellWord is s as one shell word: as it is when nothing in it needs
// quoting (a plain path reads better), else single-quoted.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return shellQuote(s)
}
