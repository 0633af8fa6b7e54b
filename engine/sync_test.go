package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/recallhq/recall/engine/config"
	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/render"
)

func hashFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// opencode.db is byte-identical after every engine operation, and no file
// (-wal, -shm, journal) appears beside it.
func TestSourceNeverWritten(t *testing.T) {
	for _, fx := range []string{"v1", "v2"} {
		db := fixture(t, fx)
		before, files := hashFile(t, db), listDir(t, filepath.Dir(db))
		e := openAt(t, db, filepath.Join(t.TempDir(), "index.db"))
		ctx := context.Background()
		res := search(t, e, "cache")
		if len(res.Hits) > 0 {
			if _, err := e.Read(ctx, ReadParams{Cursor: res.Hits[0].Cursor, Mode: "full"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.Sessions(ctx, SessionsParams{Filter: "cache"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Status(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Sync(ctx, SyncOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		e.Close()
		if after := hashFile(t, db); after != before {
			t.Errorf("%s: opencode.db changed", fx)
		}
		if got := listDir(t, filepath.Dir(db)); got != files {
			t.Errorf("%s: files beside opencode.db changed: %s -> %s", fx, files, got)
		}
	}
}

// dumpIndex renders the index's content (not its row ids) for comparison.
func dumpIndex(t *testing.T, e *Engine) string {
	t.Helper()
	db := rawIndex(t, e)
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, root_id, parent_id, directory, title, messages, turns, tool_calls, first_prompt, stamp FROM sessions ORDER BY id`,
		`SELECT id, session_id, ord, role, error, summary FROM messages ORDER BY session_id, ord`,
		`SELECT id, session_id, msg_ord, ord, kind, text, tool, status, input, output, output_len, error, paths FROM parts ORDER BY session_id, msg_ord, ord`,
		`SELECT session_id, part_id, kind, role, tool, text FROM docs ORDER BY session_id, part_id, kind`,
		`SELECT term, df FROM vocab ORDER BY term`,
		`SELECT path, session_id FROM file_touches ORDER BY path, session_id`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
	}
	// The FTS index must answer the same: every vocabulary term's hits.
	rows, err := db.Query(`SELECT term FROM vocab ORDER BY term LIMIT 400`)
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		terms = append(terms, s)
	}
	rows.Close()
	for _, term := range terms {
		var ids []string
		r, err := db.Query(`SELECT d.session_id || '/' || d.part_id || '/' || d.kind FROM docs_fts JOIN docs d ON d.rid = docs_fts.rowid WHERE docs_fts MATCH ?`, `"`+term+`"`)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			var s string
			r.Scan(&s)
			ids = append(ids, s)
		}
		r.Close()
		sort.Strings(ids)
		fmt.Fprintln(&b, term, ids)
	}
	return b.String()
}

// An index kept across a new, an edited and a deleted session matches a
// fresh rebuild of the same history.
func TestIncrementalMatchesRebuild(t *testing.T) {
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "kept.db"))
	ctx := context.Background()
	if r, err := e.Sync(ctx, SyncOptions{}); err != nil || !r.Idle {
		t.Fatalf("second sync should be idle: %+v %v", r, err)
	}
	// Change the history the way OpenCode would: a writable handle on the
	// copy (the engine itself never writes it).
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := w.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var victim, edited, template string
	w.QueryRow(`SELECT id FROM session WHERE title LIKE 'Verbose build%'`).Scan(&victim)
	w.QueryRow(`SELECT id FROM session WHERE title LIKE 'Fix invoice%'`).Scan(&edited)
	w.QueryRow(`SELECT id FROM session WHERE title LIKE 'List runtime%'`).Scan(&template)
	if victim == "" || edited == "" || template == "" {
		t.Fatal("fixture sessions not found")
	}
	mustExec(`DELETE FROM part WHERE session_id = ?`, victim)
	mustExec(`DELETE FROM message WHERE session_id = ?`, victim)
	mustExec(`DELETE FROM session WHERE id = ?`, victim)
	mustExec(`UPDATE part SET data = json_set(data, '$.text', 'PLUMCOT_EDITED ' || json_extract(data, '$.text')), time_updated = time_updated + 1
		WHERE id = (SELECT id FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'text' LIMIT 1)`, edited)
	mustExec(`UPDATE session SET title = 'Fix invoice total rounding drift (edited)' WHERE id = ?`, edited)
	// A new session: a copy of another with fresh ids.
	newID := importCopy(t, w, template)

	r, err := e.Sync(ctx, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Added != 1 || r.Updated != 1 || r.Deleted != 1 {
		t.Errorf("sync saw %+v, want 1 added, 1 updated, 1 deleted", r)
	}
	if hits := search(t, e, "PLUMCOT_EDITED").Hits; len(hits) == 0 || hits[0].SessionID != edited {
		t.Errorf("edited text not found: %+v", hits)
	}
	if hits := search(t, e, "QUINCEBERRY").Hits; len(hits) == 0 || hits[0].SessionID != newID {
		t.Errorf("new session not found: %+v", hits)
	}
	fresh := openAt(t, db, filepath.Join(t.TempDir(), "fresh.db"))
	kept, rebuilt := dumpIndex(t, e), dumpIndex(t, fresh)
	if kept != rebuilt {
		t.Errorf("kept index differs from a rebuild:\n%s", firstDiff(kept, rebuilt))
	}
}

// importCopy adds to the history through w a copy of session template
// with fresh ids, titled 'Copied session QUINCEBERRY', without events (as
// `opencode import` writes), and returns its id.
func importCopy(t *testing.T, w *sql.DB, template string) string {
	t.Helper()
	newID := "ses_0000000000000NEWSESSION01"
	for _, q := range []string{
		`INSERT INTO session SELECT ?, project_id, workspace_id, parent_id, slug, directory, path, 'Copied session QUINCEBERRY',
		version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output,
		tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created + 5, time_updated + 5,
		time_compacting, time_archived FROM session WHERE id = ?`,
		`INSERT INTO message SELECT 'n' || id, ?, time_created, time_updated, data FROM message WHERE session_id = ?`,
		`INSERT INTO part SELECT 'n' || id, 'n' || message_id, ?, time_created, time_updated, data FROM part WHERE session_id = ?`,
	} {
		if _, err := w.Exec(q, newID, template); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return newID
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n kept:    %.300s\n rebuilt: %.300s", i, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths differ: %d vs %d lines", len(la), len(lb))
}

// Excluded directories and forgotten sessions never reach the index, and a
// config change re-reads the history.
func TestExcludeAndForget(t *testing.T) {
	db := fixture(t, "v1")
	ix := filepath.Join(t.TempDir(), "i.db")
	e := openAt(t, db, ix)
	ctx := context.Background()
	hit := search(t, e, "ERR_QUOTA_7731").Hits[0]
	res, err := e.Forget(ctx, hit.SessionID)
	if err != nil || len(res.Forgotten) == 0 {
		t.Fatalf("forget: %v %+v", err, res)
	}
	if _, err := e.Sync(ctx, SyncOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) != 0 {
		t.Errorf("forgotten session came back: %+v", hits[0].Title)
	}
	e.Close()
	cfg := &config.Config{ExcludeDirectories: []string{"/tmp/ocgen/recall-v1/projects/webapp"}}
	e2, err := Open(ctx, Options{DBPath: db, IndexPath: ix, Getenv: noEnv, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if _, err := e2.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	list, _ := e2.Sessions(ctx, SessionsParams{Limit: 100})
	for _, s := range list.Sessions {
		if strings.HasPrefix(s.Directory, "/tmp/ocgen/recall-v1/projects/webapp") {
			t.Errorf("excluded directory indexed: %s", s.Title)
		}
	}
	if len(list.Sessions) == 0 {
		t.Fatal("everything excluded")
	}
}

// A search pays nothing in proportion to the index for a query without
// typos: term frequencies are point lookups, and the vocabulary's words
// (which typo corrections scan) are read only for a term that matches
// nothing. A typo is still corrected.
func TestSearchReadsVocabularyOnlyForTypos(t *testing.T) {
	e := openFixture(t, "v1")
	sh := e.shards[0]
	res := search(t, e, "invoice ledger totals")
	if len(res.Hits) == 0 {
		t.Fatal("no hits for words the fixture holds")
	}
	if sh.vocab.v != nil {
		t.Fatal("a search without typos read the vocabulary")
	}
	res = search(t, e, "ledgre")
	if len(res.Corrections) == 0 || len(res.Hits) == 0 {
		t.Fatalf("a typo was not corrected: corrections %v, %d hits", res.Corrections, len(res.Hits))
	}
	if sh.vocab.v == nil {
		t.Fatal("correcting a typo did not read the vocabulary")
	}
}

// goroutinesCreated is how many goroutines the process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A sync under a context that can be cancelled (a CLI sync's, which
// Ctrl-C cancels; the server's) writes its rows without the SQLite
// driver's watcher goroutine per statement: a cold index started seven a
// part (a part's rows, its documents, each vocabulary term at each
// commit) and was 30% slower than under context.Background
// (docs/benchmarks.md, "A cold index under a cancellable context").
func TestSyncStartsNoGoroutinePerRow(t *testing.T) {
	db := fixture(t, "v1")
	multiplyHistory(t, db, 10)
	e := openNoSync(t, db, filepath.Join(t.TempDir(), "i.db"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := goroutinesCreated()
	res, err := e.Sync(ctx, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := goroutinesCreated() - before
	t.Logf("%d goroutines for %d parts of %d sessions", created, res.Parts, res.Added)
	if res.Parts < 1000 {
		t.Fatalf("only %d parts written; the test needs a history that makes a per-row cost show", res.Parts)
	}
	if created > uint64(res.Parts)/2 {
		t.Errorf("the sync started %d goroutines for %d parts: one a statement again?", created, res.Parts)
	}
}

// A sync cancelled while the reader goroutine is ahead of the writer stops
// both: it returns the context's error, leaves no goroutine behind, and the
// next sync completes the index.
func TestCancelledSyncStopsTheReader(t *testing.T) {
	db := fixture(t, "v1")
	ix := filepath.Join(t.TempDir(), "index.db")
	e, err := Open(context.Background(), Options{DBPath: db, IndexPath: ix, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = e.Sync(ctx, SyncOptions{Progress: func(p SyncProgress) {
		if p.Done == 1 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sync: err = %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after the cancelled sync, %d before: the reader did not stop", n, before)
	}
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil || res.Added == 0 {
		t.Fatalf("sync after the cancelled one: %+v, %v", res, err)
	}
}

// A sync that must re-read most of the index (--force here; a config
// change or a replaced history alike) clears it at once and writes every
// session as new, and the index equals a rebuild; one that re-reads a few
// sessions leaves the others' documents where they were.
func TestRereadOfMostSessionsClearsTheIndex(t *testing.T) {
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "kept.db"))
	ctx := context.Background()
	raw := rawIndex(t, e)
	// The documents of sessions other than skip: how many, and their rids.
	docRIDs := func(skip string) (n int, sum int64) {
		t.Helper()
		if err := raw.QueryRow(`SELECT count(*), coalesce(sum(rid),0) FROM docs WHERE session_id != ?`, skip).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		return n, sum
	}
	var sessions int
	raw.QueryRow(`SELECT count(*) FROM sessions`).Scan(&sessions)
	var renamed string
	raw.QueryRow(`SELECT session_id FROM docs ORDER BY rid LIMIT 1`).Scan(&renamed)
	n0, sum0 := docRIDs(renamed)

	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mustWrite(t, w, renamed, "session.updated.1", `UPDATE session SET title = title || ' (renamed)' WHERE id = ?`, renamed)
	res, err := e.Sync(ctx, SyncOptions{})
	if err != nil || res.Updated != 1 {
		t.Fatalf("sync after a rename: %+v %v; want 1 updated", res, err)
	}
	if n, sum := docRIDs(renamed); n != n0 || sum != sum0 {
		t.Errorf("a rename rewrote other sessions' documents (%d docs, rid sum %d; were %d, %d)", n, sum, n0, sum0)
	}

	res, err = e.Sync(ctx, SyncOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated != sessions || res.Added != 0 {
		t.Errorf("forced sync: %d updated, %d added; want all %d updated", res.Updated, res.Added, sessions)
	}
	// Cleared: documents are numbered from the start again.
	var minRID int64
	raw.QueryRow(`SELECT min(rid) FROM docs`).Scan(&minRID)
	if minRID != 1 {
		t.Errorf("after the forced sync the first document is numbered %d; want 1 (cleared, then written)", minRID)
	}
	fresh := openAt(t, db, filepath.Join(t.TempDir(), "fresh.db"))
	if kept, rebuilt := dumpIndex(t, e), dumpIndex(t, fresh); kept != rebuilt {
		t.Errorf("index after the forced re-read differs from a rebuild:\n%s", firstDiff(kept, rebuilt))
	}
	if r, err := e.Sync(ctx, SyncOptions{}); err != nil || !r.Idle {
		t.Errorf("sync after the forced re-read: %+v %v; want idle", r, err)
	}
}

// A sync after a write re-reads the whole session but keeps what it
// writes again unchanged: each unchanged document keeps its row, its
// full-text entry and its vector; the edited part's document and the old
// title's are replaced, and the full-text index holds no entry for them.
// The index still equals a rebuild.
func TestRereadKeepsUnchangedDocuments(t *testing.T) {
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "kept.db"))
	ctx := context.Background()
	w, sid, partID := invoiceTextPart(t, db)
	raw := rawIndex(t, e)
	docsOf := func() map[string]int64 {
		t.Helper()
		rows, err := raw.Query(`SELECT rid, kind, part_id, message_id FROM docs WHERE session_id = ?`, sid)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int64{}
		for rows.Next() {
			var rid int64
			var kind, part, msg string
			rows.Scan(&rid, &kind, &part, &msg)
			out[kind+"/"+part+"/"+msg] = rid
		}
		return out
	}
	ftsRows := func() map[int64]bool {
		t.Helper()
		rows, err := raw.Query(`SELECT rowid FROM docs_fts`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]bool{}
		for rows.Next() {
			var rid int64
			rows.Scan(&rid)
			out[rid] = true
		}
		return out
	}
	before := docsOf()
	if len(before) < 4 {
		t.Fatalf("the session has %d documents; the test needs several", len(before))
	}
	// A vector for each document, as `recall embed` would have stored.
	for _, rid := range before {
		if _, err := raw.Exec(`INSERT INTO doc_vectors(doc_rid, hash) VALUES (?, x'00')`, rid); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, w, sid, "message.part.updated.1", `UPDATE part SET data = json_set(data, '$.text', 'PLUMCOT wholly rewritten words'), time_updated = time_updated + 1 WHERE id = ?`, partID)
	mustWrite(t, w, sid, "session.updated.1", `UPDATE session SET title = 'Renamed QUINCEBERRY', time_updated = time_updated + 1 WHERE id = ?`, sid)
	if r, err := e.Sync(ctx, SyncOptions{}); err != nil || r.Updated != 1 {
		t.Fatalf("sync: %+v %v", r, err)
	}
	after := docsOf()
	fts := ftsRows()
	kept, replaced := 0, 0
	for key, rid := range before {
		changed := strings.HasPrefix(key, "title/") || strings.Contains(key, "/"+partID+"/")
		now, ok := after[key]
		var vec int
		raw.QueryRow(`SELECT count(*) FROM doc_vectors WHERE doc_rid = ?`, rid).Scan(&vec)
		switch {
		case changed:
			replaced++
			if ok && now == rid {
				t.Errorf("document %s was rewritten but kept its row %d", key, rid)
			}
			if fts[rid] {
				t.Errorf("the full-text index still holds the replaced document %s (row %d)", key, rid)
			}
		case !ok || now != rid:
			t.Errorf("unchanged document %s moved from row %d to %d", key, rid, now)
		case !fts[rid]:
			t.Errorf("unchanged document %s (row %d) lost its full-text entry", key, rid)
		case vec != 1:
			t.Errorf("unchanged document %s (row %d) lost its vector", key, rid)
		default:
			kept++
		}
	}
	if replaced != 2 || kept == 0 {
		t.Errorf("%d documents replaced (want the title's and the part's) and %d kept", replaced, kept)
	}
	var docs int
	raw.QueryRow(`SELECT count(*) FROM docs`).Scan(&docs)
	if len(fts) != docs {
		t.Errorf("the full-text index holds %d rows for %d documents", len(fts), docs)
	}
	for _, q := range []string{"PLUMCOT", "QUINCEBERRY"} {
		if hits := search(t, e, q).Hits; len(hits) == 0 || hits[0].SessionID != sid {
			t.Errorf("%s: the rewritten text is not found: %+v", q, hits)
		}
	}
	fresh := openAt(t, db, filepath.Join(t.TempDir(), "fresh.db"))
	if got, want := dumpIndex(t, e), dumpIndex(t, fresh); got != want {
		t.Errorf("kept index differs from a rebuild:\n%s", firstDiff(got, want))
	}
}

// A session last written under another configuration (here, before a
// redaction pattern was added) is written anew when it is re-read, never
// kept document by document: the text compared is the history's, before
// redaction, so keeping by it would leave the old, unredacted terms in the
// full-text index. Every other session's stamp is made to claim the new
// configuration, so the sync re-reads this one alone instead of clearing
// the index.
func TestRereadUnderAnotherConfigRewritesTheSession(t *testing.T) {
	db := fixture(t, "v1")
	w, sid, partID := invoiceTextPart(t, db)
	if _, err := w.Exec(`UPDATE part SET data = json_set(data, '$.text', json_extract(data, '$.text') || ' key PLUMSECRET4417') WHERE id = ?`, partID); err != nil {
		t.Fatal(err)
	}
	ix := filepath.Join(t.TempDir(), "i.db")
	e := openAt(t, db, ix)
	raw := rawIndex(t, e)
	secretRows := func() int {
		t.Helper()
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM docs_fts WHERE docs_fts MATCH '"plumsecret4417"'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if secretRows() == 0 {
		t.Fatal("before the pattern, the word is indexed")
	}
	e.Close()
	ctx := context.Background()
	cfg := &config.Config{Redact: map[string]string{"plum": `PLUMSECRET[0-9]+`}}
	e2, err := Open(ctx, Options{DBPath: db, IndexPath: ix, Getenv: noEnv, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	var stamp string
	raw.QueryRow(`SELECT stamp FROM sessions WHERE id = ?`, sid).Scan(&stamp)
	_, old, ok := strings.Cut(stamp, "|config:")
	if !ok {
		t.Fatalf("stamp %q carries no configuration", stamp)
	}
	old, _, _ = strings.Cut(old, "|")
	if _, err := raw.Exec(`UPDATE sessions SET stamp = replace(stamp, ?, ?) WHERE id <> ?`, "|config:"+old, "|config:"+e2.config.Hash(), sid); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`UPDATE part SET time_updated = time_updated + 1 WHERE id = ?`, partID); err != nil {
		t.Fatal(err)
	}
	r, err := e2.Sync(ctx, SyncOptions{})
	if err != nil || r.Updated != 1 {
		t.Fatalf("the sync should re-read the one session: %+v %v", r, err)
	}
	if n := secretRows(); n != 0 {
		t.Errorf("the redacted word is still in the full-text index (%d rows)", n)
	}
}

// An index made before file_touches was indexed by session gains that
// index at its next sync, so a re-read or deleted session's file touches
// are found by key, not by a scan of every touch.
func TestSyncAddsMissingIndexes(t *testing.T) {
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "i.db"))
	raw := rawIndex(t, e)
	plan := func() string {
		t.Helper()
		var id, parent, notused int
		var detail string
		// EXPLAIN alone does not notice another connection's schema change.
		if err := raw.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if err := raw.QueryRow(`EXPLAIN QUERY PLAN DELETE FROM file_touches WHERE session_id = 'x'`).Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		return detail
	}
	if p := plan(); !strings.Contains(p, "file_touches_session") {
		t.Fatalf("a new index deletes a session's touches by %q", p)
	}
	if _, err := raw.Exec(`DROP INDEX file_touches_session`); err != nil {
		t.Fatal(err)
	}
	if p := plan(); !strings.HasPrefix(p, "SCAN") {
		t.Fatalf("without the index the plan is %q; the test proves nothing", p)
	}
	renameAndSync(t, e, db)
	if p := plan(); !strings.Contains(p, "file_touches_session") {
		t.Errorf("after a sync the plan is still %q", p)
	}
}

// A sync that writes most of the index ends with its full-text index in
// one segment (a bulk load leaves several, which every match walks); a
// sync after a write does not merge.
func TestSyncThatWritesMostOfTheIndexMergesIt(t *testing.T) {
	defer func(n int) { commitEvery = n }(commitEvery)
	commitEvery = 2 // a transaction, and so a segment, every session or so
	db := fixture(t, "v1")
	var logged bytes.Buffer
	e := openSynced(t, Options{DBPath: db, IndexPath: filepath.Join(t.TempDir(), "i.db"), Getenv: noEnv,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	raw := rawIndex(t, e)
	segments := func() int { return ftsSegments(t, raw) }
	// Without the merge, this cold sync and the forced re-read below each
	// leave ten segments (a transaction every session or so).
	merges := func() int { return strings.Count(logged.String(), "merged the full-text index") }
	if n := merges(); n != 1 {
		t.Errorf("a cold sync logged %d merges; want 1", n)
	}
	if n := segments(); n != 1 {
		t.Errorf("after a cold sync the full-text index has %d segments; want 1", n)
	}
	renameAndSync(t, e, db)
	if n := segments(); n != 2 || merges() != 1 {
		t.Errorf("after a rename the full-text index has %d segments and %d merges were logged; want the merged one and the rename's, and no merge", n, merges())
	}
	if _, err := e.Sync(context.Background(), SyncOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != 1 {
		t.Errorf("after a forced re-read the full-text index has %d segments; want 1", n)
	}
}

// renameAndSync renames one session of the history at db the way OpenCode
// would (a writable handle on the copy; the engine never writes it) and
// syncs e, which must re-read that session alone.
func renameAndSync(t *testing.T, e *Engine, db string) {
	t.Helper()
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var sid string
	if err := w.QueryRow(`SELECT id FROM session ORDER BY id LIMIT 1`).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, w, sid, "session.updated.1", `UPDATE session SET title = title || ' (renamed)' WHERE id = ?`, sid)
	if r, err := e.Sync(context.Background(), SyncOptions{}); err != nil || r.Updated != 1 {
		t.Fatalf("sync after a rename: %+v %v", r, err)
	}
}

// invoiceTextPart opens the history at db for writing (the engine never
// writes it; the test writes as OpenCode would) and finds the invoice
// session of the v1 fixture and its first text part.
func invoiceTextPart(t *testing.T, db string) (w *sql.DB, sid, partID string) {
	t.Helper()
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	w.QueryRow(`SELECT id FROM session WHERE title LIKE 'Fix invoice%'`).Scan(&sid)
	w.QueryRow(`SELECT id FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'text' ORDER BY id LIMIT 1`, sid).Scan(&partID)
	if sid == "" || partID == "" {
		t.Fatal("fixture session not found")
	}
	return w, sid, partID
}

// A merge cut short (its pending mark left in the meta, the segments
// unmerged) is run again by the next sync that writes anything, and its
// mark is cleared; without the mark that sync merges nothing.
func TestMergeCutShortRunsAtTheNextSync(t *testing.T) {
	defer func(n int) { commitEvery = n }(commitEvery)
	commitEvery = 2
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "i.db"))
	raw := rawIndex(t, e)
	segments := func() int { return ftsSegments(t, raw) }
	renameAndSync(t, e, db)
	renameAndSync(t, e, db)
	unmerged := segments()
	if unmerged < 2 {
		t.Fatalf("two syncs after writes left %d segments; the test needs several", unmerged)
	}
	if _, err := raw.Exec(`INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')`, mergePendingKey); err != nil {
		t.Fatal(err)
	}
	// doc_lens is packed with the merge: written again, as a new table.
	lensRoot := func() (root int) {
		if err := raw.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'doc_lens'`).Scan(&root); err != nil {
			t.Fatal(err)
		}
		return root
	}
	root := lensRoot()
	renameAndSync(t, e, db)
	if n := segments(); n != 1 {
		t.Errorf("the sync after a merge cut short left %d segments (%d before it); want 1", n, unmerged)
	}
	if lensRoot() == root {
		t.Error("the merge after a bulk load did not pack doc_lens")
	}
	root = lensRoot()
	var pending string
	raw.QueryRow(`SELECT value FROM meta WHERE key = ?`, mergePendingKey).Scan(&pending)
	if pending != "" {
		t.Errorf("the merge's pending mark is still %q after it ran", pending)
	}
	renameAndSync(t, e, db)
	if n := segments(); n != 2 {
		t.Errorf("a sync after a write with no merge pending left %d segments; want the merged one and its own", n)
	}
	if lensRoot() != root {
		t.Error("a sync after a write with no merge pending packed doc_lens")
	}
}

// ftsSegments is how many segments the full-text index of raw has.
func ftsSegments(t *testing.T, raw *sql.DB) int {
	t.Helper()
	var n int
	if err := raw.QueryRow(`SELECT count(DISTINCT segid) FROM docs_fts_idx`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// isStamp compares a stored stamp with a source stamp and the config
// suffix without building their concatenation.
func TestIsStamp(t *testing.T) {
	for _, c := range []struct {
		stored, st, cfg string
		want            bool
	}{
		{"12/3/x|config:ab|src:1", "12/3/x", "|config:ab|src:1", true},
		{"12/3/x|config:ab|src:1", "12/3/y", "|config:ab|src:1", false},
		{"12/3/x|config:ab|src:1", "12/3/x", "|config:ac|src:1", false},
		{"12/3/x|config:ab|src:1", "12/3/", "x|config:ab|src:1", true},
		{"12/3/x|config:ab|src:1x", "12/3/x", "|config:ab|src:1", false},
		{"", "", "", true},
		{"12/3/x", "12/3/x", "|config:ab", false},
	} {
		if got := isStamp(c.stored, c.st, c.cfg); got != c.want {
			t.Errorf("isStamp(%q, %q, %q) = %v, want %v", c.stored, c.st, c.cfg, got, c.want)
		}
	}
}

// The first thing a user upgrading from schema 7 does: open the engine on
// the index the release before built, with no options, and search. The
// index is kept (not rebuilt), answers as before, and the next sync that
// writes builds its document lengths.
func TestUpgradeFromSchema7(t *testing.T) {
	db := fixture(t, "v1")
	path := filepath.Join(t.TempDir(), "index.db")
	e := openAt(t, db, path)
	before := search(t, e, "ERR_QUOTA_7731")
	raw := rawIndex(t, e)
	var docs int
	raw.QueryRow(`SELECT count(*) FROM docs`).Scan(&docs)
	e.Close()
	for _, q := range []string{`DROP TRIGGER docs_drop_lens`, `DROP TABLE doc_lens`, `UPDATE meta SET value = '7' WHERE key = 'schema_version'`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}

	e = openAt(t, db, path)
	after := search(t, e, "ERR_QUOTA_7731")
	if len(before.Hits) == 0 || !reflect.DeepEqual(hitRefs(after), hitRefs(before)) {
		t.Errorf("after the upgrade the hits are %v, before %v", hitRefs(after), hitRefs(before))
	}
	var kept, chunks int
	raw.QueryRow(`SELECT count(*) FROM docs`).Scan(&kept)
	if err := raw.QueryRow(`SELECT count(*) FROM doc_lens`).Scan(&chunks); err != nil || kept != docs || chunks != 0 {
		t.Fatalf("upgraded: %d docs (had %d), %d chunks (%v); want the docs kept and no chunks before a write", kept, docs, chunks, err)
	}
	multiplyHistory(t, db, 1)
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`SELECT count(*) FROM doc_lens WHERE lens <> x''`).Scan(&chunks); err != nil || chunks == 0 {
		t.Errorf("the sync after the upgrade built %d chunks (%v)", chunks, err)
	}
}

// hitRefs is each hit's session and part, in order.
func hitRefs(r SearchResult) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.SessionID+"/"+h.PartID)
	}
	return out
}

// A bulk load stops FTS5's merging as it flushes (and lets each level hold
// 64 segments before a crisis merge), and marks the merge pending in its
// first transaction: a load cut short leaves all three, and the next sync
// that writes merges everything and sets merging back.
func TestBulkLoadDefersMerges(t *testing.T) {
	defer func(n int) { commitEvery = n }(commitEvery)
	commitEvery = 2
	_, heal := failWriteStart(t, 3)
	var bulks []bool // each write transaction's start: a bulk load's?
	record := func() {
		inner := beginWrite
		beginWrite = func(ctx context.Context, ix *index.Index, bulk bool) (*index.Writer, error) {
			bulks = append(bulks, bulk)
			return inner(ctx, ix, bulk)
		}
	}
	record()
	db := fixture(t, "v1")
	e, err := Open(context.Background(), Options{DBPath: db, IndexPath: filepath.Join(t.TempDir(), "index.db"), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Sync(context.Background(), SyncOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a load cut short: %v, want context.Canceled", err)
	}
	if len(bulks) != 3 || !bulks[0] || !bulks[1] || !bulks[2] {
		t.Errorf("the cold load's write transactions started as bulk: %v; want 3, all bulk", bulks)
	}
	raw := rawIndex(t, e)
	state := func() (automerge, crisis, pending string) {
		raw.QueryRow(`SELECT v FROM docs_fts_config WHERE k = 'automerge'`).Scan(&automerge)
		raw.QueryRow(`SELECT v FROM docs_fts_config WHERE k = 'crisismerge'`).Scan(&crisis)
		raw.QueryRow(`SELECT value FROM meta WHERE key = ?`, mergePendingKey).Scan(&pending)
		return
	}
	if am, cm, pending := state(); am != "0" || cm != "64" || pending != "1" {
		t.Fatalf("after a bulk load cut short: automerge %q, crisismerge %q, merge pending %q; want 0, 64 and 1", am, cm, pending)
	}
	heal()
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if am, cm, pending := state(); am != "4" || cm != "16" || pending != "" {
		t.Errorf("after the next sync: automerge %q, crisismerge %q, merge pending %q; want 4, 16 and none", am, cm, pending)
	}
	if n := ftsSegments(t, raw); n != 1 {
		t.Errorf("the next sync left %d segments; want 1", n)
	}
	bulks = nil
	record()
	renameAndSync(t, e, db)
	if len(bulks) == 0 || slices.Contains(bulks, true) {
		t.Errorf("a sync after a write started its write transactions as bulk: %v; want none bulk", bulks)
	}
}

// A bulk load into an empty index makes the secondary indexes of its
// large tables once it is written (index.Writer.DeferIndexes): a load cut
// short leaves them missing, and the next sync makes them before it
// writes, so the index ends with its whole schema.
func TestBulkLoadDefersIndexes(t *testing.T) {
	defer func(n int) { commitEvery = n }(commitEvery)
	commitEvery = 2
	calls, heal := failWriteStart(t, 3)
	db := fixture(t, "v1")
	e, err := Open(context.Background(), Options{DBPath: db, IndexPath: filepath.Join(t.TempDir(), "index.db"), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	raw := rawIndex(t, e)
	indexes := func() []string { return indexNames(t, raw) }
	schema := indexes()
	for _, n := range deferred {
		if !slices.Contains(schema, n) {
			t.Fatalf("a new index lacks %s: %v", n, schema)
		}
	}
	if _, err := e.Sync(context.Background(), SyncOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a load cut short: %v, want context.Canceled", err)
	}
	want := withoutDeferred(schema)
	if got := indexes(); !slices.Equal(got, want) {
		t.Errorf("indexes after a bulk load cut short: %v; want %v (the deferred ones missing)", got, want)
	}
	// Meanwhile the half-loaded index answers: slower, not wrong.
	ctx := context.Background()
	ss, err := e.Sessions(ctx, SessionsParams{Limit: 5})
	if err != nil || len(ss.Sessions) == 0 {
		t.Fatalf("sessions of a half-loaded index: %v, %v", ss.Sessions, err)
	}
	r, err := e.Read(ctx, ReadParams{Cursor: ss.Sessions[0].ID, Mode: "full", Format: render.FormatJSON})
	if err != nil || len(r.Messages) != ss.Sessions[0].Messages {
		t.Fatalf("read of %s in a half-loaded index: %d messages of %d, %v", ss.Sessions[0].ID, len(r.Messages), ss.Sessions[0].Messages, err)
	}
	// A resumed load is fresh too: it writes without them and does not
	// make them first only to drop them again (each CREATE or DROP INDEX
	// moves the schema cookie).
	cookie := func() (v int) {
		t.Helper()
		if err := raw.QueryRow(`PRAGMA schema_version`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := cookie()
	*calls = 0
	if _, err := e.Sync(context.Background(), SyncOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a resumed load cut short: %v, want context.Canceled", err)
	}
	if got := indexes(); !slices.Equal(got, want) {
		t.Errorf("indexes after a resumed load cut short: %v; want %v", got, want)
	}
	if after := cookie(); after != before {
		t.Errorf("a resumed load changed the schema %d times before it was cut short (made the deferred indexes and dropped them?)", after-before)
	}
	heal()
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := indexes(); !slices.Equal(got, schema) {
		t.Errorf("indexes after the next sync: %v; want the schema's %v", got, schema)
	}
	var ok string
	if err := raw.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %q %v", ok, err)
	}
}

// deferred are the indexes a load into an empty index makes at its end
// (index.deferredIndexes, spelled out here).
var deferred = []string{"docs_session", "docs_time", "messages_id", "parts_id", "parts_window", "vocab_words"}

// withoutDeferred is schema without the deferred indexes.
func withoutDeferred(schema []string) []string {
	return slices.DeleteFunc(slices.Clone(schema), func(name string) bool { return slices.Contains(deferred, name) })
}

// indexNames lists the index's own indexes (not SQLite's automatic ones).
func indexNames(t *testing.T, raw *sql.DB) []string {
	t.Helper()
	rows, err := raw.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// A load cut short near its end leaves the rest to a sync that is no bulk
// load: it writes through the indexes, so it makes them first (and a
// load's end is not there to make them after).
func TestSyncAfterLoadCutShortMakesIndexes(t *testing.T) {
	defer func(n int) { commitEvery = n }(commitEvery)
	commitEvery = 2
	db := fixture(t, "v1")
	open := func() *Engine {
		t.Helper()
		e, err := Open(context.Background(), Options{DBPath: db, IndexPath: filepath.Join(t.TempDir(), "index.db"), Getenv: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	// How many transactions a whole load begins.
	whole, heal := failWriteStart(t, -1)
	if _, err := open().Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	heal()
	// The latest cut that leaves a session unwritten (the load's last
	// transactions may write none).
	for n := *whole; n > 1; n-- {
		e := open()
		raw := rawIndex(t, e)
		schema := indexNames(t, raw)
		_, heal := failWriteStart(t, n)
		if _, err := e.Sync(context.Background(), SyncOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("a load cut short at transaction %d of %d: %v, want context.Canceled", n, *whole, err)
		}
		heal()
		if got, want := indexNames(t, raw), withoutDeferred(schema); !slices.Equal(got, want) {
			t.Fatalf("indexes after a load cut short: %v; want %v", got, want)
		}
		r, err := e.Sync(context.Background(), SyncOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Added == 0 {
			continue
		}
		if st, err := e.Status(context.Background()); err != nil || r.Added*2 >= st.Sessions {
			t.Fatalf("the sync after the cut added %d of %d sessions (%v): not the small remainder this test is about", r.Added, st.Sessions, err)
		}
		if got := indexNames(t, raw); !slices.Equal(got, schema) {
			t.Errorf("indexes after the sync that finished the load: %v; want the schema's %v", got, schema)
		}
		return
	}
	t.Fatal("no cut of the load left a session for the next sync")
}

// Only a load that adds and nothing else drops the indexes: a sync that
// re-reads a session the index holds deletes its rows through them.
func TestFreshLoad(t *testing.T) {
	todo := packTodo([]*model.Session{{ID: "a"}, {ID: "b"}}, func(s *model.Session) string { return s.ID }, nil)
	for _, c := range []struct {
		name string
		plan syncPlan
		want bool
	}{
		{"cold", syncPlan{todo: todo, indexed: map[string]string{}}, true},
		{"resumed", syncPlan{todo: todo, indexed: map[string]string{"c": "x"}}, true},
		{"re-reads one", syncPlan{todo: todo, indexed: map[string]string{"b": "x"}}, false},
		{"emptied first", syncPlan{todo: todo, indexed: map[string]string{"b": "x"}, clearAll: true}, true},
	} {
		if got := c.plan.fresh(); got != c.want {
			t.Errorf("%s: fresh %v, want %v", c.name, got, c.want)
		}
	}
}

// A sync after OpenCode's writes reads only the sessions written to (no
// listing of every session, no reading of every stored stamp), new
// sessions included; what only a listing finds (a deletion, a writer
// without events) is found by the next sync that lists, and the index
// kept this way equals a fresh rebuild.
func TestSyncAfterAWriteReadsOnlyWhatChanged(t *testing.T) {
	db := fixture(t, "v1")
	var logged bytes.Buffer
	e := openSynced(t, Options{DBPath: db, IndexPath: filepath.Join(t.TempDir(), "kept.db"), Getenv: noEnv,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	ctx := context.Background()
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var edited, renamed, victim, sub, parent string
	w.QueryRow(`SELECT id FROM session WHERE title = 'Fix invoice total rounding drift'`).Scan(&edited)
	w.QueryRow(`SELECT id FROM session WHERE title LIKE 'List runtime%'`).Scan(&renamed)
	w.QueryRow(`SELECT id FROM session WHERE title LIKE 'Verbose build%'`).Scan(&victim)
	w.QueryRow(`SELECT id, parent_id FROM session WHERE parent_id IS NOT NULL`).Scan(&sub, &parent)
	if edited == "" || renamed == "" || victim == "" || sub == "" {
		t.Fatal("fixture sessions not found")
	}
	// sync syncs and reports how it found the sessions to read: "changes"
	// (SessionsSince) or "listing" (every session listed).
	sync := func(step string) (SyncResult, string) {
		t.Helper()
		logged.Reset()
		r, err := e.Sync(ctx, SyncOptions{})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		changes, listing := strings.Contains(logged.String(), "msg=\"history changes\""), strings.Contains(logged.String(), "msg=\"history stamps\"")
		switch {
		case changes && !listing:
			return r, "changes"
		case listing && !changes:
			return r, "listing"
		}
		t.Fatalf("%s: the log says neither or both ways:\n%s", step, logged.String())
		return r, ""
	}

	// editPart edits a text part of sid as OpenCode does (its time is the
	// edit's, the session's newest).
	editPart := func(sid, text string) {
		mustWrite(t, w, sid, "message.part.updated.1", `UPDATE part SET data = json_set(data, '$.text', ? || ' ' || json_extract(data, '$.text')),
			time_updated = ? WHERE id = (SELECT id FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'text' LIMIT 1)`,
			text, time.Now().UnixMilli(), sid)
	}
	editPart(edited, "PLUMCOT_EDITED")
	if r, how := sync("a part edited"); how != "changes" || r.Updated != 1 || r.Added != 0 {
		t.Errorf("a part edited: %s, %+v; want the changes, 1 updated", how, r)
	}
	if hits := search(t, e, "PLUMCOT_EDITED").Hits; len(hits) == 0 || hits[0].SessionID != edited {
		t.Errorf("edited text not found: %+v", hits)
	}

	// A session imported (no events) is new to the session table.
	newID := importCopy(t, w, edited)
	if r, how := sync("a session imported"); how != "changes" || r.Added != 1 || r.Updated != 0 {
		t.Errorf("a session imported: %s, %+v; want the changes, 1 added", how, r)
	}
	if hits := search(t, e, "QUINCEBERRY").Hits; len(hits) == 0 || hits[0].SessionID != newID {
		t.Errorf("new session not found: %+v", hits)
	}

	// A subagent's session: its family's root is the index's.
	editPart(sub, "GREENGAGE_EDITED")
	if r, how := sync("a subagent's part edited"); how != "changes" || r.Updated != 1 {
		t.Errorf("a subagent's part edited: %s, %+v; want the changes, 1 updated", how, r)
	}
	var root string
	rawIndex(t, e).QueryRow(`SELECT root_id FROM sessions WHERE id = ?`, sub).Scan(&root)
	if hits := search(t, e, "GREENGAGE_EDITED").Hits; len(hits) == 0 || hits[0].SessionID != sub || root != parent {
		t.Errorf("the subagent's edit: %+v, root %q; want session %s in family %s", hits, root, sub, parent)
	}

	// A rename by a writer without events is not among the changes; the
	// sync that lists (once the last listing is listEvery old) finds it.
	if _, err := w.Exec(`UPDATE session SET title = 'Renamed without an event' WHERE id = ?`, renamed); err != nil {
		t.Fatal(err)
	}
	if r, how := sync("a rename without an event"); how != "changes" || r.Updated != 0 {
		t.Errorf("a rename without an event: %s, %+v; want the changes, none updated", how, r)
	}
	ageListing(t, e)
	editPart(edited, "MIRABELLE_EDITED")
	if r, how := sync("the listing due"); how != "listing" || r.Updated != 2 {
		t.Errorf("the listing due: %s, %+v; want a listing, 2 updated (the rename and the edit)", how, r)
	}

	// A session deleted (with its rows and events, as OpenCode's cascade).
	for _, q := range []string{`DELETE FROM part WHERE session_id = ?`, `DELETE FROM message WHERE session_id = ?`,
		`DELETE FROM event WHERE aggregate_id = ?`, `DELETE FROM event_sequence WHERE aggregate_id = ?`, `DELETE FROM session WHERE id = ?`} {
		if _, err := w.Exec(q, victim); err != nil {
			t.Fatal(err)
		}
	}
	if r, how := sync("a session deleted"); how != "listing" || r.Deleted != 1 {
		t.Errorf("a session deleted: %s, %+v; want a listing, 1 deleted", how, r)
	}
	editPart(edited, "DAMSON_EDITED")
	if r, how := sync("an edit after the listing"); how != "changes" || r.Updated != 1 {
		t.Errorf("an edit after the listing: %s, %+v; want the changes, 1 updated", how, r)
	}
	fresh := openAt(t, db, filepath.Join(t.TempDir(), "fresh.db"))
	if kept, rebuilt := dumpIndex(t, e), dumpIndex(t, fresh); kept != rebuilt {
		t.Errorf("kept index differs from a rebuild:\n%s", firstDiff(kept, rebuilt))
	}

	// A forgotten family stays forgotten when its subagent is written to.
	if _, err := e.Forget(ctx, parent); err != nil {
		t.Fatal(err)
	}
	editPart(sub, "SLOE_EDITED")
	if r, how := sync("a forgotten family's subagent written to"); how != "changes" || r.Added+r.Updated != 0 {
		t.Errorf("a forgotten family's subagent written to: %s, %+v; want the changes, nothing written", how, r)
	}
	if hits := search(t, e, "SLOE_EDITED").Hits; len(hits) != 0 {
		t.Errorf("a forgotten session came back: %+v", hits[0])
	}
}

// A session in an excluded directory stays out when it is written to.
func TestSyncOfChangesKeepsExcludedDirectoriesOut(t *testing.T) {
	db := fixture(t, "v1")
	cfg := &config.Config{ExcludeDirectories: []string{"/tmp/ocgen/recall-v1/projects/webapp"}}
	var logged bytes.Buffer
	e := openSynced(t, Options{DBPath: db, IndexPath: filepath.Join(t.TempDir(), "i.db"), Getenv: noEnv, Config: cfg,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var sid string
	w.QueryRow(`SELECT id FROM session WHERE directory = ? LIMIT 1`, cfg.ExcludeDirectories[0]).Scan(&sid)
	mustWrite(t, w, sid, "message.part.updated.1", `UPDATE part SET data = json_set(data, '$.text', 'DAMSON_EXCLUDED'), time_updated = ?
		WHERE id = (SELECT id FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'text' LIMIT 1)`, time.Now().UnixMilli(), sid)
	logged.Reset()
	r, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil || r.Added+r.Updated != 0 || !strings.Contains(logged.String(), "history changes") {
		t.Errorf("an excluded session written to: %+v %v; want the changes read, nothing written\n%s", r, err, logged.String())
	}
	if hits := search(t, e, "DAMSON_EXCLUDED").Hits; len(hits) != 0 {
		t.Errorf("an excluded session was indexed: %+v", hits[0])
	}

	// A subagent's parent moved into the excluded directory leaves the
	// index (a listing drops it); then, with the parent and the subagent
	// both written to, the subagent is its own family's root, as a
	// listing finds it (the sync lists again).
	var sub, parent string
	w.QueryRow(`SELECT id, parent_id FROM session WHERE parent_id IS NOT NULL`).Scan(&sub, &parent)
	syncs := func(step string, deleted, updated int) {
		t.Helper()
		logged.Reset()
		r, err := e.Sync(context.Background(), SyncOptions{})
		if err != nil || r.Deleted != deleted || r.Updated != updated || !strings.Contains(logged.String(), "history stamps") {
			t.Errorf("%s: %+v %v; want a listing, %d deleted, %d updated\n%s", step, r, err, deleted, updated, logged.String())
		}
	}
	mustWrite(t, w, parent, "session.updated.1", `UPDATE session SET directory = ?, time_updated = time_updated + 1 WHERE id = ?`, cfg.ExcludeDirectories[0], parent)
	syncs("a parent moved into an excluded directory", 1, 0)
	mustWrite(t, w, parent, "session.updated.1", `UPDATE session SET time_updated = time_updated + 1 WHERE id = ?`, parent)
	mustWrite(t, w, sub, "message.part.updated.1", `UPDATE part SET time_updated = ? WHERE id = (SELECT id FROM part WHERE session_id = ? LIMIT 1)`, time.Now().UnixMilli(), sub)
	syncs("the excluded parent and its subagent written to", 0, 1)
	fresh := openSynced(t, Options{DBPath: db, IndexPath: filepath.Join(t.TempDir(), "fresh.db"), Getenv: noEnv, Config: cfg})
	if kept, rebuilt := dumpIndex(t, e), dumpIndex(t, fresh); kept != rebuilt {
		t.Errorf("kept index differs from a rebuild:\n%s", firstDiff(kept, rebuilt))
	}
}

// ageListing makes the index's change mark say its last listing of every
// session was made an hour ago, so the next sync lists them (the mark is
// the source's; this reaches into its "listed" field). It writes through
// the engine's own handle on the index. A mark without one (none, or an
// older format's) makes the next sync list anyway.
func ageListing(t testing.TB, e *Engine) {
	t.Helper()
	ctx := context.Background()
	ix := e.shards[0].ix
	mark, err := ix.Meta(ctx, changeMarkKey)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if json.Unmarshal([]byte(mark), &m) != nil {
		return
	}
	listed, ok := m["listed"].(float64)
	if !ok {
		return
	}
	m["listed"] = listed - float64(time.Hour.Milliseconds())
	b, _ := json.Marshal(m)
	if err := ix.SetMeta(ctx, changeMarkKey, string(b)); err != nil {
		t.Fatal(err)
	}
}
