package engine

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/render"
	"github.com/recallhq/recall/engine/source"
)

// Match-mode budgets: a literal or regex search scans the history's full
// text (every part in scope, tool inputs and outputs whole), so it is
// bounded by bytes and by time, and says how far it got.
const (
	// DefaultScanBytes bounds the text one match search reads: 256 MiB is
	// more than the whole benchmark history's part text (160 MB over
	// 220k parts), so the time budget is what stops an unscoped scan.
	DefaultScanBytes = 256 << 20
	// DefaultScanTime bounds a match search's scan; what it did not reach
	// is one continuation away. Half of DefaultSearchTimeout, so the hits
	// it found are rendered well within the search's own budget.
	DefaultScanTime = 1500 * time.Millisecond
	// MaxScanTime bounds what a caller may ask for (the search timeout
	// still applies).
	MaxScanTime = 10 * time.Second
	// matchCursorPrefix marks a continuation cursor of a match search.
	matchCursorPrefix = "m1:"
)

// ErrBadPattern is a regex that does not compile or would match
// everything; doors report it as bad input.
var ErrBadPattern = errors.New("bad pattern")

// Coverage says how much of the history a match search read.
type Coverage struct {
	Sessions int   `json:"sessions"`
	Parts    int   `json:"parts"`
	Bytes    int64 `json:"bytes"`
	// Complete: every part in scope was read; otherwise Continue on the
	// result resumes exactly where this stopped.
	Complete bool `json:"complete"`
}

// matcher finds a literal or a regex in text.
type matcher struct {
	match query.Match
	lit   string // literal, lower-cased ASCII (fold: Unicode literal through re)
	re    *regexp.Regexp
	pre   string // regex: a literal every match starts with ("" = none)
}

// newMatcher compiles a literal or regex query, before any work.
func newMatcher(m query.Match, q string) (*matcher, error) {
	if strings.TrimSpace(q) == "" {
		return nil, fmt.Errorf("%w: match %s needs a query: the text (literal) or pattern (regex) to find", ErrBadPattern, m)
	}
	mt := &matcher{match: m}
	if m == query.MatchLiteral {
		if isASCII(q) {
			mt.lit = strings.ToLower(q)
			return mt, nil
		}
		mt.re = regexp.MustCompile(`(?i)` + regexp.QuoteMeta(q))
		return mt, nil
	}
	re, err := regexp.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("%w: %v; regex is Go's RE2 syntax (no backreferences or lookaround); for plain text use match literal", ErrBadPattern, err)
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("%w: %q matches the empty string, so it would match every part; require at least one character (ERR_\\d+, not ERR_\\d*)", ErrBadPattern, q)
	}
	mt.re = re
	mt.pre, _ = re.LiteralPrefix()
	return mt, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// find returns up to n matches in text as byte ranges.
func (mt *matcher) find(text string, n int) [][2]int {
	if mt.re != nil {
		if mt.pre != "" && !strings.Contains(text, mt.pre) {
			return nil
		}
		var out [][2]int
		for _, loc := range mt.re.FindAllStringIndex(text, n) {
			out = append(out, [2]int{loc[0], loc[1]})
		}
		return out
	}
	var out [][2]int
	for from := 0; len(out) < n; {
		i := indexFold(text[from:], mt.lit)
		if i < 0 {
			break
		}
		out = append(out, [2]int{from + i, from + i + len(mt.lit)})
		from += i + len(mt.lit)
	}
	return out
}

// indexFold is the first ASCII-case-insensitive occurrence of lower (an
// ASCII lower-case needle) in s. It jumps between occurrences of the
// needle's first byte in either case with IndexByte (vectorised), which
// kept the scan near memory speed where strings.ToLower of every text and
// a (?i) regexp were 4-10x slower (measured on the benchmark clone).
func indexFold(s, lower string) int {
	if lower == "" {
		return 0
	}
	c0 := lower[0]
	up := c0
	if c0 >= 'a' && c0 <= 'z' {
		up = c0 - 'a' + 'A'
	}
	for i := 0; i+len(lower) <= len(s); {
		j := strings.IndexByte(s[i:], c0)
		if up != c0 {
			if k := strings.IndexByte(s[i:], up); k >= 0 && (j < 0 || k < j) {
				j = k
			}
		}
		if j < 0 {
			return -1
		}
		at := i + j
		if at+len(lower) > len(s) {
			return -1
		}
		if strings.EqualFold(s[at:at+len(lower)], lower) {
			return at
		}
		i = at + 1
	}
	return -1
}

// rawTest is a pre-filter on rows as OpenCode stored them (JSON): it
// passes every row whose decoded text can match. ok false when the query
// holds something JSON escapes (a quote, a backslash, a control
// character), so a row's bytes could differ from its text where it
// matters, or a regex has no literal prefix to look for.
func (mt *matcher) rawTest() (test func([]byte) bool, ok bool) {
	jsonSafe := func(s string) bool {
		return s != "" && !strings.ContainsAny(s, "\"\\") && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x2028 || r == 0x2029 })
	}
	switch {
	case mt.re == nil && jsonSafe(mt.lit):
		return func(b []byte) bool { return indexFoldBytes(b, mt.lit) >= 0 }, true
	case mt.re != nil && mt.match == query.MatchLiteral && jsonSafe(mt.re.String()):
		return mt.re.Match, true
	case mt.re != nil && jsonSafe(mt.pre):
		pre := []byte(mt.pre)
		return func(b []byte) bool { return bytes.Contains(b, pre) }, true
	}
	return nil, false
}

// indexFoldBytes is indexFold over bytes (a row is not copied into a
// string to be tested).
func indexFoldBytes(s []byte, lower string) int {
	c0 := lower[0]
	up := c0
	if c0 >= 'a' && c0 <= 'z' {
		up = c0 - 'a' + 'A'
	}
	for i := 0; i+len(lower) <= len(s); {
		j := bytes.IndexByte(s[i:], c0)
		if up != c0 {
			if k := bytes.IndexByte(s[i:], up); k >= 0 && (j < 0 || k < j) {
				j = k
			}
		}
		if j < 0 || i+j+len(lower) > len(s) {
			return -1
		}
		at := i + j
		if bytes.EqualFold(s[at:at+len(lower)], []byte(lower)) {
			return at
		}
		i = at + 1
	}
	return -1
}

// scanPos is a place in the scan order: sessions newest first by
// (created, id), ties in source order; inside a session its messages last
// first, each message's parts last first, a tool part's output before its
// input. A continuation resumes strictly after Pos.
type scanPos struct {
	Source  string `json:"s"`
	Created int64  `json:"c"`
	Session string `json:"i"`
	Msg     int    `json:"m"` // message's display index
	Part    int    `json:"p"`
	Sub     int    `json:"b"` // 1 output, 0 input or text
	Scope   string `json:"q"` // the query and filter the cursor belongs to
}

// scanSession is one session to scan, with its shard.
type scanSession struct {
	sh   *shard
	rank int // the shard's place in source order
	s    model.Session
	root string
}

// matchSearch scans the history's full text for a literal or a regex.
func (e *Engine) matchSearch(ctx context.Context, shs []*shard, p SearchParams, res *SearchResult) error {
	mt, err := newMatcher(p.Match, p.Query)
	if err != nil {
		return err
	}
	res.Mode = query.ModeLiteral
	if p.Match == query.MatchRegex {
		res.Mode = query.ModeRegex
	}
	scope := matchScope(p)
	var from *scanPos
	if p.Continue != "" {
		pos, err := e.decodeScanCursor(p.Continue)
		if err != nil {
			return err
		}
		if pos.Scope != scope {
			return fmt.Errorf("%w: the continuation belongs to another query or filter; pass it with the same query, match and filters, or drop it to start over", ErrBadCursor)
		}
		from = &pos
	}
	budget := p.ScanBytes
	if budget <= 0 {
		budget = DefaultScanBytes
	}
	limit := p.ScanTime
	if limit <= 0 {
		limit = DefaultScanTime
	}
	deadline := time.Now().Add(min(limit, MaxScanTime))

	sessions, err := e.scanSessions(ctx, shs, p.Filter)
	if err != nil {
		return err
	}
	rawTest, rawOK := mt.rawTest()
	cov := Coverage{Complete: true}
	var last scanPos
	stopped := false
	for _, ss := range sessions {
		if from != nil && !sessionAtOrAfter(ss, shs, *from) {
			continue
		}
		resumeHere := from != nil && sessionKeyEqual(ss, *from)
		var msgs []*model.Message
		src := ss.sh.source()
		if src == nil {
			continue // a missing history: nothing to scan (status says so)
		}
		if rs, ok := src.(source.RawScanner); ok && rawOK && !resumeHere && !needsDecode(p.Filter) {
			hit, rows, n, ok, err := rs.ScanRaw(ctx, ss.s, rawTest)
			if err != nil && ctx.Err() != nil {
				stopped = true
				break
			} else if err != nil {
				return fmt.Errorf("scan %s: %w", ss.sh.name, err)
			}
			if ok && !hit {
				// Nothing in it can match: counted as read, not decoded.
				if rows > 0 {
					cov.Sessions++
					cov.Parts += rows
					cov.Bytes += n
					last = scanPos{Source: ss.sh.name, Created: ss.s.Created, Session: ss.s.ID, Scope: scope}
				}
				if cov.Bytes >= budget || time.Now().After(deadline) || ctx.Err() != nil {
					stopped = true
					break
				}
				continue
			}
		}
		err := src.Messages(ctx, ss.s, func(m *model.Message) error {
			msgs = append(msgs, m)
			return nil
		})
		if err != nil && ctx.Err() != nil {
			stopped = true // the search's own timeout: resume at this session
			break
		} else if err != nil {
			return fmt.Errorf("scan %s: %w", ss.sh.name, err)
		}
		counted := false
		for mi := len(msgs) - 1; mi >= 0 && !stopped; mi-- {
			m := msgs[mi]
			for pi := len(m.Parts) - 1; pi >= 0 && !stopped; pi-- {
				part := &m.Parts[pi]
				for sub := 1; sub >= 0; sub-- {
					pos := scanPos{Source: ss.sh.name, Created: ss.s.Created, Session: ss.s.ID, Msg: mi, Part: pi, Sub: sub, Scope: scope}
					if resumeHere && !inSessionBefore(pos, *from) {
						continue
					}
					text, kind := scanText(part, sub)
					if text == "" && sub == 0 && part.Kind != model.KindTool {
						continue
					}
					if text == "" || !scanKeeps(p.Filter, ss, m, part, kind) {
						continue
					}
					if !counted {
						cov.Sessions++
						counted = true
					}
					if sub == 1 || part.Kind != model.KindTool {
						cov.Parts++
					}
					cov.Bytes += int64(len(text))
					if locs := mt.find(text, 50); len(locs) > 0 {
						res.Hits = append(res.Hits, e.matchHit(ss, m, part, kind, text, mt, locs))
					}
					last = pos
					if len(res.Hits) >= p.Limit || cov.Bytes >= budget || time.Now().After(deadline) || ctx.Err() != nil {
						stopped = true
						break
					}
				}
			}
		}
		if stopped {
			break
		}
	}
	if stopped && last.Session == "" {
		// Stopped before a single text was read: resume where this began.
		switch {
		case from != nil:
			last = *from
		case len(sessions) > 0:
			f := sessions[0]
			last = scanPos{Source: f.sh.name, Created: f.s.Created, Session: f.s.ID, Msg: 1 << 30, Scope: scope}
		}
	}
	if stopped && !scanDone(sessions, shs, last) {
		cov.Complete = false
		res.Continue = e.encodeScanCursor(last)
		why := "the hit limit"
		switch {
		case cov.Bytes >= budget:
			why = fmt.Sprintf("its %d MiB byte budget", budget>>20)
		case len(res.Hits) < p.Limit:
			why = fmt.Sprintf("its %s time budget", limit)
		}
		res.Notices = append(res.Notices, fmt.Sprintf("the %s scan stopped at %s after %s and %s; pass continue (--continue CURSOR) to resume where it stopped",
			p.Match, why, render.Count(cov.Sessions, "session"), render.Count(cov.Parts, "part")))
	}
	res.Coverage = &cov
	return nil
}

// needsDecode: the filter asks about parts (kind, tool, role, time,
// author), so a session's part count in coverage would differ between a
// pre-filtered and a decoded read; such scans decode every session.
func needsDecode(f query.Filter) bool {
	return len(f.Kinds) > 0 || len(f.Tools) > 0 || len(f.Roles) > 0 || f.After != 0 || f.Before != 0 || f.Author != ""
}

// scanDone reports whether nothing in scope follows last (the scan
// stopped on the very last part).
func scanDone(sessions []scanSession, shs []*shard, last scanPos) bool {
	if len(sessions) == 0 {
		return true
	}
	end := sessions[len(sessions)-1]
	return end.sh.name == last.Source && end.s.ID == last.Session && last.Msg == 0 && last.Part == 0 && last.Sub == 0
}

// matchScope binds a continuation to its query and filter.
func matchScope(p SearchParams) string {
	p.Filter.ExcludeRoots = nil // found anew each time: a sync may add a fork
	b, _ := json.Marshal(struct {
		M query.Match
		Q string
		F query.Filter
	}{p.Match, p.Query, p.Filter})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// encodeScanCursor writes pos as m1:<source>:<created, base 36>:<session
// id>:<msg>.<part>.<sub>:<scope>.<tag> (about 80 characters), signed like
// read cursors so an edited one is refused.
func (e *Engine) encodeScanCursor(pos scanPos) string {
	body := strings.Join([]string{pos.Source, strconv.FormatInt(pos.Created, 36), encodeID("session", pos.Session),
		fmt.Sprintf("%d.%d.%d", pos.Msg, pos.Part, pos.Sub), pos.Scope}, ":")
	return matchCursorPrefix + body + "." + e.cursorTag("m:"+body)
}

func (e *Engine) decodeScanCursor(s string) (scanPos, error) {
	var pos scanPos
	body, ok := strings.CutPrefix(strings.TrimSpace(s), matchCursorPrefix)
	dot := strings.LastIndexByte(body, '.')
	if !ok || dot < 0 {
		return pos, fmt.Errorf("%w: %q is not a match continuation; pass the continue field of a literal or regex search", ErrBadCursor, clip(s, 40))
	}
	body, tag := body[:dot], body[dot+1:]
	if !hmac.Equal([]byte(e.cursorTag("m:"+body)), []byte(tag)) {
		return pos, fmt.Errorf("%w: the continuation was signed with another key or was altered; run the search again", ErrBadCursor)
	}
	f := strings.Split(body, ":")
	malformed := fmt.Errorf("%w: malformed continuation; run the search again", ErrBadCursor)
	if len(f) != 5 {
		return pos, malformed
	}
	var err error
	pos.Source, pos.Session, pos.Scope = f[0], f[2], f[4]
	if pos.Created, err = strconv.ParseInt(f[1], 36, 64); err != nil {
		return pos, malformed
	}
	if strings.HasPrefix(pos.Session, "~s") {
		raw, err := base64.RawURLEncoding.DecodeString(pos.Session[2:])
		if err != nil {
			return pos, malformed
		}
		pos.Session = string(raw)
	}
	if _, err := fmt.Sscanf(f[3], "%d.%d.%d", &pos.Msg, &pos.Part, &pos.Sub); err != nil {
		return pos, malformed
	}
	return pos, nil
}

// scanSessions lists the sessions in scope, in scan order, from each
// shard's history (not its index: a session OpenCode is writing is read as
// it is now), leaving out sessions the user had Recall forget.
func (e *Engine) scanSessions(ctx context.Context, shs []*shard, f query.Filter) ([]scanSession, error) {
	var out []scanSession
	for rank, sh := range shs {
		src := sh.source()
		if src == nil {
			continue
		}
		all, err := src.Sessions(ctx)
		if err != nil {
			return nil, fmt.Errorf("list sessions of %s: %w", sh.name, err)
		}
		forgotten, err := sh.ix.Forgotten(ctx)
		if err != nil {
			return nil, sh.wrap(err)
		}
		byID := make(map[string]*model.Session, len(all))
		for i := range all {
			byID[all[i].ID] = &all[i]
		}
		excludeRoot := ""
		if x := f.ExcludeSession; x != "" {
			excludeRoot = x
			if s, ok := byID[x]; ok {
				excludeRoot = rootOf(s, byID)
			}
		}
		for i := range all {
			s := &all[i]
			root := rootOf(s, byID)
			switch {
			case forgotten[s.ID] || forgotten[root]:
				continue
			case f.Session != "" && s.ID != f.Session && s.ParentID != f.Session:
				continue
			case f.ExcludeSession != "" && (s.ID == f.ExcludeSession || root == excludeRoot || root == f.ExcludeSession || slices.Contains(f.ExcludeRoots, root)):
				continue
			case f.Directory != "" && !underDir(s.Directory, f.Directory):
				continue
			case f.After != 0 && s.Updated != 0 && s.Updated < f.After:
				continue // nothing in it can be that new
			case f.Before != 0 && s.Created >= f.Before:
				continue
			}
			out = append(out, scanSession{sh: sh, rank: rank, s: *s, root: root})
		}
	}
	slices.SortFunc(out, func(a, b scanSession) int {
		return cmp.Or(cmp.Compare(b.s.Created, a.s.Created), strings.Compare(b.s.ID, a.s.ID), cmp.Compare(a.rank, b.rank))
	})
	return out, nil
}

func underDir(d, dir string) bool {
	dir = strings.TrimRight(dir, "/")
	return d == dir || strings.HasPrefix(d, dir+"/")
}

func shardRank(shs []*shard, name string) int {
	for i, sh := range shs {
		if sh.name == name {
			return i
		}
	}
	return len(shs)
}

// sessionAtOrAfter: ss is the cursor's session or comes after it in scan
// order.
func sessionAtOrAfter(ss scanSession, shs []*shard, from scanPos) bool {
	c := cmp.Or(cmp.Compare(from.Created, ss.s.Created), strings.Compare(from.Session, ss.s.ID), cmp.Compare(ss.rank, shardRank(shs, from.Source)))
	return c >= 0
}

func sessionKeyEqual(ss scanSession, from scanPos) bool {
	return ss.s.Created == from.Created && ss.s.ID == from.Session && ss.sh.name == from.Source
}

// inSessionBefore: pos comes after from inside the same session (it was
// not covered yet).
func inSessionBefore(pos, from scanPos) bool {
	return cmp.Or(cmp.Compare(from.Msg, pos.Msg), cmp.Compare(from.Part, pos.Part), cmp.Compare(from.Sub, pos.Sub)) > 0
}

// scanText is what a part holds to match: sub 1 a tool's output (or
// error), sub 0 its input or another part's text; with the kind a hit on it
// reports (as the index's documents do).
func scanText(p *model.Part, sub int) (string, model.Kind) {
	if p.Kind == model.KindTool {
		if sub == 1 {
			return p.OutputOrErrorRaw(), model.KindOutput
		}
		return p.Input, model.KindTool
	}
	if sub == 1 {
		return "", p.Kind
	}
	if p.Kind == model.KindPatch {
		return strings.Join(p.Paths, "\n"), p.Kind
	}
	return p.Text, p.Kind
}

// scanKeeps applies the part-level filters (time, role, kind, tool,
// author) to one text of a part.
func scanKeeps(f query.Filter, ss scanSession, m *model.Message, p *model.Part, kind model.Kind) bool {
	t := cmp.Or(p.Created, m.Created)
	if f.After != 0 && t < f.After || f.Before != 0 && t >= f.Before {
		return false
	}
	if len(f.Roles) > 0 && !slices.Contains(f.Roles, query.Role(m.Role)) {
		return false
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, kind) {
		return false
	}
	if len(f.Tools) > 0 && !slices.Contains(f.Tools, p.Tool) {
		return false
	}
	if f.Author != "" {
		human := isHuman(ss.s, m, p, kind)
		if human != (f.Author == query.AuthorHuman) {
			return false
		}
	}
	return true
}

// isHuman is query.AuthorHuman for one text of a part (the index's
// humanDoc, in Go).
func isHuman(s model.Session, m *model.Message, p *model.Part, kind model.Kind) bool {
	return m.Role == "user" && !p.Synthetic && s.ParentID == "" && slices.Contains(query.HumanKinds, kind)
}

// matchHit renders one match as a search hit: the same shape as a ranked
// hit, a snippet around the first match (redacted first, then cut, so no
// secret is cut into pieces no rule recognises).
func (e *Engine) matchHit(ss scanSession, m *model.Message, p *model.Part, kind model.Kind, text string, mt *matcher, locs [][2]int) Hit {
	shown := e.show(text)
	at := mt.find(shown, 50)
	if len(at) == 0 {
		// The match was inside a secret: show where it was, redacted.
		off := min(len(shown), locs[0][0]*len(shown)/max(1, len(text)))
		at = [][2]int{{off, off}}
	}
	snip, hl := snippetAt(shown, at)
	h := Hit{
		Cursor:    e.encodeCursor(Cursor{Source: ss.sh.name, SessionID: ss.s.ID, MessageID: m.ID, PartID: p.ID}),
		Source:    ss.sh.name,
		SessionID: ss.s.ID, MessageID: m.ID, PartID: p.ID,
		Title: e.show(ss.s.Title), Directory: ss.s.Directory, Role: m.Role, Kind: string(kind), Tool: p.Tool,
		Time: render.Time(cmp.Or(p.Created, m.Created)), Snippet: snip, Highlights: hl,
	}
	if h.Highlights == nil {
		h.Highlights = [][2]int{}
	}
	h.URI = TranscriptURI(h.Source, h.SessionID, h.Title, h.MessageID)
	return h
}

// CheckMatch refuses a literal or regex query that cannot run (an invalid
// or empty-matching regex, no text), so doors can refuse it before any
// work.
func CheckMatch(m query.Match, q string) error {
	if m != query.MatchLiteral && m != query.MatchRegex {
		return nil
	}
	_, err := newMatcher(m, q)
	return err
}
