package engine

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// sourceOutput reads a v1 tool part's output straight from opencode.db:
// what get must return, whole.
func sourceOutput(t *testing.T, db, partID string) string {
	t.Helper()
	h, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var out string
	if err := h.QueryRow(`SELECT json_extract(data, '$.state.output') FROM part WHERE id = ?`, partID).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// getAll pages through id with length-character pages and returns the
// pages.
func getAll(t *testing.T, e *Engine, id string, length int) []GetResult {
	t.Helper()
	var pages []GetResult
	off := 0
	for {
		r, err := e.Get(context.Background(), GetParams{ID: id, Offset: off, Length: length})
		if err != nil {
			t.Fatalf("get %s at %d: %v", id, off, err)
		}
		pages = append(pages, r)
		if r.NextOffset == nil {
			return pages
		}
		if *r.NextOffset != off+r.Length || len(pages) > 1000 {
			t.Fatalf("nextOffset %d after a page at %d of %d characters", *r.NextOffset, off, r.Length)
		}
		off = *r.NextOffset
	}
}

// W1's build output is 51,273 characters; the index keeps only its head
// and tail, and read shows 2.8 KB of it. get pages through all of it
// exactly as OpenCode stored it. (Before get there was no way: the test
// did not compile, and read's window held 2,800 bytes of it.)
func TestGetPagesAWholeOutputFromTheHistory(t *testing.T) {
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "i.db"))
	hits := search(t, e, "Verbose build", func(p *SearchParams) { p.Filter.Tools = []string{"bash"} }).Hits
	var id, cursor string
	for _, h := range hits {
		if h.SessionID == "ses_dd7574313ffel4nKxdxp14c1ti" && id == "" {
			id, cursor = h.PartID, h.Cursor
		}
	}
	if id == "" {
		t.Fatalf("no bash output hit in W1: %+v", hits)
	}
	want := sourceOutput(t, db, id)
	if n := utf8.RuneCountInString(want); n < 50_000 {
		t.Fatalf("fixture output is %d characters, expected W1's 51,273", n)
	}
	pages := getAll(t, e, id, 0)
	var got strings.Builder
	for i, p := range pages {
		if !utf8.ValidString(p.Text) {
			t.Fatalf("page %d is not valid UTF-8", i)
		}
		if i < len(pages)-1 && p.Length != DefaultGetLength {
			t.Errorf("page %d holds %d characters, want the default %d", i, p.Length, DefaultGetLength)
		}
		if p.OriginalChars != utf8.RuneCountInString(want) || p.Kind != "tool" || p.Tool != "bash" || p.Status != "completed" || p.Input == "" {
			t.Errorf("page %d: %+v", i, p)
		}
		got.WriteString(p.Text)
	}
	if got.String() != e.show(want) {
		t.Errorf("pages joined (%d characters) differ from the history's output (%d)", utf8.RuneCountInString(got.String()), utf8.RuneCountInString(want))
	}
	// A cursor gets the same part; a message id gets the whole message.
	r, err := e.Get(context.Background(), GetParams{ID: cursor, Length: 10})
	if err != nil || r.PartID != id {
		t.Errorf("get by cursor: %+v %v", r, err)
	}
	m, err := e.Get(context.Background(), GetParams{ID: pages[0].MessageID, Length: MaxGetLength})
	if err != nil || m.Kind != "message" || !strings.Contains(m.Text, "[part "+id+" tool bash completed]") || m.OriginalChars <= pages[0].OriginalChars {
		t.Errorf("get of the message: kind %q, %d characters, %v", m.Kind, m.OriginalChars, err)
	}
}

// Pages count characters, never bytes, and never split a rune. No
// committed fixture holds a non-ASCII character, so a copy of v1 gets one
// output rewritten with 2-, 3- and 4-byte runes.
func TestGetPagesByRunes(t *testing.T) {
	db := fixture(t, "v1")
	const part = "prt_228a8e7b0001BLQKWPafRsg3bJ"
	text := strings.Repeat("naïve café — 日本語 🦊 ", 20)
	h, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Exec(`UPDATE part SET data = json_set(data, '$.state.output', ?) WHERE id = ?`, text, part); err != nil {
		t.Fatal(err)
	}
	h.Close()
	e := openAt(t, db, filepath.Join(t.TempDir(), "i.db"))
	for _, length := range []int{1, 3, 7, 64} {
		var b strings.Builder
		for _, p := range getAll(t, e, part, length) {
			if p.Length > length || !utf8.ValidString(p.Text) || utf8.RuneCountInString(p.Text) != p.Length || p.OriginalChars != utf8.RuneCountInString(text) {
				t.Fatalf("page %+v of length %d", p, length)
			}
			b.WriteString(p.Text)
		}
		if b.String() != text {
			t.Fatalf("pages of %d characters joined differ from the output", length)
		}
	}
}

// A page boundary inside a secret must not leak it: the whole text is
// redacted before it is paged. Every page length from 1 to 40 puts a
// boundary at each position of the AWS key in S1's `cat .env` output.
func TestGetRedactsBeforePaging(t *testing.T) {
	db := fixture(t, "secrets")
	e := openAt(t, db, filepath.Join(t.TempDir(), "i.db"))
	const part, secret = "prt_228ab328a001cm2MfKcaIEmUB1", "AKIAFAKE0000TEST1234"
	raw := sourceOutput(t, db, part)
	if !strings.Contains(raw, secret) {
		t.Fatalf("fixture part lacks the planted key")
	}
	at := utf8.RuneCountInString(raw[:strings.Index(raw, secret)])
	for length := 1; length <= 40; length++ {
		off := max(0, at-length+5) // a page ending inside the key's place
		r, err := e.Get(context.Background(), GetParams{ID: part, Offset: off, Length: length})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Redacted {
			t.Errorf("length %d: result not marked redacted", length)
		}
		for i := 0; i+6 <= len(secret); i++ {
			if strings.Contains(r.Text, secret[i:i+6]) && length >= 6 {
				t.Fatalf("length %d at %d: page %q leaks %q", length, off, r.Text, secret[i:i+6])
			}
		}
	}
	whole, err := e.Get(context.Background(), GetParams{ID: part, Length: MaxGetLength})
	if err != nil || strings.Contains(whole.Text, secret) || !strings.Contains(whole.Text, "[redacted:") {
		t.Errorf("whole output not redacted: %v", err)
	}
}

// An unknown id names itself and says how to find ids; a session id says
// get takes parts and messages.
func TestGetUnknownID(t *testing.T) {
	e := openFixture(t, "v1")
	_, err := e.Get(context.Background(), GetParams{ID: "prt_0000000000000000000000000"})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "prt_0000000000000000000000000") || !strings.Contains(err.Error(), "recall search") {
		t.Errorf("unknown part: %v", err)
	}
	_, err = e.Get(context.Background(), GetParams{ID: "ses_dd7571907ffe5vPpW7vxTE77tW"})
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "recall read") {
		t.Errorf("session id: %v", err)
	}
	_, err = e.Get(context.Background(), GetParams{ID: "c1:v1:prt_228a8e7b0001BLQKWPafRsg3bJ.AAAAAAAA"})
	if !errors.Is(err, ErrBadCursor) {
		t.Errorf("forged cursor: %v", err)
	}
}

// An output OpenCode pruned (state.time.compacted set: hidden from the
// model, kept in the table) says so. No committed fixture has one (pruning
// is opt-in in 1.18.33), so a copy of v1 gets the documented field set on
// one part.
func TestGetSaysPruned(t *testing.T) {
	db := fixture(t, "v1")
	h, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	const part = "prt_228a8e7b0001BLQKWPafRsg3bJ"
	if _, err := h.Exec(`UPDATE part SET data = json_set(data, '$.state.time.compacted', 1795972700000) WHERE id = ?`, part); err != nil {
		t.Fatal(err)
	}
	h.Close()
	e := openAt(t, db, filepath.Join(t.TempDir(), "i.db"))
	r, err := e.Get(context.Background(), GetParams{ID: part})
	if err != nil || !r.Pruned || !strings.Contains(r.Text, "ERR_QUOTA_7731") {
		t.Errorf("pruned part: pruned=%v text=%q err=%v", r.Pruned, r.Text, err)
	}
}

// A window shows outputBudget bytes of each tool output and, when it cuts
// one, names the part to get whole; the default is
// render.DefaultOutputBudget. Before, the budget was a fixed 2,000 + 800
// bytes and a cut output said only how long it was.
func TestReadOutputBudget(t *testing.T) {
	e := openFixture(t, "v1")
	const w1 = "ses_dd7574313ffel4nKxdxp14c1ti" // a 51 KB bash output
	outputLen := func(text string) int {
		i := strings.Index(text, "<output truncated")
		j := strings.Index(text[i:], "</output>")
		k := strings.Index(text[i:], ">")
		return j - k - 1
	}
	var sizes []int
	for _, b := range []int{0, 400, 4000} {
		r, err := e.Read(context.Background(), ReadParams{Cursor: w1, OutputBudget: b})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Text, `rest="recall get prt_`) {
			t.Fatalf("budget %d: a cut output does not say how to get the rest:\n%s", b, r.Text)
		}
		sizes = append(sizes, outputLen(r.Text))
	}
	if sizes[0] < 1500 || sizes[0] > 1700 || sizes[1] > 500 || sizes[2] < 3900 {
		t.Errorf("shown output bytes for budgets default, 400, 4000: %v", sizes)
	}
}
