package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/recallhq/recall/engine/blame"
	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/render"
)

// Blame budgets.
const (
	// MaxBlameSessions bounds the sessions read for one file (newest
	// first, subagent sessions counted on their own): with the 200
	// sessions that touched the busiest file of the 7,799-session
	// benchmark history one blame stays under 100 ms.
	MaxBlameSessions = 100
	// MaxBlameEdits bounds the recorded changes matched against the file
	// (newest first); older ones than these rarely survive in a file.
	MaxBlameEdits = 500
	// MaxBlameBytes bounds the file blamed: past 4 MB it is generated or
	// data, not something a session wrote line by line.
	MaxBlameBytes = 4 << 20
	// MaxPitfalls bounds the pitfalls listed for one file (newest first).
	MaxPitfalls = 10
	// maxErrorLine bounds a pitfall's error line: a lens shows one line.
	maxErrorLine = 160
)

// BlameOptions say which file to blame, and how.
type BlameOptions struct {
	// Path is the file (made absolute against the working directory).
	Path string
	// Line (1-based) narrows the result to the range holding it; 0: all.
	Line int
	// Text is the file's contents as the caller has them (an editor's
	// buffer, saved or not); HasText false reads Path from disk.
	Text    string
	HasText bool
	Sources []string
}

// BlameRange is a run of lines one recorded change wrote.
type BlameRange struct {
	StartLine int    `json:"startLine"` // 1-based, inclusive
	EndLine   int    `json:"endLine"`   // 1-based, inclusive
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId"`
	PartID    string `json:"partId"`
	Source    string `json:"source"`
	Tool      string `json:"tool"`  // edit, write, multiedit, apply_patch
	Time      string `json:"time"`  // when the change ran, RFC 3339 UTC
	Title     string `json:"title"` // the session's title
	URI       string `json:"uri"`   // the transcript at that message
}

// Pitfall is an error a past session hit in a file: a failed tool call on
// it, or a failed shell run right after an edit of it.
type Pitfall struct {
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId"`
	PartID    string `json:"partId"`
	Source    string `json:"source"`
	Title     string `json:"title"`
	Tool      string `json:"tool"`
	Time      string `json:"time"`
	Error     string `json:"error"` // the error line
	URI       string `json:"uri"`
	at        int64  // Unix ms, for the order
}

// BlameResult attributes a file's current lines to past sessions.
type BlameResult struct {
	Path string `json:"path"`
	// Line echoes the line asked about (0: the whole file).
	Line       int          `json:"line,omitempty"`
	Lines      int          `json:"lines"`      // lines in the file now
	Attributed int          `json:"attributed"` // of those, written by a recorded change
	Edits      int          `json:"edits"`      // recorded changes matched
	Ranges     []BlameRange `json:"ranges"`
	Pitfalls   []Pitfall    `json:"pitfalls"`
	Notices    []string     `json:"notices,omitempty"`
}

// ErrBlameFile is a file blame cannot read; doors report it as bad input.
var ErrBlameFile = errors.New("cannot blame file")

// Blame attributes each line of a file as it is now to the recorded edit,
// write or patch that wrote it (see package blame for how), and lists the
// pitfalls past sessions hit in it.
func (e *Engine) Blame(ctx context.Context, opts BlameOptions) (BlameResult, error) {
	path := opts.Path
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	res := BlameResult{Path: path, Line: opts.Line, Ranges: []BlameRange{}, Pitfalls: []Pitfall{}}
	text := opts.Text
	if !opts.HasText {
		var err error
		if text, err = readBlameFile(path); err != nil {
			return res, err
		}
	}
	current := blame.SplitLines(text)
	res.Lines = len(current)
	if opts.Line > res.Lines {
		return res, fmt.Errorf("%w %s: line %d is past its end (%d lines)", ErrBlameFile, path, opts.Line, res.Lines)
	}
	shs, err := e.shardsFor(opts.Sources)
	if err != nil {
		return res, err
	}
	per := make([]fileCalls, len(shs))
	if err := eachShard(shs, func(i int, sh *shard) error {
		var err error
		per[i], err = sh.fileCalls(ctx, path, true)
		return err
	}); err != nil {
		return res, err
	}
	var ops []blame.Op
	var changes []change
	for _, fc := range per {
		changes = append(changes, fc.changes...)
		res.Pitfalls = append(res.Pitfalls, fc.pitfalls...)
		res.Notices = append(res.Notices, fc.notices...)
	}
	slices.SortStableFunc(changes, func(a, b change) int { return cmp.Compare(b.part.Created, a.part.Created) })
	if len(changes) > MaxBlameEdits {
		res.Notices = append(res.Notices, fmt.Sprintf("matched the newest %d of %d recorded changes to this file", MaxBlameEdits, len(changes)))
		changes = changes[:MaxBlameEdits]
	}
	// Oldest first through a replay of the file's text, so a write that
	// rewrote the whole file is credited only with the lines it changed.
	var replay blame.Replay
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		ops = append(ops, blame.Op{Key: i, Time: c.part.Created, Blocks: replay.Apply(c.part.Tool, c.input, c.blocks)})
	}
	res.Edits = len(ops)
	owner := blame.Attribute(current, ops)
	for i := 0; i < len(owner); {
		j := i
		for j+1 < len(owner) && owner[j+1] == owner[i] {
			j++
		}
		if k := owner[i]; k >= 0 {
			c := changes[k]
			res.Attributed += j - i + 1
			res.Ranges = append(res.Ranges, BlameRange{StartLine: i + 1, EndLine: j + 1, SessionID: c.part.SessionID,
				MessageID: c.part.MessageID, PartID: c.part.PartID, Source: c.source, Tool: c.part.Tool,
				Time: render.Time(c.part.Created), Title: c.title,
				URI: TranscriptURI(c.source, c.part.SessionID, c.title, c.part.MessageID)})
		}
		i = j + 1
	}
	if opts.Line > 0 {
		var keep []BlameRange
		for _, r := range res.Ranges {
			if r.StartLine <= opts.Line && opts.Line <= r.EndLine {
				keep = append(keep, r)
			}
		}
		res.Ranges = append([]BlameRange{}, keep...)
	}
	res.Pitfalls = sortPitfalls(res.Pitfalls)
	return res, nil
}

func readBlameFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%w %s: it does not exist; blame reads the file as it is now, so name an existing file", ErrBlameFile, path)
		}
		return "", fmt.Errorf("%w %s: %v", ErrBlameFile, path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("%w %s: it is a directory; name a file in it", ErrBlameFile, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxBlameBytes+1))
	if err != nil {
		return "", fmt.Errorf("%w %s: %v", ErrBlameFile, path, err)
	}
	if len(b) > MaxBlameBytes {
		return "", fmt.Errorf("%w %s: it is larger than %d MB; blame is for files sessions wrote, not generated data", ErrBlameFile, path, MaxBlameBytes>>20)
	}
	return string(b), nil
}

// change is one recorded change to the file being blamed.
type change struct {
	part   index.FilePart
	input  string // the call's whole input
	source string
	title  string
	blocks []blame.Block
}

// fileCalls is what one shard knows of a file: its changes (when asked)
// and its pitfalls.
type fileCalls struct {
	changes  []change
	pitfalls []Pitfall
	notices  []string
}

// fileCalls reads the tool calls of the sessions that touched path. With
// withChanges, each change's input is the index's copy (byte for byte what
// the history holds, up to TextHead+TextTail bytes) unless the index had
// to bound it: those few are read whole from the history. Reading every
// change from the history instead streamed whole sessions and took 255 ms
// on the busiest file of the 7,799-session benchmark history (72% of it in
// the history's JSON); from the index it takes a few ms.
func (sh *shard) fileCalls(ctx context.Context, path string, withChanges bool) (fileCalls, error) {
	var out fileCalls
	parts, err := sh.ix.FileParts(ctx, path, MaxBlameSessions, append([]string{"bash"}, blame.Tools...))
	if err != nil {
		return out, sh.wrap(err)
	}
	sessions := map[string]index.SessionRow{}
	for _, p := range parts {
		sessions[p.SessionID] = p.Session
	}
	title := func(id string) string { return sh.e.show(sessions[id].Title) }
	out.pitfalls = pitfalls(parts, path, func(p index.FilePart, line string) Pitfall {
		t := title(p.SessionID)
		return Pitfall{SessionID: p.SessionID, MessageID: p.MessageID, PartID: p.PartID, Source: sh.name, Title: t, Tool: p.Tool,
			Time: render.Time(p.Created), Error: sh.e.show(line), URI: TranscriptURI(sh.name, p.SessionID, t, p.MessageID), at: p.Created}
	})
	if !withChanges {
		return out, nil
	}
	var edits []index.FilePart
	for _, p := range parts {
		if blame.IsTool(p.Tool) && p.Status == "completed" && slices.Contains(p.Paths, path) {
			edits = append(edits, p)
		}
	}
	var bounded []index.FilePart
	for _, p := range edits {
		if len(p.Input) >= index.TextHead && strings.Contains(p.Input, index.TruncationMark) {
			bounded = append(bounded, p)
		}
	}
	full, err := sh.fullInputs(ctx, bounded, sessions)
	if err != nil {
		out.notices = append(out.notices, fmt.Sprintf("matched the long changes by what the index keeps of them (the history could not be read: %v)", err))
	}
	for _, p := range edits {
		input, ok := full[p.PartID]
		if !ok {
			input = p.Input
		}
		blocks, ok := blame.FromTool(p.Tool, input, path, sessions[p.SessionID].Directory)
		if !ok {
			continue
		}
		out.changes = append(out.changes, change{part: p, input: input, source: sh.name, title: title(p.SessionID), blocks: blocks})
	}
	return out, nil
}

// fullInputs reads the named parts' inputs from the history, per session.
func (sh *shard) fullInputs(ctx context.Context, parts []index.FilePart, sessions map[string]index.SessionRow) (map[string]string, error) {
	out := map[string]string{}
	src := sh.source()
	if src == nil || len(parts) == 0 {
		return out, nil
	}
	want := map[string]map[string]bool{}
	for _, p := range parts {
		if want[p.SessionID] == nil {
			want[p.SessionID] = map[string]bool{}
		}
		want[p.SessionID][p.PartID] = true
	}
	for id, ids := range want {
		row := sessions[id]
		s := model.Session{ID: row.ID, ProjectID: row.ProjectID, Directory: row.Directory, Era: row.Era, ParentID: row.ParentID}
		left := len(ids)
		err := src.Messages(ctx, s, func(m *model.Message) error {
			for _, p := range m.Parts {
				if ids[p.ID] {
					out[p.ID] = p.Input
					left--
				}
			}
			if left == 0 {
				return errStopMessages
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopMessages) {
			return out, err
		}
	}
	return out, nil
}

var errStopMessages = errors.New("stop")

// pitfalls finds, in one shard's calls (in session and display order), the
// errors sessions hit in path: a failed call of a tool on the file, and a
// failed shell run (an exit code other than 0) right after an edit of the
// file or whose output names it.
func pitfalls(parts []index.FilePart, path string, mk func(index.FilePart, string) Pitfall) []Pitfall {
	var out []Pitfall
	edited := false
	session := ""
	for _, p := range parts {
		if p.SessionID != session {
			session, edited = p.SessionID, false
		}
		touches := slices.Contains(p.Paths, path)
		switch {
		case p.Tool == "bash":
			failed := p.Status == "error" || (p.ExitCode != nil && *p.ExitCode != 0)
			text := p.Output
			if p.Status == "error" {
				text = p.Error
			}
			if failed && (edited || strings.Contains(text, path)) {
				out = append(out, mk(p, errorLine(text)))
			}
			edited = false
		case p.Status == "error" && (touches || strings.Contains(p.Error, path)):
			out = append(out, mk(p, errorLine(p.Error)))
		case blame.IsTool(p.Tool) && touches && p.Status == "completed":
			edited = true
		}
	}
	return out
}

// exceptionPattern is an exception line (Python, Java, JS): a traceback
// ends with its cause, so the last one is the one to show.
var exceptionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\w+\.)*\w*(Error|Exception)\b:`) })

// errorPattern is a compiler's or runtime's error line ("x.go:3: error:",
// "panic:", "fatal:"): the first one is the cause, the rest follow from it.
var errorPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\berror(\[\w+\])?:|\bpanic:|\bFATAL\b|\bfatal:`)
})

// failPattern is a weaker sign, used when no line matches the others.
var failPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(fail(ed|ure)?|error)\b`) })

// errorLine is the one line that says what went wrong in a tool's output:
// the last exception line, else the first error line, else the last line
// that says it failed, else the last line.
func errorLine(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	pick := ""
	for i := len(lines) - 1; i >= 0 && pick == ""; i-- {
		if exceptionPattern().MatchString(lines[i]) {
			pick = lines[i]
		}
	}
	for i := 0; i < len(lines) && pick == ""; i++ {
		if errorPattern().MatchString(lines[i]) {
			pick = lines[i]
		}
	}
	for i := len(lines) - 1; i >= 0 && pick == ""; i-- {
		if failPattern().MatchString(lines[i]) {
			pick = lines[i]
		}
	}
	if pick == "" && len(lines) > 0 {
		pick = lines[len(lines)-1]
	}
	return render.ClipLine(pick, maxErrorLine)
}

// sortPitfalls orders pitfalls newest first and keeps MaxPitfalls.
func sortPitfalls(p []Pitfall) []Pitfall {
	slices.SortStableFunc(p, func(a, b Pitfall) int { return cmp.Compare(b.at, a.at) })
	return p[:min(len(p), MaxPitfalls)]
}
