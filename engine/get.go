package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
)

// Get budgets, in characters (runes) of the page's text.
const (
	// DefaultGetLength is a page of get, about 2,500 tokens for an agent:
	// on the public fixtures' part texts and tool outputs a cl100k_base
	// token covers 3.1-3.3 characters (v1 3.08, secrets2 3.28; measured
	// with tiktoken-go), so 8,000 characters are
	// 2,400-2,600 tokens: one tool result's worth, and every part of the
	// fixtures but W1's 51 KB build output fits in one page.
	DefaultGetLength = 8000
	// MaxGetLength bounds one page (~25k tokens): the rest is one more
	// call away, and no single answer should fill an agent's context.
	MaxGetLength = 100_000
)

// ErrNotFound is an id or cursor get cannot find in any open history.
var ErrNotFound = errors.New("not found")

// GetParams is one get: a part, a message or a hit cursor, and the page.
type GetParams struct {
	// ID is a part id (prt_…, or msg_…#N of the v2 engine), a message id
	// (msg_…) or a cursor from a search hit.
	ID     string
	Source string // with a bare id: the source that holds it ("" = the first that does)
	Offset int    // characters to skip
	Length int    // characters of the page (0 = DefaultGetLength, at most MaxGetLength)
}

// GetResult is one page of a part or a message exactly as OpenCode stored
// it (read from the history, not from the index), redacted like every
// output unless --no-redact.
type GetResult struct {
	Source    string `json:"source"`
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId"`
	PartID    string `json:"partId,omitempty"`
	// Kind is the part's kind (text, reasoning, tool, ...), or "message"
	// for a whole message.
	Kind   string `json:"kind"`
	Role   string `json:"role"`
	Tool   string `json:"tool,omitempty"`
	Status string `json:"status,omitempty"`
	// Input is a tool part's input (compact JSON), cut at MaxGetLength
	// characters (InputChars says how long it was then).
	Input      string `json:"input,omitempty"`
	InputChars int    `json:"inputChars,omitempty"`
	// Text is this page: a tool part's output (or its error), another
	// part's text, or a message's parts in order, each under a header.
	Text          string `json:"text"`
	Offset        int    `json:"offset"`
	Length        int    `json:"length"`
	OriginalChars int    `json:"originalChars"`
	// NextOffset is the offset of the next page; null on the last.
	NextOffset *int `json:"nextOffset"`
	// Pruned: OpenCode compacted the output away (state.time.compacted):
	// the model no longer saw it, the history still holds it, and so
	// does this text.
	Pruned bool `json:"pruned"`
	// Redacted: secrets were replaced in the text or input.
	Redacted bool `json:"redacted,omitempty"`
	// Cursor reads the message's window (read).
	Cursor string `json:"cursor"`
}

// Get returns one page of a part or a message, read from the history.
func (e *Engine) Get(ctx context.Context, p GetParams) (GetResult, error) {
	id := strings.TrimSpace(p.ID)
	if p.Offset < 0 || p.Length < 0 {
		return GetResult{}, fmt.Errorf("%w: offset and length must not be negative", ErrOptions)
	}
	length := p.Length
	if length == 0 {
		length = DefaultGetLength
	}
	length = min(length, MaxGetLength)
	sh, c, err := e.getTarget(ctx, id, p.Source)
	if err != nil {
		return GetResult{}, err
	}
	msg, err := sh.readMessage(ctx, c.SessionID, c.MessageID)
	if err != nil {
		return GetResult{}, err
	}
	res := GetResult{Source: sh.name, SessionID: c.SessionID, MessageID: c.MessageID, Role: msg.Role, Kind: "message",
		Cursor: e.encodeCursor(Cursor{Source: sh.name, SessionID: c.SessionID, MessageID: c.MessageID})}
	var full string
	if c.PartID != "" {
		part := findPart(msg, c.PartID)
		if part == nil {
			return GetResult{}, fmt.Errorf("%w: part %s is no longer in message %s of %s (the history changed); search again", ErrNotFound, c.PartID, c.MessageID, sh.name)
		}
		res.PartID, res.Kind, res.Tool, res.Status, res.Pruned = part.ID, string(part.Kind), part.Tool, part.Status, part.Compacted
		full = partBody(part)
		if part.Kind == model.KindTool {
			in, n := e.showCounted(part.Input)
			res.Redacted = n > 0
			if chars := utf8.RuneCountInString(in); chars > MaxGetLength {
				in, res.InputChars = runeSlice(in, 0, MaxGetLength), chars
			}
			res.Input = in
		}
	} else {
		full = messageBody(msg)
		for _, part := range msg.Parts {
			res.Pruned = res.Pruned || part.Compacted
		}
	}
	// The whole text is redacted first and paged after, so a page
	// boundary can never cut a secret into two pieces no rule recognises.
	shown, n := e.showCounted(full)
	res.Redacted = res.Redacted || n > 0
	runes := []rune(shown)
	res.OriginalChars = len(runes)
	start := min(p.Offset, len(runes))
	end := min(start+length, len(runes))
	res.Text, res.Offset, res.Length = string(runes[start:end]), start, end-start
	if end < len(runes) {
		next := end
		res.NextOffset = &next
	}
	return res, nil
}

// showCounted is show that also says how many secrets it replaced.
func (e *Engine) showCounted(s string) (string, int) {
	if e.opts.NoRedact || s == "" {
		return s, 0
	}
	return e.redactor.String(s)
}

// getTarget finds the shard, session, message (and part) an id or a hit
// cursor names, through the indexes.
func (e *Engine) getTarget(ctx context.Context, id, source string) (*shard, Cursor, error) {
	var sh *shard
	var c Cursor
	var err error
	switch kind := IDKind(id); {
	case kind == "message" && strings.Contains(id, "#"):
		// A v2-engine part id (msg_…#N), which the reader makes up: the
		// index holds it as a part.
		sh, c, err = e.locateID(ctx, "part", id, source)
	case kind == "part" || kind == "message":
		if !plainID(id) {
			return nil, c, fmt.Errorf("%w: %q is not an OpenCode id or a recall cursor", ErrBadCursor, clip(id, 40))
		}
		sh, c, err = e.locateID(ctx, kind, id, source)
	case kind == "session":
		return nil, c, fmt.Errorf("%w: %s is a session; get takes a part (prt_…) or message (msg_…) id or a hit's cursor; read a session with recall read %s", ErrOptions, id, id)
	default:
		sh, c, err = e.resolveCursor(ctx, id)
		if err == nil && source != "" && source != sh.name {
			err = fmt.Errorf("%w: the cursor names source %q, not %q; drop --source (a cursor knows its source)", ErrBadCursor, sh.name, source)
		}
	}
	if err != nil {
		return nil, c, err
	}
	if c.MessageID == "" {
		return nil, c, fmt.Errorf("%w: the cursor names a whole session; get takes a part or message: pass a search hit's cursor, or a prt_/msg_ id from read", ErrOptions)
	}
	return sh, c, nil
}

// locateID finds a part or message id in the named source or the first
// that holds it.
func (e *Engine) locateID(ctx context.Context, kind, id, source string) (*shard, Cursor, error) {
	var names []string
	if source != "" {
		names = []string{source}
	}
	shs, err := e.shardsFor(names)
	if err != nil {
		return nil, Cursor{}, err
	}
	for _, sh := range shs {
		c, err := sh.locate(ctx, kind, id)
		if errors.Is(err, ErrBadCursor) {
			continue
		}
		return sh, c, err
	}
	return nil, Cursor{}, fmt.Errorf("%w: %s %s is in no open history (sources: %s); find ids with recall search (hits carry partId, messageId and a cursor)",
		ErrNotFound, kind, clip(id, 60), strings.Join(e.SourceNames(), ", "))
}

// errFound stops a message stream once the message was seen.
var errFound = errors.New("found")

// readMessage reads one message, with its parts, from the history itself.
func (sh *shard) readMessage(ctx context.Context, sessionID, messageID string) (*model.Message, error) {
	src := sh.source()
	if src == nil {
		return nil, fmt.Errorf("%w: the history of %s (%s) is missing, so get cannot read it; the index only holds a bounded copy (recall read shows it)", ErrNotFound, sh.name, sh.path)
	}
	// The session as the index knows it (its era says where its messages
	// are): listing every session of the history costs 140 ms on the
	// benchmark history, this one indexed lookup well under one.
	row, err := sh.ix.Session(ctx, sessionID)
	if errors.Is(err, index.ErrNoSession) {
		return nil, fmt.Errorf("%w: session %s is no longer in the history of %s (deleted?); search again", ErrNotFound, sessionID, sh.name)
	} else if err != nil {
		return nil, sh.wrap(err)
	}
	ss := &model.Session{ID: row.ID, ParentID: row.ParentID, Directory: row.Directory, Title: row.Title, Era: row.Era, Created: row.Created, Updated: row.Updated}
	var found *model.Message
	err = src.Messages(ctx, *ss, func(m *model.Message) error {
		if m.ID == messageID {
			found = m
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, fmt.Errorf("read %s: %w", sh.name, err)
	}
	if found == nil {
		return nil, fmt.Errorf("%w: message %s is no longer in session %s of %s (the history changed); search again", ErrNotFound, messageID, sessionID, sh.name)
	}
	return found, nil
}

func findPart(m *model.Message, id string) *model.Part {
	for i := range m.Parts {
		if m.Parts[i].ID == id {
			return &m.Parts[i]
		}
	}
	return nil
}

// partBody is what get pages of one part: a tool part's output (else its
// error), a patch's paths, any other part's text.
func partBody(p *model.Part) string {
	switch p.Kind {
	case model.KindTool:
		return p.OutputOrErrorRaw()
	case model.KindPatch:
		return strings.Join(p.Paths, "\n")
	}
	return p.Text
}

// messageBody is a whole message as one text: each part under a header
// naming it, so an agent can get one part alone next.
func messageBody(m *model.Message) string {
	var b strings.Builder
	for i, p := range m.Parts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		head := string(p.Kind)
		if p.Tool != "" {
			head += " " + p.Tool
		}
		if p.Status != "" {
			head += " " + p.Status
		}
		fmt.Fprintf(&b, "[part %s %s]\n", p.ID, head)
		if p.Kind == model.KindTool {
			if p.Input != "" {
				b.WriteString("input: " + p.Input + "\n")
			}
			if out := p.OutputOrErrorRaw(); out != "" {
				b.WriteString("output:\n" + out)
			}
			continue
		}
		b.WriteString(partBody(&p))
	}
	return b.String()
}

// runeSlice is s's characters [start, end).
func runeSlice(s string, start, end int) string {
	r := []rune(s)
	start, end = min(start, len(r)), min(end, len(r))
	return string(r[start:end])
}
