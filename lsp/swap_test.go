package lsp

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recallhq/recall/internal/historytest"
)

// v2FixtureDB is the other real history: no session in common with v1.
var v2FixtureDB = filepath.Join("..", "testdata", "opencode", "v2", "opencode.db")

// renameOver puts a copy of the v2 history at db with one rename, as a
// restore or a reinstall replaces opencode.db under a running server.
func renameOver(t *testing.T, db string) {
	t.Helper()
	b, err := os.ReadFile(v2FixtureDB)
	if err != nil {
		t.Fatal(err)
	}
	incoming := filepath.Join(filepath.Dir(db), "incoming.db")
	if err := os.WriteFile(incoming, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(incoming, db); err != nil {
		t.Fatal(err)
	}
}

func (s *session) hitCount(query string) int {
	s.t.Helper()
	raw, err := s.call("recall/search", map[string]any{"query": query, "limit": 5})
	if err != nil {
		s.t.Fatalf("search %q: %v", query, err)
	}
	var res struct{ Hits []json.RawMessage }
	if err := json.Unmarshal(raw, &res); err != nil {
		s.t.Fatal(err)
	}
	return len(res.Hits)
}

// The watcher of a running server notices opencode.db renamed over and
// serves the new file's sessions, not the deleted file it had open.
func TestWatcherSeesRenamedHistory(t *testing.T) {
	db := copyFixture(t)
	s := startSession(t, sessionOptions{db: db})
	if s.hitCount("ERR_QUOTA_7731") == 0 {
		t.Fatal("v1 fact not served before the swap")
	}
	renameOver(t, db)
	deadline := time.Now().Add(10 * time.Second)
	for s.hitCount("ERR_EVICT_4410") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("10 s after the rename the server still serves the old file only")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := s.hitCount("ERR_QUOTA_7731"); n != 0 {
		t.Errorf("%d hits from a session only the replaced file had", n)
	}
}

// recall/reindex after a rename reads the new file (before, a forced sync
// re-read the old, deleted file through the open handle).
func TestReindexReadsRenamedHistory(t *testing.T) {
	db := copyFixture(t)
	s := startSession(t, sessionOptions{db: db, config: func(c *Config) { c.PollInterval = time.Hour }})
	renameOver(t, db)
	raw, err := s.call("recall/reindex", nil)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Added, Deleted int }
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res.Added != 4 || res.Deleted != 10 {
		t.Errorf("reindex after the rename: %s; want the 4 v2 sessions added and the 10 v1 ones deleted", raw)
	}
	if s.hitCount("ERR_EVICT_4410") == 0 || s.hitCount("ERR_QUOTA_7731") != 0 {
		t.Error("search after reindex does not answer from the new file")
	}
}

// A change the watcher finds while a writer holds the history locked is
// read once the lock goes, with no further change to trigger it, and the
// client hears of the lock once, not at every retry.
func TestWatcherRetriesLockedHistory(t *testing.T) {
	db := copyFixture(t)
	s := startSession(t, sessionOptions{db: db})
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	conn, err := w.Conn(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(s.ctx, `UPDATE session SET title = 'Renamed before the lock', time_updated = time_updated + 1 WHERE id = 'ses_dd7571907ffe5vPpW7vxTE77tW'`); err != nil {
		t.Fatal(err)
	}
	if err := historytest.AppendEvent(s.ctx, conn, "ses_dd7571907ffe5vPpW7vxTE77tW", "session.updated.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(s.ctx, `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	// Longer than the 5 s busy wait of old, after which the sync failed and
	// nothing tried again; several polls and retries now.
	time.Sleep(6 * time.Second)
	if _, err := conn.ExecContext(s.ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		raw, err := s.call("workspace/symbol", map[string]any{"query": "Renamed before the lock"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "Renamed before the lock") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the change seen while the history was locked was never indexed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.client.mu.Lock()
	defer s.client.mu.Unlock()
	said := 0
	for _, l := range s.client.logs {
		if strings.Contains(l, "the history is locked by another process") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the lock was announced %d times, want once: %q", said, s.client.logs)
	}
}
