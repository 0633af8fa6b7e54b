package commands

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine"
)

// The plugin's own session is the door's ExcludeSession: searches across
// history leave it out, but a search that names it (session: the live
// session) must search it, and see what OpenCode wrote a moment ago while
// it still holds the database open in WAL mode. Before, the door's
// exclusion applied to an explicit session too, and the search found
// nothing.
func TestOwnSessionSearchableWhileWritten(t *testing.T) {
	const l2 = "ses_dd7571907ffe5vPpW7vxTE77tW"
	db := fixtureDB(t)
	w, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		t.Fatal(err)
	}
	eng := openEngine(t, db, t.TempDir()+"/i.db")
	env := &Env{Engine: eng, ExcludeSession: l2}
	hits := func(p *SearchParams) []engine.Hit {
		t.Helper()
		res, err := Search.Call(t.Context(), env, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	if h := hits(&SearchParams{Query: "ERR_QUOTA_7731"}); len(h) != 0 {
		t.Errorf("a search across history returned the door's own session: %+v", h)
	}
	if h := hits(&SearchParams{Query: "ERR_QUOTA_7731", Session: l2}); len(h) == 0 || h[0].SessionID != l2 {
		t.Fatalf("session: the live session found nothing: %+v", h)
	}

	// OpenCode writes one more part (a copy of the bash output, new id
	// and text) and keeps the database open.
	if _, err := w.Exec(`INSERT INTO part(id, message_id, session_id, time_created, time_updated, data)
		SELECT 'prt_ffffffffffff01LiveWrittenPart', message_id, session_id, time_created + 1, time_updated + 1,
			json_set(data, '$.state.output', 'deploy failed: PLOVERWING_LIVE_42 after the retry')
		FROM part WHERE id = 'prt_228a8e7b0001BLQKWPafRsg3bJ'`); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"", "literal"} {
		h := hits(&SearchParams{Query: "PLOVERWING_LIVE_42", Session: l2, Match: m})
		if len(h) != 1 || h[0].PartID != "prt_ffffffffffff01LiveWrittenPart" {
			t.Errorf("match %q: the part written a moment ago: %+v", m, h)
		}
	}
	r, err := Read.Call(t.Context(), env, &ReadParams{Cursor: l2, Mode: "full"})
	if err != nil || !strings.Contains(r.Text, "PLOVERWING_LIVE_42") {
		t.Errorf("read of the live session misses the new part: %v", err)
	}
	g, err := Get.Call(t.Context(), env, &GetParams{ID: "prt_ffffffffffff01LiveWrittenPart"})
	if err != nil || !strings.Contains(g.Text, "PLOVERWING_LIVE_42") {
		t.Errorf("get of the new part: %+v %v", g, err)
	}
}
