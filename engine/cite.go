package engine

import (
	"context"
	"fmt"
	"strings"
)

// Resume is what continues a session in OpenCode: run Argv in Cwd (the
// session's directory). `opencode --session <id>` is opencode-ai 1.18's
// flag for it ("-s, --session  session id to continue").
type Resume struct {
	Cwd  string   `json:"cwd"`
	Argv []string `json:"argv"`
}

// Citation names a session (and a message of it) in one line, with what
// resumes it.
type Citation struct {
	// Citation is the one line: "<title> (ses_…, msg_…, 2026-12-01)".
	Citation  string `json:"citation"`
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId,omitempty"`
	Source    string `json:"source"`
	Title     string `json:"title"`
	Time      string `json:"time"` // the message's time, else the session's last activity (UTC)
	Directory string `json:"directory"`
	URI       string `json:"uri"`
	Resume    Resume `json:"resume"`
}

// Cite names what target points at: a ses_/msg_/prt_ id, a cursor, or a
// recall: transcript URI (around a message, or the session).
func (e *Engine) Cite(ctx context.Context, target string, sources ...string) (Citation, error) {
	target = strings.TrimSpace(target)
	id := target
	switch {
	case strings.HasPrefix(target, TranscriptScheme+":"):
		t, err := ParseTranscript(target)
		if err != nil {
			return Citation{}, err
		}
		id = t.SessionID
		if t.Around != "" {
			id = t.Around
		}
		if t.Source != "" {
			sources = []string{t.Source}
		}
	case IDKind(target) == "" && !strings.HasPrefix(target, cursorPrefix):
		return Citation{}, fmt.Errorf("%w: %q is neither a ses_/msg_/prt_ id, a cursor nor a recall: URI", ErrUnknownID, clip(target, 40))
	case IDKind(target) == "":
		sh, c, err := e.resolveCursor(ctx, target)
		if err != nil {
			return Citation{}, err
		}
		id, sources = c.SessionID, []string{sh.name}
		if c.MessageID != "" {
			id = c.MessageID
		}
	}
	pv, err := e.Lookup(ctx, id, sources...)
	if err != nil {
		return Citation{}, err
	}
	s := pv.Session
	c := Citation{SessionID: s.ID, MessageID: pv.MessageID, Source: s.Source, Title: s.Title, Time: pv.Time,
		Directory: s.Directory, URI: pv.URI, Resume: Resume{Cwd: s.Directory, Argv: []string{"opencode", "--session", s.ID}}}
	ids := s.ID
	if c.MessageID != "" {
		ids += ", " + c.MessageID
	}
	day := c.Time
	if len(day) >= 10 {
		day = day[:10]
	}
	c.Citation = fmt.Sprintf("%s (%s, %s)", s.Title, ids, day)
	return c, nil
}
