package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ErrBadCursor is returned for a cursor that is malformed, altered, made by
// another index, or points at history that is gone.
var ErrBadCursor = errors.New("bad cursor")

// cursorPrefix versions the cursor format.
const cursorPrefix = "rc1"

// Cursor names a place in a session: a message (and the part a hit was in),
// with a hint for how a read should page from it.
type Cursor struct {
	SessionID string
	MessageID string // "" = the session's start
	PartID    string
	Hint      string // "", "start" (window starts here), "end" (window ends here), "head", "tail"
}

// encodeCursor signs c with the index's key, so a cursor cannot be edited
// to reach another place and a cursor from another index is recognised.
func (e *Engine) encodeCursor(c Cursor) string {
	payload := strings.Join([]string{c.SessionID, c.MessageID, c.PartID, c.Hint}, "|")
	p := base64.RawURLEncoding.EncodeToString([]byte(payload))
	return cursorPrefix + "." + p + "." + e.cursorMAC(p)
}

func (e *Engine) cursorMAC(payload string) string {
	m := hmac.New(sha256.New, e.key)
	m.Write([]byte(cursorPrefix + payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:12])
}

// decodeCursor checks and opens a cursor.
func (e *Engine) decodeCursor(s string) (Cursor, error) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] != cursorPrefix {
		return Cursor{}, fmt.Errorf("%w: %q is not a recall cursor; use the cursor field of a search or read result", ErrBadCursor, clip(s, 40))
	}
	if !hmac.Equal([]byte(e.cursorMAC(parts[1])), []byte(parts[2])) {
		return Cursor{}, fmt.Errorf("%w: the cursor was made by another index or was altered; run the search again", ErrBadCursor)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: undecodable cursor; run the search again", ErrBadCursor)
	}
	f := strings.Split(string(raw), "|")
	if len(f) != 4 || f[0] == "" {
		return Cursor{}, fmt.Errorf("%w: malformed cursor; run the search again", ErrBadCursor)
	}
	return Cursor{SessionID: f[0], MessageID: f[1], PartID: f[2], Hint: f[3]}, nil
}

// SessionCursor is a cursor at a session's start, for callers that hold a
// session id (hover, transcripts).
func (e *Engine) SessionCursor(sessionID, messageID string) string {
	return e.encodeCursor(Cursor{SessionID: sessionID, MessageID: messageID})
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
