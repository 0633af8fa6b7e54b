package commands

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/internal/historytest"
)

func decodeJSON(t *testing.T, r run, v any) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
}

// What sync and status tell a script: how long a sync took, and whether the
// index is fresh (right after a sync) or stale (after the history changed).
func TestSyncReportsTimeAndFreshness(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	var res struct {
		Idle   bool
		Added  int
		TookMS int64 `json:"tookMs"`
	}
	decodeJSON(t, cli(t, "sync", "--db", db, "--index", ix, "--json"), &res)
	if res.Idle || res.Added == 0 || res.TookMS <= 0 {
		t.Errorf("cold sync reported %+v; want sessions added and the time it took", res)
	}
	var st struct {
		Freshness struct{ Stale bool }
	}
	decodeJSON(t, cli(t, "status", "--db", db, "--index", ix, "--json", "--no-sync"), &st)
	if st.Freshness.Stale {
		t.Error("status says stale right after a sync")
	}
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`UPDATE session SET title = title || ' (edited)' WHERE rowid = 1`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	decodeJSON(t, cli(t, "status", "--db", db, "--index", ix, "--json", "--no-sync"), &st)
	if !st.Freshness.Stale {
		t.Error("status says fresh after the history changed")
	}
}

// While another process holds the writer lock (a long sync, a server),
// a command waits a bounded time, then answers from the index as it is and
// says so; it neither hangs nor fails.
func TestBusyWriterAnswersFromIndex(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	if r := cli(t, "sync", "--db", db, "--index", ix); r.code != 0 {
		t.Fatalf("sync: %s", r.stderr)
	}
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	// As OpenCode does it: an updated part gets a new time_updated, and
	// its session an event in the same transaction.
	for _, q := range []string{
		`UPDATE part SET data = json_set(data, '$.text', 'BUSYLOCK_NEWTEXT'), time_updated = (SELECT max(time_updated) + 1000 FROM part)
		WHERE id = (SELECT id FROM part WHERE json_extract(data, '$.type') = 'text' LIMIT 1)`,
		`UPDATE event_sequence SET seq = seq + 1 WHERE aggregate_id = (SELECT session_id FROM part WHERE data LIKE '%BUSYLOCK_NEWTEXT%')`,
		`INSERT INTO event(id, aggregate_id, seq, type, data) SELECT 'evt_busylock', aggregate_id, seq, 'message.part.updated.1', '{}'
		FROM event_sequence WHERE aggregate_id = (SELECT session_id FROM part WHERE data LIKE '%BUSYLOCK_NEWTEXT%')`,
	} {
		if res, err := w.Exec(q); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s: %d rows, want 1", q, n)
		}
	}
	w.Close()
	lock, err := index.LockWriter(context.Background(), ix)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := cli(t, "search", "--db", db, "--index", ix, "--json", "--", "ERR_QUOTA_7731")
	took := time.Since(start)
	lock.Unlock()
	var res struct{ Hits []struct{ SessionID string } }
	decodeJSON(t, r, &res)
	if len(res.Hits) == 0 {
		t.Error("no hits from the existing index while the writer was busy")
	}
	if !strings.Contains(r.stderr, "another recall process") {
		t.Errorf("no notice that the index may lag: %q", r.stderr)
	}
	if took > 15*time.Second {
		t.Errorf("waited %s for the writer lock", took)
	}
	r = cli(t, "search", "--db", db, "--index", ix, "--json", "--", "BUSYLOCK_NEWTEXT")
	decodeJSON(t, r, &res)
	if len(res.Hits) == 0 || strings.Contains(r.stderr, "another recall process") {
		t.Errorf("after the lock was released the change was not indexed: %d hits, %q", len(res.Hits), r.stderr)
	}
}

// A command that finds another process building a new index waits for it
// instead of answering from the empty index (as it would after the normal
// 3 s wait on an index that has content).
func TestWaitForFirstSyncOfNewIndex(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	if r := cli(t, "status", "--no-sync", "--db", db, "--index", ix); r.code != 0 {
		t.Fatal(r.stderr) // creates the (empty) index
	}
	lock, err := index.LockWriter(context.Background(), ix)
	if err != nil {
		t.Fatal(err)
	}
	release := time.AfterFunc(4*time.Second, lock.Unlock)
	defer release.Stop()
	start := time.Now()
	r := cli(t, "search", "--json", "--db", db, "--index", ix, "ERR_QUOTA_7731")
	if r.code != 0 || !strings.Contains(r.stdout, "Investigate nightly worker failure") {
		t.Fatalf("answered from the empty index: exit %d, stdout %.200q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(start); d < 3*time.Second {
		t.Errorf("did not wait for the lock (%s)", d)
	}
}

// lockHistory holds db locked the way a writer in rollback-journal mode
// does mid-commit (BEGIN EXCLUSIVE on its own connection); the returned
// func releases it.
func lockHistory(t *testing.T, db string) func() {
	t.Helper()
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	conn, err := w.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if released {
			return
		}
		released = true
		conn.ExecContext(context.Background(), `ROLLBACK`)
		conn.Close()
		w.Close()
	}
	t.Cleanup(release)
	return release
}

// A history locked by a writer: a command waits a moment, then answers
// from the index with a notice saying so and as of when, exit 0; with
// nothing indexed yet there is nothing to answer from, and it fails with
// the clear message. Before, both waited 5 s and failed.
func TestLockedHistoryAnswersFromIndex(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	release := lockHistory(t, db)
	start := time.Now()
	r := cli(t, "search", "--db", db, "--index", ix, "--json", "--", "ERR_QUOTA_7731")
	if r.code != 1 || !strings.Contains(r.stderr, "locked by another process") || !strings.Contains(r.stderr, db) || !strings.Contains(r.stderr, "retry") {
		t.Errorf("never-synced index over a locked history: exit %d, stderr %q; want exit 1 naming the file, the lock and what to do", r.code, r.stderr)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("failed only after %s", d)
	}
	release()

	if r := cli(t, "sync", "--db", db, "--index", ix); r.code != 0 {
		t.Fatalf("sync: %s", r.stderr)
	}
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	var sid string
	if err := w.QueryRow(`SELECT id FROM session WHERE rowid = 1`).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	if err := historytest.Rename(w, sid, "LOCKED_RENAME_TITLE"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	release = lockHistory(t, db)
	start = time.Now()
	r = cli(t, "search", "--db", db, "--index", ix, "--json", "--", "ERR_QUOTA_7731")
	took := time.Since(start)
	var res struct{ Hits []struct{ SessionID string } }
	decodeJSON(t, r, &res)
	if len(res.Hits) == 0 {
		t.Error("no hits from the index while the history was locked")
	}
	if !strings.Contains(r.stderr, "the history is locked by another process (OpenCode writing?); answered from the index as of ") {
		t.Errorf("no notice that the answer comes from the index: %q", r.stderr)
	}
	if took > 3*time.Second {
		t.Errorf("answered after %s", took)
	}
	release()
	r = cli(t, "sessions", "--db", db, "--index", ix, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, "LOCKED_RENAME_TITLE") || strings.Contains(r.stderr, "locked") {
		t.Errorf("after the lock was released the change was not indexed: exit %d, stderr %q", r.code, r.stderr)
	}
}
