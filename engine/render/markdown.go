package render

import (
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine/model"
)

// Markdown renders w for people: a heading per message, tool calls in
// fenced blocks (fences longer than any backtick run inside).
func Markdown(w Window) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", oneLine(w.Title))
	fmt.Fprintf(&b, "`%s`", w.SessionID)
	if w.Source != "" {
		fmt.Fprintf(&b, " · source %s", w.Source)
	}
	fmt.Fprintf(&b, " · %s · messages %d–%d of %d\n\n", w.Directory, w.First+1, w.Last+1, w.Total)
	for _, m := range w.Messages {
		fmt.Fprintf(&b, "## %d. %s · %s\n\n", m.Ord+1, m.Role, stamp(m.Created))
		for _, p := range m.Parts {
			switch p.Kind {
			case model.KindText, model.KindSummary:
				text, _ := cut(p.Text, DisplayTextMax, 0)
				if p.Synthetic {
					b.WriteString(quote(text))
				} else {
					b.WriteString(text)
				}
				b.WriteString("\n\n")
			case model.KindReasoning:
				fmt.Fprintf(&b, "<details><summary>reasoning</summary>\n\n%s\n\n</details>\n\n", Escape(p.Text))
			case model.KindTool:
				fmt.Fprintf(&b, "**%s** (%s)", p.Tool, p.Status)
				if p.Title != "" {
					fmt.Fprintf(&b, " — %s", oneLine(p.Title))
				}
				b.WriteString("\n\n")
				in, _ := cut(p.Input, DisplayInputMax, 0)
				b.WriteString(fence(in, "json"))
				body := p.Output
				if p.Status == "error" || body == "" {
					body = p.Error
				}
				if body != "" {
					shown, cutNow := cut(body, DisplayOutputHead, DisplayOutputTail)
					b.WriteString(fence(shown, ""))
					if orig := max(p.OutputLen, len(body)); cutNow || orig > len(body) {
						fmt.Fprintf(&b, "_output truncated: %d characters in all_\n\n", orig)
					}
				}
			case model.KindPatch:
				fmt.Fprintf(&b, "_changed: %s_\n\n", strings.Join(p.Paths, ", "))
			case model.KindFile:
				fmt.Fprintf(&b, "_attached: %s_\n\n", strings.Join(p.Paths, ", "))
			case model.KindSubtask:
				fmt.Fprintf(&b, "_subtask (%s):_ %s\n\n", p.Tool, p.Text)
			}
		}
		if m.Error != "" {
			fmt.Fprintf(&b, "> **error:** %s\n\n", oneLine(m.Error))
		}
	}
	return b.String()
}

func fence(s, lang string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks + "\n\n"
}

func quote(s string) string {
	return "> " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n> ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
