package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/model"
)

// lensWords are the words of lensSessions' texts, the rarer ones later.
var lensWords = []string{"harbor", "lantern", "quartz", "meadow", "copper", "signal", "tundra", "pelican"}

// lensExprs are the matches the doc_lens tests score, with their phrase
// counts.
var lensExprs = []struct {
	expr    string
	phrases int
}{{`"pelican"`, 1}, {`"harbor" OR "quartz"`, 2}, {`"lantern" OR "pelican" OR "tundra"`, 3}}

// writeLensSessions writes sessions named prefix0.. of parts parts each, in
// one transaction, with texts of 1 to 60 words (so lengths differ).
func writeLensSessions(t *testing.T, ix *Index, rng *rand.Rand, prefix string, sessions, parts int) {
	t.Helper()
	ctx := context.Background()
	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < sessions; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		s := model.Session{ID: id, Title: "session " + id, Directory: "/w", Created: 1000, Updated: 1000}
		m := model.Message{ID: "msg_" + id, SessionID: id, Role: "assistant", Created: 1000}
		for p := 0; p < parts; p++ {
			words := make([]string, 1+rng.IntN(60))
			for k := range words {
				words[k] = lensWords[min(rng.IntN(len(lensWords)), rng.IntN(len(lensWords)))]
			}
			m.Parts = append(m.Parts, textPart(fmt.Sprintf("prt_%s_%d", id, p), "text", strings.Join(words, " ")))
		}
		var c SessionCounts
		if err := w.PutMessage(ctx, &s, id, 0, &m, &c); err != nil {
			t.Fatal(err)
		}
		if err := w.PutSession(ctx, &s, SessionMeta{RootID: id, Stamp: "stamp", Now: 9}, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// deleteLensSessions deletes sessions by id in one transaction.
func deleteLensSessions(t *testing.T, ix *Index, ids ...string) {
	t.Helper()
	ctx := context.Background()
	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := w.DeleteSession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkLensScores scores every lensExprs match with recall_bm25 (its
// lengths from ix's doc_lens and its cache) and with bm25(), which must
// agree on every row; it returns how many lengths came from doc_lens.
func checkLensScores(t *testing.T, ix *Index, label string) (found int) {
	t.Helper()
	for _, e := range lensExprs {
		want := tableScores(t, ix.db, "docs_fts", `bm25(docs_fts)`, e.expr)
		if len(want) == 0 {
			t.Fatalf("%s: %s matched nothing", label, e.expr)
		}
		hits := make([]int64, e.phrases)
		for i := range hits {
			hits[i] = -1 // counted as bm25() counts them
		}
		key, done := withHits(hits, 0, &ix.lens)
		got := tableScores(t, ix.db, "docs_fts", `recall_bm25(docs_fts, ?)`, e.expr, key)
		found += bm25Lookup(key).lens.found
		done()
		if len(got) != len(want) {
			t.Fatalf("%s: %s: %d rows, bm25() %d", label, e.expr, len(got), len(want))
		}
		for id, w := range want {
			if math.Abs(got[id]-w) > 1e-9*math.Abs(w) {
				t.Errorf("%s: %s: row %d scored %v, bm25() %v", label, e.expr, id, got[id], w)
			}
		}
	}
	return found
}

// recall_bm25 takes rows' lengths from doc_lens and keeps the chunks it
// read for later statements; its scores stay bm25()'s over thousands of
// documents (several chunks), through sessions deleted and written again
// in the rowids they left (the trigger drops those chunks and bumps
// lens_gen, so the cache is not used for them), new documents past a
// cached chunk's end, and ClearSessions.
func TestRecallBM25WithDocLens(t *testing.T) {
	ix := openIndex(t, filepath.Join(privateDir(t), "i.db"))
	defer ix.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	writeLensSessions(t, ix, rng, "ses_a", 30, 50) // 1,500 parts, two chunks
	writeLensSessions(t, ix, rng, "ses_b", 20, 50)
	var chunks int
	if err := ix.db.QueryRow(`SELECT count(*) FROM doc_lens`).Scan(&chunks); err != nil || chunks < 3 {
		t.Fatalf("doc_lens holds %d chunks (%v), want 3 or more", chunks, err)
	}
	if found := checkLensScores(t, ix, "written"); found == 0 {
		t.Fatal("no length came from doc_lens")
	}
	gen := ix.lens.gen
	// The newest sessions deleted, and others written in their rowids with
	// other texts: a cached chunk would give them the old lengths.
	deleteLensSessions(t, ix, "ses_b18", "ses_b19")
	if ix.lens.gen != gen {
		t.Fatal("the cache's generation moved without a statement reading it")
	}
	writeLensSessions(t, ix, rng, "ses_c", 2, 50)
	checkLensScores(t, ix, "rowids reused")
	if ix.lens.gen == gen {
		t.Error("lens_gen did not move when documents were deleted")
	}
	// Documents past the end of a cached chunk, with nothing deleted.
	writeLensSessions(t, ix, rng, "ses_d", 3, 20)
	checkLensScores(t, ix, "appended")
	// A session in the middle deleted: its chunks go, and the next commit
	// builds them again.
	deleteLensSessions(t, ix, "ses_a10")
	checkLensScores(t, ix, "middle deleted")

	ctx := context.Background()
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
	if err := ix.db.QueryRow(`SELECT count(*) FROM doc_lens`).Scan(&chunks); err != nil || chunks != 0 {
		t.Fatalf("doc_lens holds %d chunks after ClearSessions (%v)", chunks, err)
	}
	writeLensSessions(t, ix, rng, "ses_e", 25, 50)
	if found := checkLensScores(t, ix, "cleared and written again"); found == 0 {
		t.Fatal("no length came from doc_lens after ClearSessions")
	}
	var trig int
	if err := ix.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'docs_drop_lens'`).Scan(&trig); err != nil || trig != 1 {
		t.Errorf("docs_drop_lens: %d triggers after ClearSessions (%v)", trig, err)
	}
}

// An index of schema 7 (before doc_lens) is given the table and its
// trigger when it is opened, keeping what it holds; until a write builds
// the chunks, every length is docsize's, and then doc_lens gives them.
func TestSchema7GainsDocLens(t *testing.T) {
	p := filepath.Join(privateDir(t), "i.db")
	ix := openIndex(t, p)
	rng := rand.New(rand.NewPCG(8, 8))
	writeLensSessions(t, ix, rng, "ses_a", 10, 30)
	for _, q := range []string{`DROP TRIGGER docs_drop_lens`, `DROP TABLE doc_lens`, `DELETE FROM meta WHERE key = 'lens_gen'`,
		`UPDATE meta SET value = '7' WHERE key = 'schema_version'`} {
		if _, err := ix.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var docs int
	ix.db.QueryRow(`SELECT count(*) FROM docs`).Scan(&docs)
	ix.Close()

	ix = openIndex(t, p)
	defer ix.Close()
	var version string
	var after, chunks int
	ix.db.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
	ix.db.QueryRow(`SELECT count(*) FROM docs`).Scan(&after)
	if err := ix.db.QueryRow(`SELECT count(*) FROM doc_lens`).Scan(&chunks); err != nil {
		t.Fatalf("no doc_lens after the upgrade: %v", err)
	}
	if version != fmt.Sprint(SchemaVersion) || after != docs || docs == 0 || chunks != 0 {
		t.Fatalf("upgraded: schema %s, %d docs (had %d), %d chunks; want schema %d, the same docs, no chunks yet", version, after, docs, chunks, SchemaVersion)
	}
	if found := checkLensScores(t, ix, "upgraded, no chunks"); found != 0 {
		t.Errorf("%d lengths from an empty doc_lens", found)
	}
	writeLensSessions(t, ix, rng, "ses_b", 1, 5)
	if found := checkLensScores(t, ix, "after a write"); found == 0 {
		t.Error("the write after the upgrade built no chunks")
	}
}
