package engine

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/recallhq/recall/internal/historytest"
)

// Benchmarks over a large history. `make bench` builds one with
// `ocgen clone -mode sql` and points RECALL_BENCH_DB at it; RECALL_BENCH_INDEX
// is an index synced once beforehand (cold indexing is measured by
// BenchmarkColdIndex on its own). Latency benchmarks report p50/p95 in ms
// over every operation run.

// RECALL_BENCH_DB and RECALL_BENCH_INDEX may each list several paths (with
// the OS list separator, ":"): one source and its index each, searched as
// one (the several-histories figures in docs/benchmarks.md).
func benchEngine(b *testing.B) *Engine {
	b.Helper()
	db, ix := os.Getenv("RECALL_BENCH_DB"), os.Getenv("RECALL_BENCH_INDEX")
	if db == "" || ix == "" {
		b.Skip("set RECALL_BENCH_DB and RECALL_BENCH_INDEX (make bench does)")
	}
	opts := Options{DBPath: db, IndexPath: ix, Getenv: noEnv}
	if dbs, ixs := filepath.SplitList(db), filepath.SplitList(ix); len(dbs) > 1 {
		if len(ixs) != len(dbs) {
			b.Fatalf("RECALL_BENCH_DB lists %d histories and RECALL_BENCH_INDEX %d indexes; give one index each", len(dbs), len(ixs))
		}
		opts.DBPath, opts.IndexPath = "", ""
		for i := range dbs {
			opts.Sources = append(opts.Sources, SourceSpec{Path: dbs[i], Index: ixs[i]})
		}
	}
	e, err := Open(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	if _, err := e.Sync(context.Background(), SyncOptions{LockWait: time.Minute}); err != nil {
		b.Fatal(err)
	}
	return e
}

// benchQueries are the public corpus's labelled queries (every kind:
// identifiers, errors, paraphrases, typos, paths).
func benchQueries(b *testing.B) []string {
	path := os.Getenv("RECALL_BENCH_QUERIES")
	if path == "" {
		path = filepath.Join("..", "testdata", "corpus", "public-queries.json")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("read queries: %v", err)
	}
	var qf struct {
		Queries []struct {
			Q string `json:"q"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(raw, &qf); err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, q := range qf.Queries {
		out = append(out, q.Q)
	}
	return out
}

type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	if len(l) == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(l[len(l)/2]), "p50-ms")
	b.ReportMetric(ms(l[min(len(l)-1, len(l)*95/100)]), "p95-ms")
	b.ReportMetric(0, "ns/op")
}

// measureEach times op b.N times and reports the latency percentiles.
func measureEach(b *testing.B, op func(i int) error) {
	var lat latencies
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

func BenchmarkSearch(b *testing.B) {
	e := benchEngine(b)
	qs := benchQueries(b)
	ctx := context.Background()
	measureEach(b, func(i int) error {
		_, err := e.Search(ctx, SearchParams{Query: qs[i%len(qs)], Limit: 10})
		return err
	})
}

// BenchmarkProcessSearch is what one `recall search` process pays inside
// the engine: open the index as the CLI does (mapped), the idle sync, one
// search, close. Set against BenchmarkSearch (a warm engine), it shows
// what a process pays for starting cold.
func BenchmarkProcessSearch(b *testing.B) {
	benchEngine(b) // syncs the index once beforehand
	qs := benchQueries(b)
	ctx := context.Background()
	opts := Options{DBPath: os.Getenv("RECALL_BENCH_DB"), IndexPath: os.Getenv("RECALL_BENCH_INDEX"), Getenv: noEnv, OneCommand: true}
	measureEach(b, func(i int) error {
		e, err := Open(ctx, opts)
		if err != nil {
			return err
		}
		defer e.Close()
		if _, err := e.Sync(ctx, SyncOptions{}); err != nil {
			return err
		}
		_, err = e.Search(ctx, SearchParams{Query: qs[i%len(qs)], Limit: 10})
		return err
	})
}

// BenchmarkServeSearches is not a benchmark of its own: it is one arm of
// .ci/ab-search.py, which compares indexes (or binaries) by sending each
// query to every arm in turn, so the machine's minute-to-minute speed hits
// every arm alike. It opens RECALL_BENCH_DB and RECALL_BENCH_INDEX without
// a sync and answers each query read from stdin, one a line, with the
// search's time in microseconds. It skips unless RECALL_AB_SERVE is set.
func BenchmarkServeSearches(b *testing.B) {
	if os.Getenv("RECALL_AB_SERVE") == "" {
		b.Skip("an arm of .ci/ab-search.py (RECALL_AB_SERVE)")
	}
	ctx := context.Background()
	e, err := Open(ctx, Options{DBPath: os.Getenv("RECALL_BENCH_DB"), IndexPath: os.Getenv("RECALL_BENCH_INDEX"), Getenv: noEnv})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		start := time.Now()
		if _, err := e.Search(ctx, SearchParams{Query: sc.Text(), Limit: 10}); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("took-us %d\n", time.Since(start).Microseconds())
	}
}

func BenchmarkIdleSync(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	measureEach(b, func(int) error {
		r, err := e.Sync(ctx, SyncOptions{})
		if err == nil && !r.Idle {
			err = fmt.Errorf("sync not idle: %+v", r)
		}
		return err
	})
}

// BenchmarkSyncAfterWrite is the sync that follows each write OpenCode
// makes while a turn streams: one part updated and its event appended, as
// OpenCode's projector does, in a different session each time (the same
// sequence of sessions every run). The write is made between the timed
// syncs; it changes the benchmark history's copy (a part's time and text,
// and events), and each sync replaces the changed part's document in the
// index (docs/benchmarks.md, "What syncs that re-read sessions do to the
// index": before a re-read kept its unchanged documents, it rewrote them
// all).
func BenchmarkSyncAfterWrite(b *testing.B) {
	benchSyncsAfterWrites(b, nil)
}

// BenchmarkSyncListing is the sync after a write that lists every session,
// as one does at least every five minutes and after a deletion (the syncs
// of BenchmarkSyncAfterWrite read only the sessions written to): before
// each, the change mark is made to say its listing is an hour old.
func BenchmarkSyncListing(b *testing.B) {
	benchSyncsAfterWrites(b, ageListing)
}

// benchSyncsAfterWrites times syncs after writes to parts spread over the
// benchmark history, calling before (when set) ahead of each write.
func benchSyncsAfterWrites(b *testing.B, before func(testing.TB, *Engine)) {
	e := benchEngine(b)
	w := benchHistoryWriter(b)
	var parts int64
	if err := w.QueryRow(`SELECT max(rowid) FROM part`).Scan(&parts); err != nil {
		b.Fatal(err)
	}
	timeSyncsAfterWrites(b, e, w, func(i int) int64 {
		if before != nil {
			before(b, e)
		}
		return (int64(i)*7919)%parts + 1
	})
}

// BenchmarkSyncWhileStreaming is the sync that follows each delta while a
// turn streams in the session being worked on, the history's longest: its
// newest text part gains a word each time, as OpenCode writes a streamed
// delta, and the engine syncs. Before a re-read kept the documents it
// writes again unchanged, each such sync deleted and re-added every
// document of the session.
func BenchmarkSyncWhileStreaming(b *testing.B) {
	e := benchEngine(b)
	w := benchHistoryWriter(b)
	var sid string
	var parts int
	if err := w.QueryRow(`SELECT session_id, count(*) AS n FROM part GROUP BY session_id ORDER BY n DESC LIMIT 1`).Scan(&sid, &parts); err != nil {
		b.Fatal(err)
	}
	var rowid int64
	if err := w.QueryRow(`SELECT max(rowid) FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'text'`, sid).Scan(&rowid); err != nil || rowid == 0 {
		b.Fatalf("the longest session (%s, %d parts) has no text part: %v", sid, parts, err)
	}
	timeSyncsAfterWrites(b, e, w, func(int) int64 { return rowid })
	b.ReportMetric(float64(parts), "session-parts")
}

// benchHistoryWriter is a writable handle on the benchmark's (first)
// history, to write to it the way OpenCode does; the engine never writes it.
func benchHistoryWriter(b *testing.B) *sql.DB {
	dbs := filepath.SplitList(os.Getenv("RECALL_BENCH_DB"))
	w, err := sql.Open("sqlite", "file:"+dbs[0]+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	return w
}

// timeSyncsAfterWrites times b.N syncs, each after a write like OpenCode's
// (untimed) to the part at rowid(i) or the next one; each must re-read
// exactly the session written to.
func timeSyncsAfterWrites(b *testing.B, e *Engine, w *sql.DB, rowid func(i int) int64) {
	ctx := context.Background()
	var lat latencies
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := writeLikeOpenCode(w, rowid(i)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		r, err := e.Sync(ctx, SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if r.Updated != 1 {
			b.Fatalf("a sync after a write to one session updated %d", r.Updated)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

// writeLikeOpenCode updates the part at rowid (or the next one) and
// appends its session's event in one transaction, as OpenCode does: a
// text or reasoning part gains a word, as one streamed delta does.
func writeLikeOpenCode(w *sql.DB, rowid int64) error {
	tx, err := w.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var sid string
	if err := tx.QueryRow(`SELECT session_id FROM part WHERE rowid >= ? ORDER BY rowid LIMIT 1`, rowid).Scan(&sid); err != nil {
		return err
	}
	// A streamed part grows by a word; a tool's part changes its state in
	// place (its text stays).
	if _, err := tx.Exec(`UPDATE part SET time_updated = ?, data = CASE WHEN json_extract(data, '$.type') IN ('text', 'reasoning')
		THEN json_set(data, '$.text', json_extract(data, '$.text') || ' streamed') ELSE data END
		WHERE rowid = (SELECT rowid FROM part WHERE rowid >= ? ORDER BY rowid LIMIT 1)`, time.Now().UnixMilli(), rowid); err != nil {
		return err
	}
	if err := historytest.AppendEvent(context.Background(), tx, sid, "message.part.updated.1"); err != nil {
		return err
	}
	return tx.Commit()
}

func BenchmarkReadWindow(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	res, err := e.Search(ctx, SearchParams{Query: "connection pool", Limit: 50, Group: "none"})
	if err != nil || len(res.Hits) == 0 {
		b.Fatalf("no hits to read: %v", err)
	}
	measureEach(b, func(i int) error {
		_, err := e.Read(ctx, ReadParams{Cursor: res.Hits[i%len(res.Hits)].Cursor})
		return err
	})
}

func BenchmarkSessions20(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	measureEach(b, func(int) error {
		_, err := e.Sessions(ctx, SessionsParams{Limit: 20})
		return err
	})
}

// BenchmarkColdIndex indexes the whole history into a fresh index and
// reports parts per second (run with -benchtime=1x).
func BenchmarkColdIndex(b *testing.B) {
	db := os.Getenv("RECALL_BENCH_DB")
	if db == "" {
		b.Skip("set RECALL_BENCH_DB (make bench does)")
	}
	for i := 0; i < b.N; i++ {
		ix := filepath.Join(b.TempDir(), "cold.db")
		e, err := Open(context.Background(), Options{DBPath: db, IndexPath: ix, Getenv: noEnv})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		r, err := e.Sync(context.Background(), SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		secs := time.Since(start).Seconds()
		// parts/s counts OpenCode's part rows read (step bookkeeping
		// included); stored/s the content parts Recall keeps.
		rows := sourceParts(b, db)
		b.ReportMetric(float64(rows)/secs, "parts/s")
		b.ReportMetric(float64(r.Parts)/secs, "stored/s")
		b.ReportMetric(secs, "s")
		e.Close()
	}
}

// sourceParts counts the part rows of the OpenCode database at path,
// through a read-only handle of its own.
func sourceParts(b *testing.B, path string) int {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&_pragma=query_only(1)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM part`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
