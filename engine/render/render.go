// Package render turns a window of messages into the text an agent or a
// person reads: ChatML (the default), markdown, or JSON. Content is escaped
// so history can never forge a ChatML marker or one of our tags, and every
// cut is marked with the original length.
package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/recallhq/recall/engine/model"
)

// Display budgets for one part inside a window. The index keeps more; a
// window shows the head and tail and says how long the original was.
const (
	// DefaultOutputBudget is the bytes of one tool output a window shows
	// (Window.OutputBudget): its head and tail, the rest one `recall get`
	// away (a cut output says so). It was 2,800 (2,000 + 800). A default
	// read of 60 random sessions of the 1,000-session benchmark clone
	// costs 3,135 cl100k tokens on average at 2,800, 3,054 at 1,600 and
	// 2,967 at 1,200 (measured with tiktoken-go): outputs are a small share
	// of a window (texts and inputs weigh more), so the budget trims ~3%
	// and 1,600 keeps a tail of 458 bytes, the last 5-6 lines where
	// errors and exit notes sit.
	DefaultOutputBudget = 1600
	// MaxOutputBudget bounds what a caller may ask for (get pages more).
	MaxOutputBudget = 64 << 10
	// outputHeadShare is the head's share of the budget: 5/7, as the
	// 2,000 + 800 split was (errors and summaries sit at the end).
	outputHeadNum, outputHeadDen = 5, 7
	DisplayInputMax              = 2000 // bytes of a tool input
	DisplayTextMax               = 12000
)

// OutputCut is the head and tail bytes of an output a budget shows (0 =
// DefaultOutputBudget).
func OutputCut(budget int) (head, tail int) {
	if budget <= 0 {
		budget = DefaultOutputBudget
	}
	head = budget * outputHeadNum / outputHeadDen
	return head, budget - head
}

// Window is what a read shows.
type Window struct {
	// Source names the history the session is in ("" for none).
	Source    string
	SessionID string
	Title     string
	Directory string
	ParentID  string
	Anchor    string // message id the window was opened at
	First     int    // 0-based ord of the first message
	Last      int
	Total     int
	Messages  []model.Message
	Nav       Nav
	// OutputBudget is the bytes of each tool output shown (0 =
	// DefaultOutputBudget); a cut output names the part to get whole.
	OutputBudget int
}

// Nav holds the cursors to page from a window ("" = no such page).
type Nav struct {
	Prev string `json:"prev,omitempty"`
	Next string `json:"next,omitempty"`
	Head string `json:"head"`
	Tail string `json:"tail"`
}

// Escape makes text safe inside our markup: no `<|im_start|>`, `<|im_end|>`
// or tag of ours can come out of history.
func Escape(s string) string {
	if !strings.ContainsAny(s, "<>&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Attr escapes an attribute value (quotes too, and newlines as spaces).
func Attr(s string) string {
	s = Escape(s)
	s = strings.ReplaceAll(s, `"`, "&quot;")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// cut bounds s to head+tail bytes on rune boundaries.
func cut(s string, head, tail int) (string, bool) {
	if len(s) <= head+tail {
		return s, false
	}
	return model.Clip(s, head, tail, "\n…\n")
}

func stamp(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

// ChatML renders w in the ChatML window format of DESIGN.md.
func ChatML(w Window) string {
	var b strings.Builder
	b.WriteString("<|im_start|>system\n")
	fmt.Fprintf(&b, `<session id="%s"`, Attr(w.SessionID))
	if w.Source != "" {
		fmt.Fprintf(&b, ` source="%s"`, Attr(w.Source))
	}
	fmt.Fprintf(&b, ` title="%s" directory="%s"`, Attr(w.Title), Attr(w.Directory))
	if w.ParentID != "" {
		fmt.Fprintf(&b, ` parent="%s"`, Attr(w.ParentID))
	}
	fmt.Fprintf(&b, ` range="%d-%d" total="%d"`, w.First+1, w.Last+1, w.Total)
	if w.Anchor != "" {
		fmt.Fprintf(&b, ` anchor="%s"`, Attr(w.Anchor))
	}
	b.WriteString("/>\n<|im_end|>\n")
	for _, m := range w.Messages {
		role := m.Role
		if role != "user" && role != "assistant" && role != "system" {
			role = "assistant"
		}
		fmt.Fprintf(&b, "<|im_start|>%s\n", role)
		fmt.Fprintf(&b, `<message id="%s" index="%d" time="%s"`, Attr(m.ID), m.Ord+1, stamp(m.Created))
		if m.Agent != "" && role == "assistant" {
			fmt.Fprintf(&b, ` agent="%s"`, Attr(m.Agent))
		}
		if m.Summary {
			b.WriteString(` summary="true"`)
		}
		b.WriteString(">")
		multi := len(m.Parts) != 1 || m.Parts[0].Kind != model.KindText || m.Error != ""
		if multi {
			b.WriteString("\n")
		}
		for _, p := range m.Parts {
			writePart(&b, p, w.OutputBudget)
			if multi {
				b.WriteString("\n")
			}
		}
		if m.Error != "" {
			fmt.Fprintf(&b, "<error>%s</error>\n", Escape(m.Error))
		}
		b.WriteString("</message>\n<|im_end|>\n")
	}
	b.WriteString("<|im_start|>system\n<nav")
	for _, kv := range [][2]string{{"prev", w.Nav.Prev}, {"next", w.Nav.Next}, {"head", w.Nav.Head}, {"tail", w.Nav.Tail}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, ` %s="%s"`, kv[0], Attr(kv[1]))
		}
	}
	b.WriteString("/>\n<|im_end|>\n")
	return b.String()
}

func writePart(b *strings.Builder, p model.Part, budget int) {
	switch p.Kind {
	case model.KindText, model.KindSummary:
		text, cutNow := cut(p.Text, DisplayTextMax, 0)
		if p.Synthetic {
			b.WriteString("<synthetic>")
		}
		b.WriteString(Escape(text))
		if cutNow || (p.TextLen > len(p.Text)) {
			fmt.Fprintf(b, `<truncated original_chars="%d"/>`, max(p.TextLen, len(p.Text)))
		}
		if p.Synthetic {
			b.WriteString("</synthetic>")
		}
	case model.KindReasoning:
		text, _ := cut(p.Text, DisplayTextMax, 0)
		fmt.Fprintf(b, "<reasoning>%s</reasoning>", Escape(text))
	case model.KindTool:
		fmt.Fprintf(b, `<tool_call name="%s" status="%s" id="%s"`, Attr(p.Tool), Attr(p.Status), Attr(p.CallID))
		if p.Title != "" {
			fmt.Fprintf(b, ` title="%s"`, Attr(firstLine(p.Title)))
		}
		if p.ExitCode != nil {
			fmt.Fprintf(b, ` exit="%d"`, *p.ExitCode)
		}
		b.WriteString(">")
		in, inCut := cut(p.Input, DisplayInputMax, 0)
		b.WriteString("<input")
		if inCut {
			fmt.Fprintf(b, ` truncated="true" original_chars="%d"`, len(p.Input))
		}
		fmt.Fprintf(b, ">%s</input>", Escape(in))
		body, tag := p.Output, "output"
		if p.Status == "error" || (p.Output == "" && p.Error != "") {
			body, tag = p.Error, "error"
		}
		if body != "" || tag == "output" && p.Status == "completed" {
			head, tail := OutputCut(budget)
			shown, cutNow := cut(body, head, tail)
			fmt.Fprintf(b, "<%s", tag)
			orig := max(p.OutputLen, len(body))
			if cutNow || orig > len(body) {
				fmt.Fprintf(b, ` truncated="true" original_chars="%d"`, orig)
				if p.ID != "" {
					fmt.Fprintf(b, ` rest="recall get %s"`, Attr(p.ID))
				}
			}
			if p.Truncated {
				b.WriteString(` truncated_by="opencode"`)
			}
			if p.Compacted {
				b.WriteString(` compacted="true"`)
			}
			fmt.Fprintf(b, ">%s</%s>", Escape(shown), tag)
		}
		b.WriteString("</tool_call>")
	case model.KindPatch:
		fmt.Fprintf(b, `<patch files="%s"/>`, Attr(strings.Join(p.Paths, ", ")))
	case model.KindFile:
		path := ""
		if len(p.Paths) > 0 {
			path = p.Paths[0]
		}
		fmt.Fprintf(b, `<file path="%s">%s</file>`, Attr(path), Escape(firstLine(p.Text)))
	case model.KindSubtask:
		fmt.Fprintf(b, `<subtask agent="%s">%s</subtask>`, Attr(p.Tool), Escape(p.Text))
	default:
		fmt.Fprintf(b, `<note>%s</note>`, Escape(p.Text))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
