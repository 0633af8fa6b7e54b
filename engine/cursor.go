package engine

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine/index"
)

// ErrBadCursor is returned for a cursor that is malformed, altered, signed
// with another key, names a source that is not open, or points at history
// that is gone.
var ErrBadCursor = errors.New("bad cursor")

// A cursor names one place in one history by OpenCode's own ids, so it
// survives anything that rebuilds an index (sync --force, a damaged index
// rebuilt, the index file deleted), and it is short enough for an agent to
// carry a page of them:
//
//	c1:<source>:<id>[.<hint>].<tag>      c1:local:prt_228a8e71b001xn0ZJQ343fSPfT.Xy7q9Zk2
//
// id is the most specific of part, message and session (the shard's index
// finds a part's message and session); hint is one letter of a paging hint
// (s start, e end, h head, t tail); tag is an HMAC-SHA256 of the rest,
// keyed by the user's cursor key (cursorkey.go), cut to cursorTagBytes: an
// edited or made-up cursor is refused rather than read somewhere else.
const (
	cursorPrefix = "c1:"
	// oldCursorPrefix is the format before sources (an index-bound,
	// base64 payload of ~96 characters).
	oldCursorPrefix = "rc1."
	// cursorTagBytes: 48 bits (8 base64 characters) make a guessed tag
	// succeed once in 2^48 tries, each a round trip to the server; a
	// forged cursor would only reach what an id names anyway (read takes
	// bare ids), so the tag guards against edits, not secrets.
	cursorTagBytes = 6
)

// Cursor names a place in a session: a message (and the part a hit was in),
// with a hint for how a read should page from it.
type Cursor struct {
	Source    string
	SessionID string
	MessageID string // "" = the session's start
	PartID    string
	Hint      string // "", "start" (window starts here), "end" (window ends here), "head", "tail"
}

var hintChars = map[string]string{"start": "s", "end": "e", "head": "h", "tail": "t"}

// idKinds are the id kinds a cursor names, by the one letter an id without
// OpenCode's prefix is marked with.
var idKinds = map[byte]string{'s': "session", 'm': "message", 'p': "part"}

// encodeCursor signs c with the user's cursor key.
func (e *Engine) encodeCursor(c Cursor) string {
	r := cursorRef{source: c.Source, kind: "session", id: c.SessionID, hint: c.Hint}
	switch {
	case c.PartID != "" && (IDKind(c.PartID) == "part" || c.MessageID == ""):
		r.kind, r.id = "part", c.PartID
	case c.MessageID != "":
		// A part id OpenCode did not give (the v2 engine's parts are
		// "msg_…#N", made up by the reader) adds nothing a read needs:
		// the message's id is shorter and as stable.
		r.kind, r.id = "message", c.MessageID
	}
	return e.encodeRef(r)
}

func (e *Engine) encodeRef(r cursorRef) string {
	body := r.source + ":" + encodeID(r.kind, r.id)
	if h := hintChars[r.hint]; h != "" {
		body += "." + h
	}
	return cursorPrefix + body + "." + e.cursorTag(body)
}

// encodeID writes an OpenCode id as it is; any other id (a reader of
// another history) as ~, its kind's letter and its base64.
func encodeID(kind, id string) string {
	if IDKind(id) == kind && plainID(id) {
		return id
	}
	return "~" + kind[:1] + base64.RawURLEncoding.EncodeToString([]byte(id))
}

func plainID(id string) bool {
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b == '_' || (b >= '0' && b <= '9') || (b|0x20 >= 'a' && b|0x20 <= 'z')) {
			return false
		}
	}
	return id != ""
}

func (e *Engine) cursorTag(body string) string {
	m := hmac.New(sha256.New, e.key)
	m.Write([]byte(cursorPrefix + body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:cursorTagBytes])
}

// cursorRef is a decoded cursor before its ids are resolved: the source,
// one id and its kind.
type cursorRef struct {
	source, kind, id, hint string
}

// decodeCursor checks a cursor's form and signature.
func (e *Engine) decodeCursor(s string) (cursorRef, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, oldCursorPrefix) {
		return cursorRef{}, fmt.Errorf("%w: the cursor was made by an older recall (before cursors named their source); run the search again for a new one", ErrBadCursor)
	}
	body, ok := strings.CutPrefix(s, cursorPrefix)
	dot := strings.LastIndexByte(body, '.')
	if !ok || dot < 0 {
		return cursorRef{}, fmt.Errorf("%w: %q is not a recall cursor; use the cursor field of a search or read result", ErrBadCursor, clip(s, 40))
	}
	body, tag := body[:dot], body[dot+1:]
	if !hmac.Equal([]byte(e.cursorTag(body)), []byte(tag)) {
		return cursorRef{}, fmt.Errorf("%w: the cursor was signed with another key (another user's or machine's recall) or was altered; run the search again", ErrBadCursor)
	}
	malformed := fmt.Errorf("%w: malformed cursor; run the search again", ErrBadCursor)
	var r cursorRef
	r.source, body, ok = strings.Cut(body, ":")
	if !ok || r.source == "" {
		return r, malformed
	}
	if i := len(body) - 2; i > 0 && body[i] == '.' {
		for hint, ch := range hintChars {
			if body[i+1:] == ch {
				r.hint = hint
			}
		}
		if r.hint == "" {
			return r, malformed
		}
		body = body[:i]
	}
	if strings.HasPrefix(body, "~") {
		if len(body) < 2 || idKinds[body[1]] == "" {
			return r, malformed
		}
		raw, err := base64.RawURLEncoding.DecodeString(body[2:])
		if err != nil || len(raw) == 0 {
			return r, malformed
		}
		r.kind, r.id = idKinds[body[1]], string(raw)
		if encodeID(r.kind, r.id) != body {
			return r, malformed // one spelling per id, so a cursor round-trips
		}
		return r, nil
	}
	if r.kind = IDKind(body); r.kind == "" || !plainID(body) {
		return r, malformed
	}
	r.id = body
	return r, nil
}

// resolveCursor finds what a cursor names in its source's index: its
// shard, and the session and message a part or message id belongs to.
func (e *Engine) resolveCursor(ctx context.Context, s string) (*shard, Cursor, error) {
	r, err := e.decodeCursor(s)
	if err != nil {
		return nil, Cursor{}, err
	}
	sh := e.shard(r.source)
	if sh == nil {
		return nil, Cursor{}, fmt.Errorf("%w: the cursor names source %q, which is not open (open sources: %s); open it (--db %s=PATH, or a [[source]] in the config) or search again",
			ErrBadCursor, r.source, strings.Join(e.SourceNames(), ", "), r.source)
	}
	c, err := sh.locate(ctx, r.kind, r.id)
	c.Hint = r.hint
	return sh, c, err
}

// locate finds the session (and message) an id of kind names in the
// shard's index.
func (sh *shard) locate(ctx context.Context, kind, id string) (Cursor, error) {
	c := Cursor{Source: sh.name}
	switch kind {
	case "session":
		c.SessionID = id
	case "message":
		c.MessageID = id
		sid, ok, err := sh.ix.MessageSession(ctx, id)
		if err != nil {
			return c, sh.wrap(err)
		}
		if !ok {
			return c, fmt.Errorf("%w: message %s is no longer in the history of %s (its session was deleted, forgotten or changed); search again", ErrBadCursor, id, sh.name)
		}
		c.SessionID = sid
	case "part":
		c.PartID = id
		sid, mid, ok, err := sh.ix.PartLocation(ctx, id)
		if err != nil {
			return c, sh.wrap(err)
		}
		if !ok {
			return c, fmt.Errorf("%w: part %s is no longer in the history of %s (its session was deleted, forgotten or changed); search again", ErrBadCursor, id, sh.name)
		}
		c.SessionID, c.MessageID = sid, mid
	}
	return c, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// SessionCursor is a cursor at a session's start, or at one of its
// messages, for callers that hold ids (transcript URIs): in the named
// source, or the first that holds the session. A message that is not in
// that session is ErrBadCursor, like a cursor gone stale.
func (e *Engine) SessionCursor(ctx context.Context, source, sessionID, messageID string) (string, error) {
	sh, _, err := e.findSession(ctx, source, sessionID)
	if errors.Is(err, index.ErrNoSession) {
		return "", fmt.Errorf("%w: session %s is no longer in the history (deleted or forgotten); search again", ErrBadCursor, sessionID)
	} else if err != nil {
		return "", err
	}
	c := Cursor{Source: sh.name, SessionID: sessionID, MessageID: messageID}
	if messageID != "" {
		if _, err := sh.ix.MessageOrd(ctx, sessionID, messageID); err != nil {
			return "", fmt.Errorf("%w: message %s is no longer in session %s (the session changed); search again", ErrBadCursor, messageID, sessionID)
		}
	}
	return e.encodeCursor(c), nil
}
