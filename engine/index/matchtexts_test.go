package index

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

// MatchTexts reads the candidates and their texts in one statement; it
// must return exactly what the match alone and then DocText do, for every kind of
// document (title, text, reasoning, tool call, output) and under a filter.
func TestMatchTextsIsMatchThenDocText(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	for name, f := range matchFilters {
		for _, limit := range []int{2, 50} {
			want, err := ix.match(ctx, `"pelican"`, f, limit)
			if err != nil {
				t.Fatal(err)
			}
			rids := make([]int64, len(want))
			for i, c := range want {
				rids[i] = c.DocRID
			}
			wantTexts, err := ix.DocText(ctx, rids)
			if err != nil {
				t.Fatal(err)
			}
			got, texts, err := ix.MatchTexts(ctx, Match{Expr: `"pelican"`}, nil, f, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("%s: nothing matched; the test compares nothing", name)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s/%d: candidates differ:\n got %+v\nwant %+v", name, limit, got, want)
			}
			// Best first, ties oldest first (sorted in Go, not by the
			// statement: see candidateTexts).
			if !slices.IsSortedFunc(got, func(a, b Candidate) int {
				return cmp.Or(cmp.Compare(a.BM25, b.BM25), cmp.Compare(a.DocRID, b.DocRID))
			}) {
				t.Errorf("%s/%d: candidates not best first, ties oldest first: %+v", name, limit, got)
			}
			if !reflect.DeepEqual(texts, wantTexts) {
				t.Errorf("%s/%d: texts differ:\n got %v\nwant %v", name, limit, texts, wantTexts)
			}
		}
	}
}

// MatchNewest ranks the newest n matches under a filter, exactly as
// MatchTexts ranks the whole match, in one walk: the same candidates, in
// the same order, with the same texts, for the newest n only; how many it
// ranked, and the time of the oldest when there may be more.
func TestMatchNewestRanksTheNewestMatches(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	m := Match{Expr: `"pelican"`, Phrases: []int{PhraseQuoted}}
	for name, f := range matchFilters {
		all, allTexts, err := ix.MatchTexts(ctx, m, nil, f, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) < 2 {
			t.Fatalf("%s: %d matches; the test needs two or more", name, len(all))
		}
		rids := newestFirst(all)
		times := map[int64]int64{}
		for _, c := range all {
			times[c.DocRID] = c.Time
		}
		for n := 1; n <= len(rids)+1; n++ {
			newest := rids[:min(n, len(rids))]
			for _, limit := range []int{1, 1000} {
				var want []Candidate
				for _, c := range all {
					if slices.Contains(newest, c.DocRID) && len(want) < limit {
						want = append(want, c)
					}
				}
				got, texts, held, from, err := ix.MatchNewest(ctx, m, []int64{-1}, f, n, limit)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: newest %d, limit %d: ranked\n %+v\nwant the whole match's ranking of them\n %+v", name, n, limit, got, want)
				}
				for _, c := range got {
					if texts[c.DocRID] != allTexts[c.DocRID] {
						t.Errorf("%s: text of %d is %q, want %q", name, c.DocRID, texts[c.DocRID], allTexts[c.DocRID])
					}
				}
				wantFrom := int64(0)
				if n <= len(rids) {
					wantFrom = times[rids[n-1]]
				}
				if held != len(newest) || from != wantFrom {
					t.Errorf("%s: newest %d of %d: held %d from %d, want %d from %d", name, n, len(rids), held, from, len(newest), wantFrom)
				}
			}
		}
		if got, _, held, from, err := ix.MatchNewest(ctx, Match{Expr: `"nosuchword"`, Phrases: []int{PhraseQuoted}}, []int64{-1}, f, 5, 10); err != nil || held != 0 || from != 0 || len(got) != 0 {
			t.Errorf("%s: a match of nothing ranked %d, held %d from %d (%v)", name, len(got), held, from, err)
		}
	}
}

// matchFilters are the filters the match tests run under: none, a
// directory (a join of the documents table), and kinds.
var matchFilters = map[string]query.Filter{
	"none":      {},
	"directory": {Directory: "/w/app/"},
	"kinds":     {Kinds: []model.Kind{model.KindTool, model.KindOutput, model.KindReasoning}},
}

// newestFirst is the candidates' rids, newest (highest) first.
func newestFirst(cs []Candidate) []int64 {
	rids := make([]int64, len(cs))
	for i, c := range cs {
		rids[i] = c.DocRID
	}
	slices.Sort(rids)
	slices.Reverse(rids)
	return rids
}

// match is the FTS match alone, without the texts (what search read
// before MatchTexts, and what the tests of the match's filters check).
func (ix *Index) match(ctx context.Context, expr string, f query.Filter, limit int) ([]Candidate, error) {
	q, args := matchQuery(expr, `bm25(docs_fts)`, f, limit, "")
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanCandidates(rows)
}

// Options.OneCommand reads through a page cache of oneCommandCache pages
// (a one-command process), an index opened without it through the full
// one, and neither maps the file: the same searches either way.
func TestOneCommandOption(t *testing.T) {
	ctx := context.Background()
	plain := testIndex(t)
	for _, one := range []bool{false, true} {
		ix, err := OpenWith(ctx, plain.path, Options{OneCommand: one})
		if err != nil {
			t.Fatal(err)
		}
		want := pageCacheSize
		if one {
			want = oneCommandCache
		}
		if got := pragmaInt(t, ix.db, "cache_size"); got != want {
			t.Errorf("OneCommand %v: cache_size %d, want %d", one, got, want)
		}
		if got := pragmaInt(t, ix.db, "mmap_size"); got != 0 {
			t.Errorf("OneCommand %v: mmap_size %d, want 0 (never mapped)", one, got)
		}
		got, err := ix.match(ctx, `"pelican"`, query.Filter{}, 50)
		want2, _ := plain.match(ctx, `"pelican"`, query.Filter{}, 50)
		if err != nil || len(got) == 0 || !reflect.DeepEqual(got, want2) {
			t.Errorf("OneCommand %v: the match differs: %d candidates (%v), want %d", one, len(got), err, len(want2))
		}
		ix.Close()
	}
}

// A write in a one-command process (the sync a search runs first, which
// on a new index is the whole history) writes with the full page cache,
// and its connection reads with the small one again once it commits or
// rolls back: a write through 25 pages would spill its changes to the
// WAL as it goes.
func TestOneCommandWriterGetsTheFullCache(t *testing.T) {
	ctx := context.Background()
	p := testIndex(t).path
	ix, err := OpenWith(ctx, p, Options{OneCommand: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ix.db.SetMaxOpenConns(1) // the writer's connection is the one read after
	for _, end := range []string{"commit", "rollback"} {
		w, err := ix.BeginWrite(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := w.tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&n); err != nil || n != pageCacheSize {
			t.Errorf("%s: the writer's cache_size %d (%v), want %d", end, n, err, pageCacheSize)
		}
		if end == "commit" {
			err = w.Commit(ctx)
		} else {
			w.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := pragmaInt(t, ix.db, "cache_size"); got != oneCommandCache {
			t.Errorf("after %s: cache_size %d, want %d", end, got, oneCommandCache)
		}
	}
}

// pragmaInt reads an integer PRAGMA through db.
func pragmaInt(t *testing.T, db *sql.DB, name string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`PRAGMA ` + name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A one-command process reads without a goroutine per statement: with a
// context that can be cancelled, database/sql starts one per open rows
// and the driver one per step, so such a process runs its reads with a
// context that has no Done channel (readContext). A server keeps the
// cancellation.
func TestOneCommandReadsWithoutCancellation(t *testing.T) {
	plain := testIndex(t)
	for _, one := range []bool{false, true} {
		ix, err := OpenWith(context.Background(), plain.path, Options{OneCommand: one})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if done := ix.readContext(ctx).Done(); (done == nil) != one {
			t.Errorf("OneCommand %v: a read's context can be cancelled: %v", one, done != nil)
		}
		// The reads themselves: a cancelled context stops a server's
		// statement, and not a one-command process's.
		cancel()
		var n int
		err = ix.queryRow(ctx, `SELECT count(*) FROM docs`).Scan(&n)
		if one && (err != nil || n == 0) || !one && !errors.Is(err, context.Canceled) {
			t.Errorf("OneCommand %v: a read with a cancelled context: %d rows, %v", one, n, err)
		}
		ix.Close()
	}
}

// The score function keeps a match's best rows itself (pickBest), where
// SQLite's ORDER BY score, rowid LIMIT kept them: the same rows, in the
// same order, with the same scores and texts, as bm25() ranks them in SQL,
// when many documents score the same (a history repeats its errors and
// its commands' output) and the limit falls inside a run of equal ones,
// for the whole match and for its newest n.
func TestPickedRowsAreTheStatementsWithEqualScores(t *testing.T) {
	// Nine sessions holding the same five documents: equal scores in runs
	// of nine, told apart only by their age.
	texts := []string{"pelican", "pelican pelican", "the pelican flew over the harbour", "ERR_PELICAN_42 pelican",
		"no bird here", "gulls on the pier", "a heron waits", "tide tables", "kestrel overhead"}
	var sessions []fixtureSession
	for i := range 9 {
		fs := fixtureSession{s: model.Session{ID: fmt.Sprintf("ses_%d", i), Title: "copy", Directory: []string{"/w/app", "/w/lib"}[i%2],
			Created: int64(1000 * (i + 1)), Updated: int64(1000*(i+1) + 500)}, root: fmt.Sprintf("ses_%d", i)}
		for j, text := range texts {
			fs.msgs = append(fs.msgs, model.Message{ID: fmt.Sprintf("msg_%d_%d", i, j), Role: []string{"user", "assistant"}[j%2], Created: fs.s.Created + int64(j),
				Parts: []model.Part{textPart(fmt.Sprintf("prt_%d_%d", i, j), []string{"text", "reasoning"}[j%2], text)}})
		}
		sessions = append(sessions, fs)
	}
	ix := indexOf(t, sessions)
	ctx := context.Background()
	m := Match{Expr: `"pelican"`, Phrases: []int{PhraseQuoted}}
	for name, f := range matchFilters {
		all, allTexts, err := ix.MatchTexts(ctx, m, nil, f, 1000)
		if err != nil {
			t.Fatal(err)
		}
		equal := 0
		for i := 1; i < len(all); i++ {
			if all[i].BM25 == all[i-1].BM25 {
				equal++
			}
		}
		if equal < len(all)/2 {
			t.Fatalf("%s: %d of %d matches score as the one before; the test needs runs of equal scores", name, equal, len(all))
		}
		newest := newestFirst(all)
		for _, limit := range []int{1, 4, 7, 13, 1000} {
			want, _, err := ix.MatchTexts(ctx, m, nil, f, limit)
			if err != nil {
				t.Fatal(err)
			}
			got, gotTexts, err := ix.MatchTexts(ctx, m, []int64{-1}, f, limit)
			if err != nil {
				t.Fatal(err)
			}
			if !sameRanking(got, want) {
				t.Errorf("%s limit %d: picked\n %+v\nwant bm25()'s\n %+v", name, limit, got, want)
			}
			for _, c := range got {
				if gotTexts[c.DocRID] != allTexts[c.DocRID] {
					t.Errorf("%s: text of %d is %q, want %q", name, c.DocRID, gotTexts[c.DocRID], allTexts[c.DocRID])
				}
			}
			for _, n := range []int{1, 5, 11, len(all)} {
				var wantNewest []Candidate
				for _, c := range all {
					if slices.Contains(newest[:n], c.DocRID) && len(wantNewest) < limit {
						wantNewest = append(wantNewest, c)
					}
				}
				got, _, held, _, err := ix.MatchNewest(ctx, m, []int64{-1}, f, n, limit)
				if err != nil {
					t.Fatal(err)
				}
				if held != n || !sameRanking(got, wantNewest) {
					t.Errorf("%s newest %d limit %d: held %d, picked\n %+v\nwant\n %+v", name, n, limit, held, got, wantNewest)
				}
			}
		}
	}
}

// sameRanking reports whether two rankings hold the same documents in the
// same order, with the same scores but for the last bits (recall_bm25
// computes bm25()'s formula in Go).
func sameRanking(a, b []Candidate) bool {
	return slices.EqualFunc(a, b, func(x, y Candidate) bool {
		close := math.Abs(x.BM25-y.BM25) <= 1e-9*math.Abs(y.BM25)
		x.BM25, y.BM25 = 0, 0
		return x == y && close
	})
}

// The rows a match keeps are read in the walk's snapshot: a sync that
// commits between the walk and the read, deleting the newest session and
// writing another whose documents take its rowids, changes neither the
// candidates nor their texts.
func TestPickedRowsReadInTheWalksSnapshot(t *testing.T) {
	ctx := context.Background()
	m := Match{Expr: `"pelican"`, Phrases: []int{PhraseQuoted}}
	for _, newest := range []bool{false, true} {
		p := filepath.Join(privateDir(t), "i.db")
		ix := openIndex(t, p)
		defer ix.Close()
		writer := openIndex(t, p)
		defer writer.Close()
		put := func(id, text string) {
			t.Helper()
			var parts []model.Part
			for k := range 3 {
				parts = append(parts, textPart(fmt.Sprintf("prt_%s_%d", id, k), "text", fmt.Sprintf("%s %d", text, k)))
			}
			writeSession(t, writer, id, false, parts...)
		}
		put("ses_old", "a pelican on the pier")
		put("ses_new", "the pelican flew")
		run := func() ([]Candidate, map[int64]string, error) {
			if !newest {
				return ix.MatchTexts(ctx, m, []int64{-1}, query.Filter{}, 10)
			}
			got, texts, _, _, err := ix.MatchNewest(ctx, m, []int64{-1}, query.Filter{}, 100, 10)
			return got, texts, err
		}
		want, wantTexts, err := run()
		if err != nil || len(want) != 6 {
			t.Fatalf("%d candidates (%v), want 6", len(want), err)
		}
		afterWalk = func() {
			afterWalk = nil
			deleteLensSessions(t, writer, "ses_new")
			put("ses_gull", "a gull, no bird of ours")
		}
		got, texts, err := run()
		afterWalk = nil
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(texts, wantTexts) {
			t.Errorf("newest %v: a write between the walk and the read gave\n %+v %v\nwant\n %+v %v", newest, got, texts, want, wantTexts)
		}
		// The write took the rowids the match kept, or the test shows nothing.
		var reused int
		for _, c := range want {
			var sid string
			if err := writer.db.QueryRow(`SELECT session_id FROM docs WHERE rid = ?`, c.DocRID).Scan(&sid); err == nil && sid == "ses_gull" {
				reused++
			}
		}
		if reused == 0 {
			t.Fatalf("newest %v: the write reused none of the kept rowids", newest)
		}
	}
}
