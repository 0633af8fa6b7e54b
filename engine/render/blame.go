package render

import (
	"fmt"
	"strings"
	"time"
)

// BlameHover is what a hover on a blamed line shows.
type BlameHover struct {
	Title, SessionID, MessageID, Source, Tool, Time string
	Link                                            string // the transcript at the message (recall:)
	StartLine, EndLine                              int
	// Pitfall is the newest error sessions hit in the file ("" for none),
	// PitfallLink its message.
	Pitfall, PitfallTitle, PitfallLink string
}

// BlameHoverMarkdown renders a blame hover; history text is escaped.
func BlameHoverMarkdown(h BlameHover) string {
	var b strings.Builder
	if h.SessionID != "" {
		lines := fmt.Sprintf("line %d", h.StartLine)
		if h.EndLine != h.StartLine {
			lines = fmt.Sprintf("lines %d-%d", h.StartLine, h.EndLine)
		}
		fmt.Fprintf(&b, "**Written in %s**  \n%s by `%s` · %s · `%s` · `%s`", MarkdownEscape(h.Title), lines, MarkdownEscape(h.Tool), zoned(h.Time), h.SessionID, h.MessageID)
		if h.Source != "" {
			fmt.Fprintf(&b, " · source %s", MarkdownEscape(h.Source))
		}
		fmt.Fprintf(&b, "\n\n[Open transcript](%s)", h.Link)
	}
	if h.Pitfall != "" {
		if b.Len() > 0 {
			b.WriteString("\n\n---\n\n")
		}
		fmt.Fprintf(&b, "**Bit us before:** %s  \nin %s · [Open transcript](%s)", MarkdownEscape(h.Pitfall), MarkdownEscape(h.PitfallTitle), h.PitfallLink)
	}
	return b.String()
}

// Age says how long ago t (RFC 3339) was, in the largest whole unit
// ("3 days ago"); "" when t does not parse.
func Age(t string, now time.Time) string {
	at, err := time.Parse(time.RFC3339Nano, t)
	if err != nil {
		return ""
	}
	d := now.Sub(at)
	unit := func(n int64, name string) string {
		if n == 1 {
			return "1 " + name + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, name)
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return unit(int64(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return unit(int64(d/time.Hour), "hour")
	case d < 30*24*time.Hour:
		return unit(int64(d/(24*time.Hour)), "day")
	case d < 365*24*time.Hour:
		return unit(int64(d/(30*24*time.Hour)), "month")
	}
	return unit(int64(d/(365*24*time.Hour)), "year")
}
