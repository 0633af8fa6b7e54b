package index

import (
	"context"
	"testing"

	"github.com/recallhq/recall/engine/model"
)

// allKinds are the document kinds the tests count.
var allKinds = []model.Kind{model.KindText, model.KindReasoning, model.KindTitle, model.KindTool,
	model.KindOutput, model.KindPatch, model.KindSubtask, model.KindSummary, model.KindFile}

// checkKindDocs compares KindDocs, kind by kind and for all kinds at
// once, and Counts with counts of the tables.
func checkKindDocs(t *testing.T, ix *Index, label string) {
	t.Helper()
	ctx := context.Background()
	want := map[model.Kind]int{}
	rows, err := ix.db.QueryContext(ctx, `SELECT kind, count(*) FROM docs WHERE synthetic = 0 GROUP BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		want[model.Kind(k)] = n
	}
	rows.Close()
	sum := 0
	for _, k := range allKinds {
		got, err := ix.KindDocs(ctx, []model.Kind{k})
		if err != nil {
			t.Fatal(err)
		}
		if got != want[k] {
			t.Errorf("%s: KindDocs(%s) = %d, the docs table holds %d", label, k, got, want[k])
		}
		sum += want[k]
	}
	if got, err := ix.KindDocs(ctx, allKinds); err != nil || got != sum {
		t.Errorf("%s: KindDocs(all) = %d, %v; want %d", label, got, err, sum)
	}
	var c Counts
	if err := ix.db.QueryRow(`SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages),
		(SELECT count(*) FROM parts), (SELECT count(*) FROM docs)`).Scan(&c.Sessions, &c.Messages, &c.Parts, &c.Documents); err != nil {
		t.Fatal(err)
	}
	if got, err := ix.Counts(ctx); err != nil || got != c {
		t.Errorf("%s: Counts() = %+v, %v; the tables hold %+v", label, got, err, c)
	}
}

func metaValue(t *testing.T, ix *Index, key string) (string, bool) {
	t.Helper()
	var v string
	err := ix.db.QueryRow(`SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	return v, err == nil
}

// writeSession writes session id, one message of parts, in a transaction
// of its own; reread writes it again as a sync does after a change.
func writeSession(t *testing.T, ix *Index, id string, reread bool, parts ...model.Part) {
	t.Helper()
	ctx := context.Background()
	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reread {
		if err := w.RereadSession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	s := model.Session{ID: id, Title: "kinds " + id, Directory: "/w", Created: 3000, Updated: 3000}
	m := model.Message{ID: "msg_" + id, SessionID: id, Role: "assistant", Created: 3000, Parts: parts}
	var c SessionCounts
	if err := w.PutMessage(ctx, &s, id, 0, &m, &c); err != nil {
		t.Fatal(err)
	}
	if err := w.PutSession(ctx, &s, SessionMeta{RootID: id, Stamp: "stamp", Now: 9}, c); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// The index keeps its rows' counts (sessions, messages, parts, documents
// by kind) through every kind of write (sessions added, written again
// with some parts gone, deleted, all cleared), and Counts and KindDocs
// read them instead of counting the tables.
func TestRowCountsKeptThroughWrites(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	if v, ok := metaValue(t, ix, countsKept); !ok || v != "1" {
		t.Fatalf("after the first write meta's %s = %q, %v; want the counts kept", countsKept, v, ok)
	}
	checkKindDocs(t, ix, "fixture")

	synthetic := textPart("prt_k2", "text", "inserted by opencode")
	synthetic.Synthetic = true
	writeSession(t, ix, "ses_kinds", false,
		textPart("prt_k1", "text", "typed by the user"), synthetic, textPart("prt_k3", "reasoning", "thinking it over"),
		model.Part{ID: "prt_k4", Type: "tool", Kind: model.KindTool, Tool: "bash", Status: "completed", Input: `{"command":"ls"}`, Output: "a b c"})
	checkKindDocs(t, ix, "a session added")

	writeSession(t, ix, "ses_kinds", true, textPart("prt_k1", "text", "typed by the user"), textPart("prt_k5", "text", "a new answer"))
	checkKindDocs(t, ix, "the session written again, parts gone and added")

	deleteLensSessions(t, ix, "ses_other")
	checkKindDocs(t, ix, "a session deleted")

	// Read from meta, not counted: a count set by hand is what it says.
	if _, err := ix.db.Exec(`UPDATE meta SET value = '1000' WHERE key = ?`, countKey+countDocsOf+string(model.KindReasoning)); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.KindDocs(ctx, []model.Kind{model.KindReasoning}); err != nil || n != 1000 {
		t.Fatalf("KindDocs(reasoning) = %d, %v after meta was set to 1000: it did not read the kept count", n, err)
	}
	if _, err := ix.db.Exec(`UPDATE meta SET value = '12345' WHERE key = ?`, countKey+countParts); err != nil {
		t.Fatal(err)
	}
	if c, err := ix.Counts(ctx); err != nil || c.Parts != 12345 {
		t.Fatalf("Counts().Parts = %d, %v after meta was set to 12345: it did not read the kept count", c.Parts, err)
	}

	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.ClearSessions(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	checkKindDocs(t, ix, "all cleared")
	writeSession(t, ix, "ses_after", false, textPart("prt_a1", "text", "after the clear"))
	checkKindDocs(t, ix, "written after the clear")
}

// An index written before the counts were kept is counted (the same
// answers), and its next write starts keeping them.
func TestRowCountsOfAnOlderIndex(t *testing.T) {
	ix := testIndex(t)
	if _, err := ix.db.Exec(`DELETE FROM meta WHERE key = ? OR key >= ? AND key < ?`, countsKept, countKey, countKeyEnd); err != nil {
		t.Fatal(err)
	}
	checkKindDocs(t, ix, "counts not kept")
	writeSession(t, ix, "ses_next", false, textPart("prt_n1", "text", "the next write"), textPart("prt_n2", "reasoning", "and its thought"))
	if _, ok := metaValue(t, ix, countsKept); !ok {
		t.Fatal("the write after did not start keeping the counts")
	}
	checkKindDocs(t, ix, "kept from the next write")
}
