package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
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
	// Another user's (or machine's) recall: the same history under the
	// same name, but its own cursor key.
	otherData := t.TempDir()
	other, err := Open(context.Background(), Options{DBPath: fixture(t, "v1"), IndexPath: filepath.Join(t.TempDir(), "i.db"),
		Getenv: func(k string) string { return map[string]string{"XDG_DATA_HOME": otherData}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hit := search(t, e, "ERR_QUOTA_7731").Hits[0]
	foreign := search(t, other, "ERR_QUOTA_7731").Hits[0].Cursor
	if foreign == hit.Cursor {
		t.Fatalf("two keys signed the same cursor %s", foreign)
	}
	dot := strings.LastIndexByte(hit.Cursor, '.')
	body, tag := hit.Cursor[:dot], hit.Cursor[dot+1:]
	tampered := strings.Replace(body, "prt_", "prt_x", 1) + "." + tag
	for name, c := range map[string]string{
		"garbage": "hello", "signed with another key": foreign, "tampered": tampered, "empty tag": body + ".",
		"made by an older recall": "rc1.c2VzX2FhfG1zZ19ifHw.aLWmXtseCunDwYNr", "another source's name": strings.Replace(body, ":v1:", ":v2:", 1) + "." + tag,
	} {
		_, err := e.Read(ctx, ReadParams{Cursor: c})
		if !errors.Is(err, ErrBadCursor) {
			t.Errorf("%s cursor: want ErrBadCursor, got %v", name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "search") && !strings.Contains(err.Error(), "cursor") {
			t.Errorf("%s cursor: message does not say what to do: %v", name, err)
		}
	}
	if _, err := e.Read(ctx, ReadParams{Cursor: "rc1.c2VzX2FhfG1zZ19ifHw.aLWmXtseCunDwYNr"}); err == nil || !strings.Contains(err.Error(), "older recall") {
		t.Errorf("a v1 cursor: %v, want it called older", err)
	}
	if _, err := e.Read(ctx, ReadParams{Cursor: foreign}); err == nil || !strings.Contains(err.Error(), "another key") {
		t.Errorf("a foreign cursor: %v, want it called signed with another key", err)
	}
}

// A cursor this user signed for a source that is not open says which one
// is missing and which are open.
func TestCursorOfASourceNotOpen(t *testing.T) {
	e := openFixture(t, "v1")
	c := e.encodeCursor(Cursor{Source: "laptop", SessionID: "ses_dd7571907ffe5vPpW7vxTE77tW"})
	_, err := e.Read(context.Background(), ReadParams{Cursor: c})
	if !errors.Is(err, ErrBadCursor) || !strings.Contains(err.Error(), `names source "laptop", which is not open (open sources: v1)`) {
		t.Fatalf("got %v", err)
	}
}

// Cursors name OpenCode's ids and the source, not one index: a cursor
// taken before `sync --force`, a rebuild of a damaged index, or the index
// file deleted and made again still reads the same window.
func TestCursorSurvivesIndexRebuilds(t *testing.T) {
	db := fixture(t, "v1")
	ixPath := filepath.Join(t.TempDir(), "index.db")
	e := openAt(t, db, ixPath)
	ctx := context.Background()
	hit := search(t, e, "ERR_QUOTA_7731").Hits[0]
	want, err := e.Read(ctx, ReadParams{Cursor: hit.Cursor, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, e *Engine) {
		t.Helper()
		got, err := e.Read(ctx, ReadParams{Cursor: hit.Cursor, Limit: 3})
		if err != nil {
			t.Fatalf("after %s: %v", what, err)
		}
		if got.Text != want.Text {
			t.Errorf("after %s the cursor reads another window:\n%s\nwant:\n%s", what, got.Text, want.Text)
		}
		if next, err := e.Read(ctx, ReadParams{Cursor: want.Nav.Next, Limit: 3}); err != nil || next.Range.First != want.Range.Last+1 {
			t.Errorf("after %s the next cursor: %+v %v", what, next.Range, err)
		}
	}
	if _, err := e.Sync(ctx, SyncOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	same("sync --force", e)
	if _, err := e.RebuildIndex(ctx); err != nil {
		t.Fatal(err)
	}
	same("RebuildIndex", e)
	e.Close()
	for _, p := range []string{ixPath, ixPath + "-wal", ixPath + "-shm"} {
		os.Remove(p)
	}
	same("the index file deleted", openAt(t, db, ixPath))
}

// Cursors are short: a few dozen characters, in every storage era (the
// v2 engine's parts have no OpenCode id: their message's stands in).
func TestCursorLength(t *testing.T) {
	var lens []int
	for fx, queries := range map[string][]string{"v1": {"ERR_QUOTA_7731", "rounding", "invoice", "worker", "quota"}, "v2": {"ERR_EVICT_4410", "cache", "eviction"}} {
		e := openFixture(t, fx)
		for _, q := range queries {
			for _, h := range search(t, e, q, func(p *SearchParams) { p.Limit = 20 }).Hits {
				lens = append(lens, len(h.Cursor))
			}
		}
	}
	sort.Ints(lens)
	median, longest := lens[len(lens)/2], lens[len(lens)-1]
	t.Logf("%d cursors: median %d, max %d characters", len(lens), median, longest)
	if longest > 60 {
		t.Errorf("a cursor of %d characters; want at most 60", longest)
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
