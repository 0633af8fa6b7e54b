package index

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/query"
)

// bm25Table is an FTS5 table as the index makes docs_fts (contentless,
// with deletes), holding a few documents, one deleted.
func bm25Table(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	stmts := []string{
		`CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1, tokenize='porter unicode61')`,
	}
	docs := []string{
		"the connection pool is exhausted under load",
		"connection refused: pool closed",
		"retry the connection with backoff, then retry again",
		"pool pool pool",
		"db max open conns set to 10 for the connection pool",
		"db_max_open_conns db max open conns",
		"an unrelated note about pelicans",
		"the pool was resized after the incident; connections held",
	}
	for i, d := range docs {
		stmts = append(stmts, `INSERT INTO t(rowid, body) VALUES (`+string(rune('1'+i))+`, '`+d+`')`)
	}
	stmts = append(stmts, `DELETE FROM t WHERE rowid = 2`)
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return db
}

// scores runs the match with score expression sc over table t, by rowid.
func scores(t *testing.T, db *sql.DB, sc, expr string, args ...any) map[int64]float64 {
	t.Helper()
	return tableScores(t, db, "t", sc, expr, args...)
}

// tableScores runs the match with score expression sc over an FTS5
// table, by rowid.
func tableScores(t *testing.T, db *sql.DB, table, sc, expr string, args ...any) map[int64]float64 {
	t.Helper()
	rows, err := db.Query(`SELECT rowid, `+sc+` FROM `+table+` WHERE `+table+` MATCH ?`, append(args, expr)...)
	if err != nil {
		t.Fatalf("%s: %v", sc, err)
	}
	defer rows.Close()
	out := map[int64]float64{}
	for rows.Next() {
		var id int64
		var s float64
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s %q: %v", sc, expr, err)
	}
	return out
}

func TestRecallBM25MatchesBM25(t *testing.T) {
	db := bm25Table(t)
	cases := []struct {
		expr    string
		phrases []string // its phrases in order, each counted below
		hits    []int64
	}{
		{`"pool"`, []string{`"pool"`}, nil},
		{`"connection" OR "retry"`, []string{`"connection"`, `"retry"`}, nil},
		{`("db_max_open_conns" OR "db max open conns") OR "pool"`, []string{`"db_max_open_conns"`, `"db max open conns"`, `"pool"`}, nil},
		{`("connection" OR "pool") NOT ("pelican")`, []string{`"connection"`, `"pool"`, `"pelican"`}, nil},
	}
	for _, c := range cases {
		c.hits = make([]int64, len(c.phrases))
		for i, ph := range c.phrases {
			if err := db.QueryRow(`SELECT count(*) FROM t WHERE t MATCH ?`, ph).Scan(&c.hits[i]); err != nil {
				t.Fatal(err)
			}
		}
		want := scores(t, db, `bm25(t)`, c.expr)
		if len(want) == 0 {
			t.Fatalf("%s matched nothing", c.expr)
		}
		unknown := make([]int64, len(c.hits))
		for i := range unknown {
			unknown[i] = -1
		}
		for _, hits := range [][]int64{unknown, c.hits} {
			key, done := withHits(hits, 0, nil)
			got := scores(t, db, `recall_bm25(t, ?)`, c.expr, key)
			done()
			if len(got) != len(want) {
				t.Fatalf("%s hits %v: %d rows, bm25 %d", c.expr, hits, len(got), len(want))
			}
			for id, w := range want {
				if math.Abs(got[id]-w) > 1e-12 {
					t.Errorf("%s hits %v: row %d scored %v, bm25 %v", c.expr, hits, id, got[id], w)
				}
			}
		}
	}
	// Counts that are not the phrases' give other scores (the counts are
	// what is used, not recounted).
	want := scores(t, db, `bm25(t)`, `"connection" OR "retry"`)
	key, done := withHits([]int64{1, 4}, 0, nil) // 4 and 1
	got := scores(t, db, `recall_bm25(t, ?)`, `"connection" OR "retry"`, key)
	done()
	if math.Abs(got[3]-want[3]) < 1e-6 {
		t.Errorf("row 3 scored %v with swapped counts, as bm25 does (%v)", got[3], want[3])
	}
}

func TestRecallBM25RefusesAMismatch(t *testing.T) {
	db := bm25Table(t)
	key, done := withHits([]int64{1, 2}, 0, nil)
	defer done()
	_, err := db.QueryContext(context.Background(), `SELECT recall_bm25(t, ?) FROM t WHERE t MATCH '"pool"'`, key)
	if err == nil {
		// The error may surface on the first step.
		rows, _ := db.Query(`SELECT recall_bm25(t, ?) FROM t WHERE t MATCH '"pool"'`, key)
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "misuse") {
		t.Fatalf("two counts for one phrase: err %v, want a misuse error", err)
	}
	// An unregistered key too.
	rows, err := db.Query(`SELECT recall_bm25(t, 999999999) FROM t WHERE t MATCH '"pool"'`)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err == nil {
		t.Fatal("an unregistered key scored rows")
	}
}

// TestCompileMatchNumbersItsPhrases holds Match.Phrases to FTS5's own
// numbering: recall_bm25 refuses a count list of another length, so each
// compiled match is run with exactly len(Phrases) counts, and one more
// must fail.
func TestCompileMatchNumbersItsPhrases(t *testing.T) {
	db := bm25Table(t)
	alts := Alternatives{"pol": {"pool"}, "conection": {"connection", "connection pool"}}
	cases := []struct {
		q    string
		all  []string // CompileMatchAll's keys; nil: CompileMatch
		want []int
	}{
		{"pool", nil, []int{0}},
		{"db_max_open_conns pool", nil, []int{0, 0, 1}},
		{`"connection pool" retry`, nil, []int{0, PhraseQuoted}},
		{"pool -pelican", nil, []int{0, PhraseExcluded}},
		{`pool -"connection refused" -db_max_open_conns`, nil, []int{0, PhraseExcluded, PhraseExcluded, PhraseExcluded}},
		{"pol conection retry", nil, []int{0, 0, 1, 1, 1, 2}},
		{"connection retry pool", []string{"pool", "connection"}, []int{0, 2}},
	}
	for _, c := range cases {
		q := query.Parse(c.q)
		m := CompileMatch(q, alts, nil)
		if c.all != nil {
			m = CompileMatchAll(q, alts, c.all)
		}
		if !slices.Equal(m.Phrases, c.want) {
			t.Errorf("%q: phrases %v, want %v (%s)", c.q, m.Phrases, c.want, m.Expr)
		}
		for extra := 0; extra <= 1; extra++ {
			key, done := withHits(make([]int64, len(m.Phrases)+extra), 0, nil)
			rows, err := db.Query(`SELECT recall_bm25(t, ?) FROM t WHERE t MATCH ?`, key, m.Expr)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			done()
			if (err == nil) != (extra == 0) {
				t.Errorf("%q (%s) with %d counts for %d phrases: err %v", c.q, m.Expr, len(m.Phrases)+extra, len(m.Phrases), err)
			}
		}
	}
}

// TestRecallBM25KeepsTheBestRows: rows whose bound says they cannot be
// among a statement's best limit rows score 0 without their length; the
// best limit rows must still be bm25()'s, in its order, with its scores,
// with and without a filter joined in (where SQLite scores only the rows
// that pass it).
func TestRecallBM25KeepsTheBestRows(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		`CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1, tokenize='porter unicode61')`,
		`CREATE TABLE d (rid INTEGER PRIMARY KEY, kind TEXT)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	// Documents of 1 to 400 words over a small vocabulary, the query words
	// rarer and placed anywhere, so lengths, frequencies and positions all
	// vary.
	rnd := rand.New(rand.NewPCG(1, 2))
	filler := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda")
	words := strings.Fields("pool connection retry timeout")
	tx, _ := db.Begin()
	for i := 1; i <= 3000; i++ {
		n := 1 + rnd.IntN(400)
		if rnd.IntN(3) == 0 {
			n = 1 + rnd.IntN(12)
		}
		doc := make([]string, n)
		for j := range doc {
			doc[j] = filler[rnd.IntN(len(filler))]
			if rnd.IntN(40) == 0 {
				doc[j] = words[rnd.IntN(len(words))]
			}
		}
		if _, err := tx.Exec(`INSERT INTO t(rowid, body) VALUES (?, ?)`, i, strings.Join(doc, " ")); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO d VALUES (?, ?)`, i, []string{"text", "output"}[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	type row struct {
		id    int64
		score float64
	}
	top := func(q string, args ...any) []row {
		rows, err := db.Query(q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.score); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	pruned := 0
	for _, expr := range []string{`"pool"`, `"pool" OR "retry"`, `"pool" OR "connection" OR "retry" OR "timeout"`, `"pool" AND "retry"`} {
		var nPhrase int
		for _, w := range words {
			nPhrase += strings.Count(expr, `"`+w+`"`)
		}
		for _, limit := range []int{1, 10, 50} {
			for _, filtered := range []bool{false, true} {
				q := `SELECT rowid, %s AS score FROM t WHERE t MATCH ? ORDER BY score LIMIT ?`
				if filtered {
					q = `SELECT t.rowid, %s AS score FROM t JOIN d ON d.rid = t.rowid WHERE t MATCH ? AND d.kind = 'output' ORDER BY score LIMIT ?`
				}
				want := top(fmt.Sprintf(q, `bm25(t)`), expr, limit)
				hits := make([]int64, nPhrase)
				for i := range hits {
					hits[i] = -1
				}
				key, done := withHits(hits, limit, nil)
				got := top(fmt.Sprintf(q, `recall_bm25(t, ?)`), key, expr, limit)
				h := bm25Lookup(key)
				pruned += h.prunedRows
				done()
				if len(got) != len(want) {
					t.Fatalf("%s limit %d filtered %v: %d rows, bm25 %d", expr, limit, filtered, len(got), len(want))
				}
				for i := range want {
					if got[i].id != want[i].id || math.Abs(got[i].score-want[i].score) > 1e-12 {
						t.Errorf("%s limit %d filtered %v: row %d is %v, bm25's %v", expr, limit, filtered, i, got[i], want[i])
					}
				}
			}
		}
	}
	if pruned == 0 {
		t.Error("no row was left unscored: the bound never worked")
	}
	t.Logf("%d rows left unscored", pruned)
}
