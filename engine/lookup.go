package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/render"
)

// ErrUnknownID is returned by Lookup for an id the index does not hold.
var ErrUnknownID = errors.New("id not in the index")

// Preview is what one OpenCode id (ses_…, msg_…, prt_…) names: its session,
// and for message and part ids the message, for hovers and quick looks.
type Preview struct {
	ID        string         `json:"id"`
	Kind      string         `json:"kind"` // session | message | part
	Session   SessionInfo    `json:"session"`
	MessageID string         `json:"messageId,omitempty"`
	PartID    string         `json:"partId,omitempty"`
	Message   *model.Message `json:"message,omitempty"` // the message, parts in order
	Time      string         `json:"time"`              // the message's time, else the session's last activity
	Cursor    string         `json:"cursor"`            // a read cursor at the message (or the session's head)
	URI       string         `json:"uri"`               // its transcript (recall:), around the message
}

// IDKind says which kind of OpenCode id s looks like ("" for none).
func IDKind(s string) string {
	switch {
	case strings.HasPrefix(s, "ses_"):
		return "session"
	case strings.HasPrefix(s, "msg_"):
		return "message"
	case strings.HasPrefix(s, "prt_"):
		return "part"
	}
	return ""
}

// Lookup resolves an OpenCode id through the indexes (indexed lookups
// only): in the named sources, or every one, the first in source order
// that holds it answers.
func (e *Engine) Lookup(ctx context.Context, id string, sources ...string) (Preview, error) {
	p := Preview{ID: id, Kind: IDKind(id)}
	if p.Kind == "" {
		return p, fmt.Errorf("%w: %q is not a ses_, msg_ or prt_ id", ErrUnknownID, clip(id, 40))
	}
	shs, err := e.shardsFor(sources)
	if err != nil {
		return p, err
	}
	for _, sh := range shs {
		pv, err := e.lookupIn(ctx, sh, id)
		if !errors.Is(err, ErrUnknownID) {
			return pv, err
		}
	}
	return p, fmt.Errorf("%w: %s", ErrUnknownID, id)
}

func (e *Engine) lookupIn(ctx context.Context, sh *shard, id string) (Preview, error) {
	p := Preview{ID: id, Kind: IDKind(id)}
	sessionID := ""
	found := true
	var err error
	switch p.Kind {
	case "session":
		sessionID = id
	case "message":
		p.MessageID = id
		sessionID, found, err = sh.ix.MessageSession(ctx, id)
	case "part":
		p.PartID = id
		sessionID, p.MessageID, found, err = sh.ix.PartLocation(ctx, id)
	}
	if err != nil {
		return p, err
	}
	if !found {
		return p, fmt.Errorf("%w: %s", ErrUnknownID, id)
	}
	s, err := sh.ix.Session(ctx, sessionID)
	if errors.Is(err, index.ErrNoSession) {
		return p, fmt.Errorf("%w: %s", ErrUnknownID, id)
	} else if err != nil {
		return p, err
	}
	p.Session = e.sessionInfo(sh, s, nil)
	p.Time = p.Session.Updated
	p.Cursor = p.Session.Cursor
	p.URI = p.Session.URI
	if p.MessageID == "" {
		return p, nil
	}
	ord, err := sh.ix.MessageOrd(ctx, sessionID, p.MessageID)
	if err != nil {
		return p, fmt.Errorf("%w: %s", ErrUnknownID, id)
	}
	msgs, err := sh.ix.Window(ctx, sessionID, ord, ord)
	if err != nil {
		return p, err
	}
	e.showMessages(msgs) // a hover is an output: secrets redacted like read's
	if len(msgs) == 1 {
		p.Message = &msgs[0]
		p.Time = render.Time(msgs[0].Created)
	}
	p.Cursor = e.encodeCursor(Cursor{Source: sh.name, SessionID: sessionID, MessageID: p.MessageID, PartID: p.PartID})
	p.URI = TranscriptURI(sh.name, sessionID, p.Session.Title, p.MessageID)
	return p, nil
}
