package engine

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// turn is one part of a synthetic session: a user or assistant text, an
// assistant's reasoning, or a tool call with its output.
type turn struct {
	role, kind   string // kind: text, reasoning, tool
	text         string
	tool, output string // kind tool: text is the command
}

// synthHistory is the v2 fixture history (recorded from the real OpenCode
// program) with synthetic sessions added in the shapes of
// tools/ocgen/opencode-db.md: ranking tests need sessions built to show
// one effect, and the recorded fixtures hold only a few.
type synthHistory struct {
	t    *testing.T
	path string
	db   *sql.DB
	at   int64 // the next message time, Unix ms
}

func newSynthHistory(t *testing.T) *synthHistory {
	path := fixture(t, "v2")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &synthHistory{t: t, path: path, db: db, at: 1796000000000}
}

// add writes a session of turns (a user turn opens a message of its own;
// the assistant's parts until the next user turn share one message).
func (h *synthHistory) add(id, title string, turns []turn) {
	t := h.t
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := h.db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO session(id, project_id, slug, directory, title, version, time_created, time_updated)
		SELECT ?, project_id, ?, directory, ?, version, ?, ? FROM session LIMIT 1`, id, id, title, h.at, h.at)
	msg, role := "", ""
	for i, tu := range turns {
		h.at += 1000
		if tu.role != role || tu.role == "user" {
			role = tu.role
			msg = fmt.Sprintf("msg_%s_%03d", id, i)
			data, _ := json.Marshal(map[string]any{"role": tu.role, "time": map[string]any{"created": h.at, "completed": h.at + 500}})
			exec(`INSERT INTO message(id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`, msg, id, h.at, h.at, string(data))
		}
		var part map[string]any
		switch tu.kind {
		case "tool":
			part = map[string]any{"type": "tool", "tool": tu.tool, "callID": fmt.Sprintf("call_%s_%d", id, i), "state": map[string]any{
				"status": "completed", "input": map[string]any{"command": tu.text, "description": "run it"},
				"output": tu.output, "title": tu.text, "metadata": map[string]any{}, "time": map[string]any{"start": h.at, "end": h.at + 10}}}
		default:
			part = map[string]any{"type": tu.kind, "text": tu.text, "time": map[string]any{"start": h.at, "end": h.at + 10}}
		}
		data, _ := json.Marshal(part)
		exec(`INSERT INTO part(id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
			fmt.Sprintf("prt_%s_%03d", id, i), msg, id, h.at, h.at, string(data))
	}
}

// open indexes the history.
func (h *synthHistory) open() *Engine {
	return openAt(h.t, h.path, filepath.Join(h.t.TempDir(), "index.db"))
}

func hitsOf(res SearchResult, session string) []Hit {
	var out []Hit
	for _, h := range res.Hits {
		if h.SessionID == session {
			out = append(out, h)
		}
	}
	return out
}

// A session found through its prompt, reasoning and tool calls shows what
// the assistant concluded, though the conclusion shares no word with the
// query: the question is in the user's words, the answer in the code's.
func TestSearchShowsTheSessionsAnswer(t *testing.T) {
	h := newSynthHistory(t)
	h.add("ses_importer", "Nightly importer", []turn{
		{role: "user", kind: "text", text: "The nightly importer keeps crashing on the vendor csv since Monday. Find out why."},
		{role: "assistant", kind: "reasoning", text: "The importer crashing only on the vendor csv suggests something in that file's first line."},
		{role: "assistant", kind: "tool", tool: "bash", text: "python -m importer vendor.csv", output: "Traceback: KeyError 'sku' while the importer read vendor.csv"},
		{role: "assistant", kind: "tool", tool: "bash", text: "head -c 16 vendor.csv | xxd", output: "efbb bf73 6b75 2c71 7479"},
		{role: "assistant", kind: "text", text: "Fixed: the file starts with a byte order mark, so the first header read as \"\\ufeffsku\". reader.py now opens it with encoding utf-8-sig (strip_bom), and a test covers it."},
	})
	e := h.open()
	res := search(t, e, "importer crashing nightly vendor csv")
	hits := hitsOf(res, "ses_importer")
	if len(hits) < 2 {
		t.Fatalf("want at least 2 hits of the session, got %d: %+v", len(hits), res.Hits)
	}
	if !strings.Contains(hits[1].Snippet, "strip_bom") {
		var got []string
		for _, x := range hits {
			got = append(got, x.Kind+": "+x.Snippet)
		}
		t.Errorf("the session's second hit should be its answer (strip_bom), got:\n%s", strings.Join(got, "\n"))
	}
	if hits[1].Score > hits[0].Score {
		t.Errorf("the answer slot scores %.3f above the best hit's %.3f", hits[1].Score, hits[0].Score)
	}
	// --explain says why a hit that matched nothing is there.
	x := hitsOf(search(t, e, "importer crashing nightly vendor csv", func(p *SearchParams) { p.Explain = true }), "ses_importer")
	if len(x) < 2 || x[1].Explain == nil || !x[1].Explain.Answer {
		t.Errorf("explain: want the answer slot marked as the session's answer, got %+v", x)
	}
	// Asked for one hit per session, the best match stays the only one.
	one := hitsOf(search(t, e, "importer crashing nightly vendor csv", func(p *SearchParams) { p.PerSession = 1 }), "ses_importer")
	if len(one) != 1 || strings.Contains(one[0].Snippet, "strip_bom") {
		t.Errorf("per session 1: want the best match alone, got %+v", one)
	}
}

// A long session that mentions each query word once, far apart, ranks
// below a short session about the query, though it covers more of the
// query's words: family coverage is counted within one exchange (adjacent
// messages), not over the whole session.
func TestShortOnTopicSessionOutranksScatteredMentions(t *testing.T) {
	h := newSynthHistory(t)
	h.add("ses_export", "Investigate a job", []turn{
		{role: "user", kind: "text", text: "The nightly export takes forever now."},
		{role: "assistant", kind: "reasoning", text: "Check why the export is slow."},
		{role: "assistant", kind: "tool", tool: "bash", text: "psql -c 'explain select * from orders'", output: "Seq Scan on orders (cost=0.00..431.00 rows=21000)"},
		{role: "assistant", kind: "text", text: "Fixed: the export was slow because of a missing index; it runs in 40 s again."},
	})
	var long []turn
	mention := map[int]string{
		1:  "The nightly cron entry is renamed to match the service.",
		9:  "The export of the env var now lives in the Makefile.",
		17: "The build was slow on the first run, then cached.",
		25: "Partitioning is out of scope for this cleanup.",
		33: "Added the orders table migration the reviewer asked for.",
	}
	for i := 0; i < 40; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text, ok := mention[i]
		if !ok {
			text = fmt.Sprintf("Cleanup step %d: rename the service files and move the config under deploy.", i)
		}
		long = append(long, turn{role: role, kind: "text", text: text})
	}
	h.add("ses_cleanup", "Cleanup day", long)
	e := h.open()
	res := search(t, e, "nightly export slow after partitioning the orders table")
	var order []string
	for _, x := range res.Hits {
		if !slices.Contains(order, x.SessionID) && strings.HasPrefix(x.SessionID, "ses_") && (x.SessionID == "ses_export" || x.SessionID == "ses_cleanup") {
			order = append(order, x.SessionID)
		}
	}
	if len(order) != 2 || order[0] != "ses_export" {
		t.Errorf("want the session about the slow export first, got %v", order)
	}
}

// A session whose title names the query's rarest word ranks above one
// that mentions it in passing, when both cover the query's common words
// alike: the title says what the session is about.
func TestTitleNamingTheRarestTermRanksFirst(t *testing.T) {
	h := newSynthHistory(t)
	for i := 0; i < 12; i++ {
		h.add(fmt.Sprintf("ses_filler%02d", i), fmt.Sprintf("Service %d chores", i), []turn{
			{role: "user", kind: "text", text: fmt.Sprintf("Bump the pool size in the config of service %d.", i)},
			{role: "assistant", kind: "text", text: "Done: the pool config is bumped."},
		})
	}
	h.add("ses_passing", "Service cleanup", []turn{
		{role: "user", kind: "text", text: "Update the pool config for the service and tidy the deploy folder."},
		{role: "assistant", kind: "tool", tool: "bash", text: "cat deploy/env", output: "APP_PORT=8080\nLOG_LEVEL=info\nDB_HOST=pgbouncer.internal\nDB_PORT=6432\nCACHE_TTL=60\n"},
		{role: "assistant", kind: "text", text: "Done: the pool config is updated and the deploy folder tidied."},
	})
	h.add("ses_titled", "Switch to pgbouncer", []turn{
		{role: "user", kind: "text", text: "Update the pool config for the new proxy in front of the database."},
		{role: "assistant", kind: "text", text: "Done: the pool config points at the proxy now, with a smaller pool per pod."},
	})
	e := h.open()
	res := search(t, e, "pgbouncer pool config")
	var order []string
	for _, x := range res.Hits {
		if (x.SessionID == "ses_titled" || x.SessionID == "ses_passing") && !slices.Contains(order, x.SessionID) {
			order = append(order, x.SessionID)
		}
	}
	if len(order) == 0 || order[0] != "ses_titled" {
		t.Errorf("want the session titled with pgbouncer first, got %v", order)
	}
}
