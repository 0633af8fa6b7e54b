package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveWriterIndexMatchesRebuild is the last step of test/live-writer.sh:
// an index kept fresh by `recall lsp` while the real OpenCode wrote (new
// turns, edits, a rename, an archive, a deletion) must equal a fresh rebuild
// of the same history: no lost and no stale parts. It skips unless the
// script sets RECALL_LIVE_DB (OpenCode's live database) and
// RECALL_LIVE_INDEX (the kept index); RECALL_LIVE_MANIFEST (ocgen's
// manifest.json) adds checks on the deleted and renamed sessions.
func TestLiveWriterIndexMatchesRebuild(t *testing.T) {
	db, kept := os.Getenv("RECALL_LIVE_DB"), os.Getenv("RECALL_LIVE_INDEX")
	if db == "" || kept == "" {
		t.Skip("run by test/live-writer.sh (RECALL_LIVE_DB, RECALL_LIVE_INDEX)")
	}
	e := openNoSync(t, db, kept)
	fresh := openAt(t, db, filepath.Join(t.TempDir(), "fresh.db"))
	got, want := dumpIndex(t, e), dumpIndex(t, fresh)
	if got != want {
		t.Errorf("the index kept live differs from a rebuild:\n%s", firstDiff(got, want))
	}
	var n int
	rawIndex(t, fresh).QueryRow(`SELECT count(*) FROM sessions`).Scan(&n)
	t.Logf("%d sessions, %d bytes of dump compared", n, len(want))
	if n == 0 {
		t.Fatal("the live history has no sessions")
	}
	mpath := os.Getenv("RECALL_LIVE_MANIFEST")
	if mpath == "" {
		return
	}
	b, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Sessions []struct {
			Key, ID, Title string
			Deleted        bool
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	deleted, renamed := 0, 0
	raw := rawIndex(t, e)
	for _, s := range m.Sessions {
		var title string
		err := raw.QueryRow(`SELECT title FROM sessions WHERE id = ?`, s.ID).Scan(&title)
		switch {
		case s.Deleted:
			deleted++
			if err == nil {
				t.Errorf("deleted session %s (%s) is still indexed", s.Key, s.ID)
			}
		case err != nil:
			t.Errorf("session %s (%s) is not indexed: %v", s.Key, s.ID, err)
		case strings.Contains(title, "(renamed"):
			renamed++
		}
	}
	if deleted == 0 || renamed == 0 {
		t.Errorf("the scenario should delete and rename a session: %d deleted, %d renamed", deleted, renamed)
	}
}
