package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

func TestReadWindowModes(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	hit := search(t, e, "ERR_QUOTA_7731").Hits[0]
	around, err := e.Read(ctx, ReadParams{Cursor: hit.Cursor, Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(around.Text, "ERR_QUOTA_7731") {
		t.Errorf("window around the hit lacks the fact:\n%s", around.Text)
	}
	if !strings.HasPrefix(around.Text, "<|im_start|>system\n<session id=\""+hit.SessionID) {
		t.Errorf("window does not open with the session header:\n%.200s", around.Text)
	}
	if got := around.Range.Last - around.Range.First + 1; got > 4 {
		t.Errorf("window holds %d messages, limit 4", got)
	}
	total := around.Range.Total

	head, err := e.Read(ctx, ReadParams{Cursor: around.Nav.Head, Limit: 3})
	if err != nil || head.Range.First != 1 || head.Range.Last != 3 {
		t.Fatalf("head: %v %+v", err, head.Range)
	}
	tail, err := e.Read(ctx, ReadParams{Cursor: around.Nav.Tail, Limit: 3})
	if err != nil || tail.Range.Last != total || tail.Range.First != total-2 {
		t.Fatalf("tail: %v %+v (total %d)", err, tail.Range, total)
	}
	next, err := e.Read(ctx, ReadParams{Cursor: head.Nav.Next, Limit: 3})
	if err != nil || next.Range.First != 4 {
		t.Fatalf("next of head: %v %+v", err, next.Range)
	}
	prev, err := e.Read(ctx, ReadParams{Cursor: next.Nav.Prev, Limit: 3})
	if err != nil || prev.Range.Last != 3 || prev.Range.First != 1 {
		t.Fatalf("prev of next: %v %+v", err, prev.Range)
	}
	if head.Nav.Prev != "" || tail.Nav.Next != "" {
		t.Errorf("head has prev %q or tail has next %q", head.Nav.Prev, tail.Nav.Next)
	}
	full, err := e.Read(ctx, ReadParams{Cursor: hit.Cursor, Mode: "full"})
	if err != nil || full.Range.First != 1 || full.Range.Last != total {
		t.Fatalf("full: %v %+v", err, full.Range)
	}
	if n := strings.Count(full.Text, "<message id="); n != total {
		t.Errorf("full window renders %d messages, session has %d", n, total)
	}
	md, err := e.Read(ctx, ReadParams{Cursor: hit.Cursor, Format: "markdown"})
	if err != nil || !strings.HasPrefix(md.Text, "# ") || strings.Contains(md.Text, "<|im_start|>") {
		t.Fatalf("markdown: %v\n%.300s", err, md.Text)
	}
	js, err := e.Read(ctx, ReadParams{Cursor: hit.Cursor, Format: "json"})
	if err != nil || len(js.Messages) == 0 || js.Messages[0].ID == "" {
		t.Fatalf("json: %v %+v", err, js.Messages)
	}
}

// Tool calls keep their status, errors and truncation in the window.
func TestReadToolFidelity(t *testing.T) {
	e := openFixture(t, "v1")
	ctx := context.Background()
	res := search(t, e, "oldString", func(p *SearchParams) { p.Filter.Kinds = []model.Kind{model.KindOutput}; p.Group = "none" })
	var sawError bool
	for _, h := range res.Hits {
		w, err := e.Read(ctx, ReadParams{Cursor: h.Cursor, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(w.Text, `status="error"`) && strings.Contains(w.Text, "<error>") {
			sawError = true
		}
	}
	if !sawError {
		t.Error("no tool call rendered with status=\"error\" and its <error>")
	}
	out := search(t, e, "verbose build", func(p *SearchParams) {
		p.Filter.Tools = []string{"bash"}
		p.Filter.Kinds = []model.Kind{model.KindOutput}
	})
	if len(out.Hits) == 0 {
		t.Fatal("no bash output hit for the verbose build")
	}
	w, err := e.Read(ctx, ReadParams{Cursor: out.Hits[0].Cursor, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.Text, `truncated="true" original_chars="`) {
		t.Errorf("long output not marked truncated:\n%.2000s", w.Text)
	}
}

func TestBadCursors(t *testing.T) {
	e := openFixture(t, "v1")
	other := openFixture(t, "v1")
	ctx := context.Background()
	hit := search(t, e, "ERR_QUOTA_7731").Hits[0]
	foreign := search(t, other, "ERR_QUOTA_7731").Hits[0].Cursor
	parts := strings.Split(hit.Cursor, ".")
	tampered := parts[0] + "." + parts[1][:len(parts[1])-2] + "AA." + parts[2]
	for name, c := range map[string]string{
		"garbage": "hello", "foreign index": foreign, "tampered": tampered, "empty mac": parts[0] + "." + parts[1] + ".",
	} {
		_, err := e.Read(ctx, ReadParams{Cursor: c})
		if !errors.Is(err, ErrBadCursor) {
			t.Errorf("%s cursor: want ErrBadCursor, got %v", name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "search") && !strings.Contains(err.Error(), "cursor") {
			t.Errorf("%s cursor: message does not say what to do: %v", name, err)
		}
	}
}

// History text can never forge a ChatML marker or close one of our tags.
func TestChatMLEscaping(t *testing.T) {
	e := openFixture(t, "v1")
	hit := search(t, e, "ERR_QUOTA_7731").Hits[0]
	w, err := e.Read(context.Background(), ReadParams{Cursor: hit.Cursor, Mode: "full"})
	if err != nil {
		t.Fatal(err)
	}
	// Every marker in the text is one we wrote: one start and one end per
	// message plus the header and nav blocks.
	starts := strings.Count(w.Text, "<|im_start|>")
	ends := strings.Count(w.Text, "<|im_end|>")
	msgs := strings.Count(w.Text, "<message id=")
	if starts != msgs+2 || ends != msgs+2 {
		t.Errorf("%d starts, %d ends for %d messages", starts, ends, msgs)
	}
}

func TestFitWindow(t *testing.T) {
	big := model.Message{Parts: []model.Part{{Kind: model.KindText, Text: strings.Repeat("x", 10000)}}}
	msgs := []model.Message{big, big, big, big}
	if n := fitWindow(msgs, 25000); n != 2 {
		t.Errorf("fit %d messages, want 2", n)
	}
	if n := fitWindow(msgs[:1], 10); n != 1 {
		t.Errorf("a window always shows its first message, got %d", n)
	}
}

func TestParseReadMode(t *testing.T) {
	for _, m := range ReadModes {
		if got, err := ParseReadMode(string(m)); err != nil || got != m {
			t.Errorf("%s: %q %v", m, got, err)
		}
	}
	if got, err := ParseReadMode(""); err != nil || got != "" {
		t.Errorf(`"": %q %v (the cursor's hint decides)`, got, err)
	}
	if _, err := ParseReadMode("start"); err == nil || !strings.Contains(err.Error(), "around, next, prev, head, tail, full") {
		t.Errorf("start is a cursor hint, not a mode to ask for: %v", err)
	}
}

// explain names the terms a hit matched; a stopword left out of the search
// used to shift the names by one ("the" reported for the term after it).
func TestExplainNamesTheMatchedTerm(t *testing.T) {
	e := openFixture(t, "v1")
	res := search(t, e, "the ERR_QUOTA_7731", func(p *SearchParams) { p.Explain = true; p.Mode = query.ModeLexical })
	if len(res.Hits) == 0 || res.Hits[0].Explain == nil {
		t.Fatalf("no explained hit: %+v", res)
	}
	if got := res.Hits[0].Explain.Matched; len(got) != 1 || got[0] != "ERR_QUOTA_7731" {
		t.Errorf("matched %q, want [ERR_QUOTA_7731]", got)
	}
}
