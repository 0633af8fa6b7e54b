package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/render"
)

// Read limits (messages per window).
const (
	DefaultReadLimit = 12
	MaxReadLimit     = 50
	MaxFullLimit     = 500
	// MaxWindowBytes bounds the text of one window. Each part is already cut
	// for display (render.Display*), so only long windows of long messages
	// reach it; the window then ends early, says partial, and its next
	// cursor continues where it stopped.
	MaxWindowBytes = 1 << 20
)

// ReadParams is one read.
type ReadParams struct {
	Cursor string
	Mode   string // around | next | prev | head | tail | full; "" = the cursor's own hint, else around
	Limit  int
	Format string // chatml | markdown | json
}

// Range locates a window in its session (1-based, inclusive).
type Range struct {
	First int `json:"first"`
	Last  int `json:"last"`
	Total int `json:"total"`
}

// ReadResult is a window.
type ReadResult struct {
	Text     string          `json:"text"`
	Format   string          `json:"format"`
	Session  SessionInfo     `json:"session"`
	Range    Range           `json:"range"`
	Anchor   string          `json:"anchor,omitempty"`
	Partial  bool            `json:"partial,omitempty"`
	Nav      render.Nav      `json:"nav"`
	Messages []model.Message `json:"messages,omitempty"`
}

// Read returns the window a cursor names.
func (e *Engine) Read(ctx context.Context, p ReadParams) (ReadResult, error) {
	c, err := e.decodeCursor(p.Cursor)
	if err != nil {
		return ReadResult{}, err
	}
	s, err := e.ix.Session(ctx, c.SessionID)
	if errors.Is(err, index.ErrNoSession) {
		return ReadResult{}, fmt.Errorf("%w: session %s is no longer in the history (deleted or forgotten); search again", ErrBadCursor, c.SessionID)
	} else if err != nil {
		return ReadResult{}, err
	}
	total := s.Messages
	mode := p.Mode
	if mode == "" {
		switch c.Hint {
		case "start":
			mode = "start"
		case "end":
			mode = "end"
		case "head", "tail":
			mode = c.Hint
		default:
			mode = "around"
		}
	}
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	if mode == "full" {
		limit = min(limit, MaxFullLimit)
		if p.Limit <= 0 {
			limit = MaxFullLimit
		}
	} else {
		limit = min(limit, MaxReadLimit)
	}
	anchor := 0
	if c.MessageID != "" {
		anchor, err = e.ix.MessageOrd(ctx, c.SessionID, c.MessageID)
		if err != nil {
			return ReadResult{}, fmt.Errorf("%w: message %s is no longer in session %s (the session changed); search again", ErrBadCursor, c.MessageID, c.SessionID)
		}
	}
	first, last := window(mode, anchor, limit, total)
	res := ReadResult{Format: p.Format, Anchor: c.MessageID, Range: Range{First: first + 1, Last: last + 1, Total: total}}
	if res.Format == "" {
		res.Format = "chatml"
	}
	res.Session = e.sessionInfo(s, nil)
	var msgs []model.Message
	if total > 0 && last >= first {
		msgs, err = e.ix.Window(ctx, c.SessionID, first, last)
		if err != nil {
			return ReadResult{}, err
		}
		if kept := fitWindow(msgs, MaxWindowBytes); kept < len(msgs) {
			msgs = msgs[:kept]
			last = first + kept - 1
			res.Range.Last = last + 1
			res.Partial = true
		}
	}
	e.showMessages(msgs)
	nav, err := e.nav(ctx, c.SessionID, first, last, total)
	if err != nil {
		return ReadResult{}, err
	}
	res.Nav = nav
	w := render.Window{SessionID: s.ID, Title: e.show(s.Title), Directory: s.Directory, ParentID: s.ParentID, Anchor: c.MessageID,
		First: first, Last: last, Total: total, Messages: msgs, Nav: nav}
	switch res.Format {
	case "markdown":
		res.Text = render.Markdown(w)
	case "json":
		res.Messages = msgs
	default:
		res.Text = render.ChatML(w)
	}
	return res, nil
}

// window picks the message range [first, last] for a mode. Around a hit
// shows a third before it and the rest after: the answer follows the
// question.
func window(mode string, anchor, limit, total int) (int, int) {
	if total == 0 {
		return 0, -1
	}
	var first int
	switch mode {
	case "head":
		first = 0
	case "tail":
		first = total - limit
	case "next":
		first = anchor + 1
	case "start":
		first = anchor
	case "prev":
		first = anchor - limit
	case "end":
		first = anchor - limit + 1
	case "full":
		first = 0
	default: // around
		first = anchor - (limit-1)/3
	}
	if first > total-limit && mode != "next" {
		first = total - limit
	}
	if first < 0 {
		first = 0
	}
	last := min(first+limit-1, total-1)
	if mode == "prev" {
		last = min(last, anchor-1)
	}
	if mode == "next" && first >= total {
		first, last = total, total-1 // past the end: an empty window
	}
	return first, last
}

func (e *Engine) nav(ctx context.Context, sessionID string, first, last, total int) (render.Nav, error) {
	var nav render.Nav
	if total == 0 {
		nav.Head = e.encodeCursor(Cursor{SessionID: sessionID, Hint: "head"})
		nav.Tail = e.encodeCursor(Cursor{SessionID: sessionID, Hint: "tail"})
		return nav, nil
	}
	at := func(ord int, hint string) (string, error) {
		id, err := e.ix.MessageIDAt(ctx, sessionID, ord)
		if err != nil {
			return "", fmt.Errorf("build cursor: %w", err)
		}
		return e.encodeCursor(Cursor{SessionID: sessionID, MessageID: id, Hint: hint}), nil
	}
	var err error
	if first > 0 {
		if nav.Prev, err = at(min(first-1, total-1), "end"); err != nil {
			return nav, err
		}
	}
	if last < total-1 {
		if nav.Next, err = at(last+1, "start"); err != nil {
			return nav, err
		}
	}
	nav.Head = e.encodeCursor(Cursor{SessionID: sessionID, Hint: "head"})
	nav.Tail = e.encodeCursor(Cursor{SessionID: sessionID, Hint: "tail"})
	return nav, nil
}

// fitWindow returns how many leading messages fit in budget bytes of
// displayed text (always at least one).
func fitWindow(msgs []model.Message, budget int) int {
	size := 0
	for i, m := range msgs {
		for _, p := range m.Parts {
			size += min(len(p.Text), render.DisplayTextMax) + min(len(p.Input), render.DisplayInputMax) +
				min(len(p.Output)+len(p.Error), render.DisplayOutputHead+render.DisplayOutputTail) + 200
		}
		if size > budget && i > 0 {
			return i
		}
	}
	return len(msgs)
}
