package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
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

// ReadMode says which window of a session a read returns, relative to its
// cursor. It belongs to the engine, not to render: it picks messages, and
// render draws whatever window it is given.
type ReadMode string

// The read modes a caller may ask for.
const (
	ReadAround ReadMode = "around" // the cursor's message, a third of the window before it
	ReadNext   ReadMode = "next"   // the window after the cursor's message
	ReadPrev   ReadMode = "prev"   // the window before it
	ReadHead   ReadMode = "head"   // the session's first window
	ReadTail   ReadMode = "tail"   // its last window
	ReadFull   ReadMode = "full"   // the whole session (up to MaxFullLimit)
)

// ReadModes lists the valid ReadMode values.
var ReadModes = []ReadMode{ReadAround, ReadNext, ReadPrev, ReadHead, ReadTail, ReadFull}

// Modes a cursor's hint selects (a nav cursor continues a page where the
// last one ended); they cannot be asked for.
const (
	readStart ReadMode = "start" // the window starts at the cursor's message
	readEnd   ReadMode = "end"   // the window ends at it
)

// ParseReadMode reads a read mode ("" is "": the cursor's own hint decides).
func ParseReadMode(s string) (ReadMode, error) {
	if m := ReadMode(s); s == "" || slices.Contains(ReadModes, m) {
		return m, nil
	}
	return "", fmt.Errorf("%q is not one of %s", s, query.Join(ReadModes))
}

// ReadParams is one read.
type ReadParams struct {
	// Cursor is a cursor from a search, listing or read, or an OpenCode
	// id (ses_, msg_, prt_): then Source names its history, or the first
	// source in source order that holds it answers (the result's session
	// says which).
	Cursor string
	Source string
	Mode   ReadMode // "" = the cursor's own hint, else around
	Limit  int
	Format render.Format // one of render.ReadFormats; "" = chatml
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
	Format   render.Format   `json:"format"`
	Session  SessionInfo     `json:"session"`
	Range    Range           `json:"range"`
	Anchor   string          `json:"anchor,omitempty"`
	Partial  bool            `json:"partial,omitempty"`
	Nav      render.Nav      `json:"nav"`
	Messages []model.Message `json:"messages,omitempty"`
}

// Read returns the window a cursor names.
func (e *Engine) Read(ctx context.Context, p ReadParams) (ReadResult, error) {
	sh, c, err := e.readTarget(ctx, p)
	if err != nil {
		return ReadResult{}, err
	}
	s, err := sh.ix.Session(ctx, c.SessionID)
	if errors.Is(err, index.ErrNoSession) {
		return ReadResult{}, fmt.Errorf("%w: session %s is no longer in the history (deleted or forgotten); search again", ErrBadCursor, c.SessionID)
	} else if err != nil {
		return ReadResult{}, sh.wrap(err)
	}
	total := s.Messages
	mode := p.Mode
	if mode == "" {
		switch c.Hint {
		case "start":
			mode = readStart
		case "end":
			mode = readEnd
		case "head", "tail":
			mode = ReadMode(c.Hint)
		default:
			mode = ReadAround
		}
	}
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	if mode == ReadFull {
		limit = min(limit, MaxFullLimit)
		if p.Limit <= 0 {
			limit = MaxFullLimit
		}
	} else {
		limit = min(limit, MaxReadLimit)
	}
	anchor := 0
	if c.MessageID != "" {
		anchor, err = sh.ix.MessageOrd(ctx, c.SessionID, c.MessageID)
		if err != nil {
			return ReadResult{}, fmt.Errorf("%w: message %s is no longer in session %s (the session changed); search again", ErrBadCursor, c.MessageID, c.SessionID)
		}
	}
	first, last := window(mode, anchor, limit, total)
	res := ReadResult{Format: p.Format, Anchor: c.MessageID, Range: Range{First: first + 1, Last: last + 1, Total: total}}
	if res.Format == "" {
		res.Format = render.FormatChatML
	}
	res.Session = e.sessionInfo(sh, s, nil)
	var msgs []model.Message
	if total > 0 && last >= first {
		msgs, err = sh.ix.Window(ctx, c.SessionID, first, last)
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
	nav, err := e.nav(ctx, sh, c.SessionID, first, last, total)
	if err != nil {
		return ReadResult{}, err
	}
	res.Nav = nav
	w := render.Window{Source: sh.name, SessionID: s.ID, Title: e.show(s.Title), Directory: s.Directory, ParentID: s.ParentID, Anchor: c.MessageID,
		First: first, Last: last, Total: total, Messages: msgs, Nav: nav}
	switch res.Format {
	case render.FormatMarkdown:
		res.Text = render.Markdown(w)
	case render.FormatJSON:
		res.Messages = msgs
	default:
		res.Text = render.ChatML(w)
	}
	return res, nil
}

// readTarget is what a read starts from: a cursor's place, or a bare
// OpenCode id's in the named source or the first that holds it.
func (e *Engine) readTarget(ctx context.Context, p ReadParams) (*shard, Cursor, error) {
	kind := IDKind(strings.TrimSpace(p.Cursor))
	if kind == "" {
		sh, c, err := e.resolveCursor(ctx, p.Cursor)
		if err == nil && p.Source != "" && p.Source != sh.name {
			err = fmt.Errorf("%w: the cursor names source %q, not %q; drop --source (a cursor knows its source)", ErrBadCursor, sh.name, p.Source)
		}
		return sh, c, err
	}
	id := strings.TrimSpace(p.Cursor)
	if !plainID(id) {
		return nil, Cursor{}, fmt.Errorf("%w: %q is not an OpenCode id or a recall cursor", ErrBadCursor, clip(id, 40))
	}
	var names []string
	if p.Source != "" {
		names = []string{p.Source}
	}
	shs, err := e.shardsFor(names)
	if err != nil {
		return nil, Cursor{}, err
	}
	var first error
	for _, sh := range shs {
		c, err := sh.locate(ctx, kind, id)
		if err == nil && kind == "session" {
			if _, err = sh.ix.Session(ctx, id); errors.Is(err, index.ErrNoSession) {
				err = fmt.Errorf("%w: session %s is no longer in the history (deleted or forgotten); search again", ErrBadCursor, id)
			}
		}
		if errors.Is(err, ErrBadCursor) {
			first = cmp.Or(first, err)
			continue // not in this source
		}
		return sh, c, sh.wrap(err)
	}
	return nil, Cursor{}, first
}

// window picks the message range [first, last] for a mode. Around a hit
// shows a third before it and the rest after: the answer follows the
// question.
func window(mode ReadMode, anchor, limit, total int) (int, int) {
	if total == 0 {
		return 0, -1
	}
	var first int
	switch mode {
	case ReadHead:
		first = 0
	case ReadTail:
		first = total - limit
	case ReadNext:
		first = anchor + 1
	case readStart:
		first = anchor
	case ReadPrev:
		first = anchor - limit
	case readEnd:
		first = anchor - limit + 1
	case ReadFull:
		first = 0
	default: // around
		first = anchor - (limit-1)/3
	}
	if first > total-limit && mode != ReadNext {
		first = total - limit
	}
	if first < 0 {
		first = 0
	}
	last := min(first+limit-1, total-1)
	if mode == ReadPrev {
		last = min(last, anchor-1)
	}
	if mode == ReadNext && first >= total {
		first, last = total, total-1 // past the end: an empty window
	}
	return first, last
}

func (e *Engine) nav(ctx context.Context, sh *shard, sessionID string, first, last, total int) (render.Nav, error) {
	var nav render.Nav
	if total == 0 {
		nav.Head = e.encodeCursor(Cursor{Source: sh.name, SessionID: sessionID, Hint: "head"})
		nav.Tail = e.encodeCursor(Cursor{Source: sh.name, SessionID: sessionID, Hint: "tail"})
		return nav, nil
	}
	at := func(ord int, hint string) (string, error) {
		id, err := sh.ix.MessageIDAt(ctx, sessionID, ord)
		if err != nil {
			return "", fmt.Errorf("build cursor: %w", err)
		}
		return e.encodeCursor(Cursor{Source: sh.name, SessionID: sessionID, MessageID: id, Hint: hint}), nil
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
	nav.Head = e.encodeCursor(Cursor{Source: sh.name, SessionID: sessionID, Hint: "head"})
	nav.Tail = e.encodeCursor(Cursor{Source: sh.name, SessionID: sessionID, Hint: "tail"})
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
