package render

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/model"
)

// Hover budgets: a hover is a glance, not a transcript.
const (
	// HoverExcerpt bounds the message text a hover shows.
	HoverExcerpt = 700
	// hoverPrompt bounds the session's first prompt.
	hoverPrompt = 300
	// hoverToolInput bounds a tool call's title or input.
	hoverToolInput = 160
)

// HoverPreview is what a hover on one OpenCode id shows: its session and,
// for a message or part id, the message (the hovered part first).
type HoverPreview struct {
	// Source names the history the session is in ("" for none).
	Source                                   string
	SessionID, Title, Directory, FirstPrompt string
	Messages                                 int    // in the session
	Time                                     string // RFC 3339: the message's, else the session's last activity
	Message                                  *model.Message
	PartID                                   string
	// Link is the transcript to open (a recall: URI).
	Link string
}

// HoverMarkdown renders a hover. History text is escaped so it is never
// read as markdown structure (links, emphasis, html).
func HoverMarkdown(p HoverPreview) string {
	var b strings.Builder
	title := p.Title
	if title == "" {
		title = p.SessionID
	}
	fmt.Fprintf(&b, "**%s**  \n`%s`", MarkdownEscape(title), p.SessionID)
	if p.Source != "" {
		fmt.Fprintf(&b, " · source %s", MarkdownEscape(p.Source))
	}
	fmt.Fprintf(&b, " · %s · %s · %d messages\n\n", MarkdownEscape(p.Directory), zoned(p.Time), p.Messages)
	if p.FirstPrompt != "" {
		fmt.Fprintf(&b, "> %s\n\n", MarkdownEscape(ClipLine(p.FirstPrompt, hoverPrompt)))
	}
	if m := p.Message; m != nil {
		fmt.Fprintf(&b, "---\n\n**%s** · message %d of %d\n\n", m.Role, m.Ord+1, p.Messages)
		b.WriteString(messageExcerpt(*m, p.PartID))
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "[Open transcript](%s)", p.Link)
	return b.String()
}

// zoned is ShortTime marked as UTC: an editor sits beside local-time
// clocks, so a hover says which zone it means.
func zoned(t string) string {
	if s := ShortTime(t); s != t {
		return s + "Z"
	}
	return t
}

// messageExcerpt is a few lines of a message: the hovered part first, then
// its prose and tool calls, clipped.
func messageExcerpt(m model.Message, partID string) string {
	var lines []string
	add := func(p model.Part) {
		switch p.Kind {
		case model.KindText, model.KindSummary, model.KindSubtask:
			lines = append(lines, MarkdownEscape(ClipLine(p.Text, HoverExcerpt)))
		case model.KindTool:
			in := p.Title
			if in == "" {
				in = p.Input
			}
			lines = append(lines, fmt.Sprintf("`%s` %s", p.Tool, MarkdownEscape(ClipLine(in, hoverToolInput))))
		case model.KindPatch:
			lines = append(lines, "changed "+MarkdownEscape(strings.Join(p.Paths, ", ")))
		}
	}
	for _, p := range m.Parts {
		if p.ID == partID {
			add(p)
		}
	}
	for _, p := range m.Parts {
		if p.ID != partID {
			add(p)
		}
	}
	return Clip(strings.Join(lines, "\n\n"), HoverExcerpt)
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", "&lt;", ">", "&gt;", "#", `\#`, "|", `\|`)

// MarkdownEscape keeps history text from being read as markdown structure
// (links, emphasis, html, tables).
func MarkdownEscape(s string) string { return markdownEscaper.Replace(s) }

// ClipLine is s on one line (runs of white space are one space), clipped
// to n bytes.
func ClipLine(s string, n int) string { return Clip(oneLine(s), n) }

// Clip cuts s to at most n bytes on a rune boundary and marks the cut
// with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
