package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
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

// A one-command process's index reads each length where SQLite holds its
// chunk and keeps none: the scores stay bm25()'s, the lengths come from
// doc_lens, and the cache stays empty, through sessions deleted and
// written again in their rowids by another handle.
func TestRecallBM25ReadsDocLensInPlace(t *testing.T) {
	p := filepath.Join(privateDir(t), "i.db")
	w := openIndex(t, p)
	defer w.Close()
	rng := rand.New(rand.NewPCG(8, 8))
	writeLensSessions(t, w, rng, "ses_a", 30, 50)
	writeLensSessions(t, w, rng, "ses_b", 20, 50)
	one, err := OpenWith(context.Background(), p, Options{OneCommand: true})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	check := func(label string) {
		t.Helper()
		if found := checkLensScores(t, one, label); found == 0 {
			t.Fatalf("%s: no length came from doc_lens", label)
		}
		if n := len(one.lens.chunks); n != 0 {
			t.Errorf("%s: %d chunks kept by a one-command index", label, n)
		}
	}
	check("written")
	deleteLensSessions(t, w, "ses_b18", "ses_b19", "ses_a3")
	writeLensSessions(t, w, rng, "ses_c", 2, 50)
	check("rowids reused")
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

// PackDocLens puts doc_lens's rows, written one chunk a commit among the
// other tables' pages, onto consecutive pages, and keeps what they hold:
// the same chunks, the same scores, the trigger and the partial index.
func TestPackDocLens(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(privateDir(t), "i.db")
	ix := openIndex(t, p)
	defer ix.Close()
	rng := rand.New(rand.NewPCG(8, 8))
	for i := range 12 { // a chunk or so a commit, as a cold index writes them (three a page)
		writeLensSessions(t, ix, rng, fmt.Sprintf("ses_%c", 'a'+i), 20, 50)
	}
	chunks := func() map[int64]string {
		rows, err := ix.db.Query(`SELECT chunk, hex(lens) FROM doc_lens`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var c int64
			var h string
			if err := rows.Scan(&c, &h); err != nil {
				t.Fatal(err)
			}
			out[c] = h
		}
		return out
	}
	// The leaf pages, and the runs of consecutive pages they make.
	span := func() (pages, runs int) {
		rows, err := ix.db.Query(`SELECT pageno FROM dbstat WHERE name = 'doc_lens' AND pagetype = 'leaf' ORDER BY pageno`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		last := int64(-1)
		for rows.Next() {
			var p int64
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			if p != last+1 {
				runs++
			}
			pages, last = pages+1, p
		}
		t.Logf("%d pages in %d runs", pages, runs)
		return pages, runs
	}
	before := chunks()
	if n, runs := span(); runs < 3 {
		t.Fatalf("before packing, %d doc_lens pages in %d runs: the test needs them apart", n, runs)
	}
	if err := ix.PackDocLens(ctx); err != nil {
		t.Fatal(err)
	}
	if n, runs := span(); runs != 1 {
		t.Errorf("packed, %d doc_lens pages lie in %d runs, want one", n, runs)
	}
	if after := chunks(); !reflect.DeepEqual(after, before) {
		t.Fatalf("packing changed doc_lens: %d chunks, was %d", len(after), len(before))
	}
	// A fresh handle reads the packed rows from the file.
	fresh := openIndex(t, p)
	defer fresh.Close()
	if found := checkLensScores(t, fresh, "packed"); found == 0 {
		t.Fatal("no length came from the packed doc_lens")
	}
	var objs int
	if err := ix.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name IN ('docs_drop_lens', 'doc_lens_todo') OR name LIKE 'doc_lens_packed%'`).Scan(&objs); err != nil || objs != 2 {
		t.Fatalf("after packing, %d of the trigger and the partial index (%v), want both and no leftover table", objs, err)
	}
	// The trigger still empties a deleted document's chunk.
	gen := fresh.lens.gen
	deleteLensSessions(t, ix, "ses_c3")
	writeLensSessions(t, ix, rng, "ses_z", 2, 50)
	checkLensScores(t, fresh, "deleted after packing")
	if fresh.lens.gen == gen {
		t.Error("lens_gen did not move when documents were deleted after packing")
	}
}

// A doc_lens row in lensFormat gives back every length it was made from,
// those of a byte and those past it alike, and none past its rowids; a
// row of the format before it is read as two bytes a rowid.
func TestLensFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 2, 300, 1 << lensShift} {
		vals := make([]uint16, n)
		for i := range vals {
			switch rng.IntN(6) {
			case 0:
				vals[i] = 0 // no document
			case 1:
				vals[i] = uint16(254 + rng.IntN(3)) // 254, 255, 256
			case 2:
				vals[i] = uint16(257 + rng.IntN(lensTooLong-257))
			case 3:
				vals[i] = lensTooLong
			default:
				vals[i] = uint16(1 + rng.IntN(253))
			}
		}
		b := encodeLens(vals)
		old := make([]byte, 2*n)
		for i, v := range vals {
			old[2*i], old[2*i+1] = byte(v), byte(v>>8)
		}
		for i := range n + 3 {
			want, wantCovered := uint16(0), i < n
			if wantCovered {
				want = vals[i]
			}
			if v, covered := lensAt(b, i, true); v != want || covered != wantCovered {
				t.Fatalf("%d rowids: rowid %d read %d (covered %v), want %d (%v)", n, i, v, covered, want, wantCovered)
			}
			if v, covered := lensAt(old, i, false); v != want || covered != wantCovered {
				t.Fatalf("%d rowids, two bytes each: rowid %d read %d (covered %v), want %d (%v)", n, i, v, covered, want, wantCovered)
			}
		}
		long := 0
		for _, v := range vals {
			if v >= 255 {
				long++
			}
		}
		if len(b) != 2+n+4*long {
			t.Errorf("%d rowids, %d of 255 tokens or more, took %d bytes, want %d", n, long, len(b), 2+n+4*long)
		}
	}
	if _, covered := lensAt(nil, 0, true); covered {
		t.Error("an empty row covers a rowid")
	}
}

// An index of schema 8, whose doc_lens rows are of the format before
// lensFormat (two bytes a rowid, no lens_format in meta), is upgraded
// keeping them, and they are read as they are, by an engine
// that keeps chunks and by a one-command process; the next write builds
// every row again in lensFormat and bumps lens_gen, and the lengths still
// give bm25()'s scores, documents of 255 tokens and more among them.
func TestDocLensFormatUpgrade(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(privateDir(t), "i.db")
	ix := openIndex(t, p)
	defer ix.Close()
	rng := rand.New(rand.NewPCG(10, 10))
	writeLensSessions(t, ix, rng, "ses_a", 30, 50)
	// Documents past a byte's length, among the others.
	var long []model.Part
	for k, n := range []int{255, 300, 1200} {
		long = append(long, textPart(fmt.Sprintf("prt_long_%d", k), "text", strings.Repeat("pelican harbor ", n/2)+"quartz"))
	}
	writeSession(t, ix, "ses_long", false, long...)
	format := func() (f string, compact int, rows int) {
		ix.db.QueryRow(`SELECT coalesce((SELECT value FROM meta WHERE key = 'lens_format'), 'none')`).Scan(&f)
		r, err := ix.db.Query(`SELECT lens FROM doc_lens`)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for r.Next() {
			var b []byte
			r.Scan(&b)
			rows++
			if n := int(b[0]) | int(b[1])<<8; len(b) >= 2+n && len(b) < 2*n {
				compact++
			}
		}
		return f, compact, rows
	}
	if f, compact, rows := format(); f != fmt.Sprint(lensFormat) || compact != rows || rows < 2 {
		t.Fatalf("a new index: lens_format %s, %d of %d rows a byte a rowid", f, compact, rows)
	}
	checkLensScores(t, ix, "lensFormat")

	// The rows as the format before wrote them.
	rows, err := ix.db.Query(`SELECT chunk, lens FROM doc_lens`)
	if err != nil {
		t.Fatal(err)
	}
	olds := map[int64][]byte{}
	for rows.Next() {
		var c int64
		var b []byte
		rows.Scan(&c, &b)
		n := int(b[0]) | int(b[1])<<8
		old := make([]byte, 2*n)
		for i := range n {
			v, _ := lensAt(b, i, true)
			old[2*i], old[2*i+1] = byte(v), byte(v>>8)
		}
		olds[c] = old
	}
	rows.Close()
	for c, b := range olds {
		if _, err := ix.db.Exec(`UPDATE doc_lens SET lens = ? WHERE chunk = ?`, b, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{`DELETE FROM meta WHERE key = 'lens_format'`, `UPDATE meta SET value = '8' WHERE key = 'schema_version'`} {
		if _, err := ix.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	fresh := openIndex(t, p) // upgraded to SchemaVersion, keeping the rows
	var version int
	if err := fresh.db.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil || version != SchemaVersion {
		t.Fatalf("an index of schema 8 opened as schema %d (%v), want %d", version, err, SchemaVersion)
	}
	if _, _, rows := format(); rows != len(olds) {
		t.Fatalf("the upgrade to schema %d left %d doc_lens rows of %d", SchemaVersion, rows, len(olds))
	}
	defer fresh.Close()
	one, err := OpenWith(ctx, p, Options{OneCommand: true})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	for _, x := range []struct {
		label string
		ix    *Index
	}{{"the format before", fresh}, {"the format before, in place", one}} {
		if found := checkLensScores(t, x.ix, x.label); found == 0 {
			t.Fatalf("%s: no length came from doc_lens", x.label)
		}
	}
	gen := fresh.lens.gen
	writeLensSessions(t, ix, rng, "ses_b", 1, 5)
	if f, compact, rows := format(); f != fmt.Sprint(lensFormat) || compact != rows {
		t.Fatalf("after a write: lens_format %s, %d of %d rows a byte a rowid", f, compact, rows)
	}
	for _, x := range []struct {
		label string
		ix    *Index
	}{{"built again", fresh}, {"built again, in place", one}} {
		if found := checkLensScores(t, x.ix, x.label); found == 0 {
			t.Fatalf("%s: no length came from doc_lens", x.label)
		}
	}
	if fresh.lens.gen == gen {
		t.Error("lens_gen did not move when doc_lens was built again in another format")
	}
}
