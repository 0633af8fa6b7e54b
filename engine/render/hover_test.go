package render

import (
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/model"
)

// A hover escapes history text (a title cannot become a link), marks its
// time as UTC, shows the hovered part first and stays within its budget.
func TestHoverMarkdown(t *testing.T) {
	msg := &model.Message{ID: "msg_1", Role: "assistant", Ord: 2, Parts: []model.Part{
		{ID: "prt_a", Kind: model.KindText, Text: "first   part\n\nof *prose*"},
		{ID: "prt_b", Kind: model.KindTool, Tool: "bash", Input: "ls <dir>"},
		{ID: "prt_c", Kind: model.KindText, Text: strings.Repeat("long ", 400)},
	}}
	got := HoverMarkdown(HoverPreview{SessionID: "ses_x", Title: "[click](javascript:x)", Directory: "/src/a_b",
		Messages: 9, Time: "2026-11-29T18:54:47Z", Message: msg, PartID: "prt_b", Link: "recall:/session/ses_x?around=msg_1"})
	for _, want := range []string{
		"**\\[click\\](javascript:x)**", "/src/a\\_b · 2026-11-29 18:54Z · 9 messages", "**assistant** · message 3 of 9",
		"`bash` ls &lt;dir&gt;\n\nfirst part of \\*prose\\*", "[Open transcript](recall:/session/ses_x?around=msg_1)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hover lacks %q:\n%s", want, got)
		}
	}
	if excerpt := got[strings.Index(got, "`bash`"):strings.Index(got, "[Open")]; len(excerpt) > HoverExcerpt+len("…\n\n") {
		t.Errorf("excerpt of %d bytes, over HoverExcerpt (%d)", len(excerpt), HoverExcerpt)
	}
	if s := HoverMarkdown(HoverPreview{SessionID: "ses_y", Time: "soon"}); !strings.HasPrefix(s, "**ses\\_y**") || !strings.Contains(s, "· soon ·") {
		t.Errorf("a session without a title or a full time: %q", s)
	}
}

func TestShortTime(t *testing.T) {
	for in, want := range map[string]string{"2026-11-29T18:54:47Z": "2026-11-29 18:54", "2026-11-29T18:54": "2026-11-29 18:54", "": "", "2026": "2026"} {
		if got := ShortTime(in); got != want {
			t.Errorf("ShortTime(%q) = %q, want %q", in, got, want)
		}
	}
}
