package engine

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildRecall builds the recall binary into a temp dir.
func buildRecall(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "recall")
	cmd := exec.Command("go", "build", "-o", bin, "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// isolatedEnv keeps a child recall away from the user's config, data dir
// and history.
func isolatedEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "RECALL_CONFIG", "OPENCODE_DB":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
}

// copyRows inserts n copies of every row of table matching where, each
// column taken as is unless over names an SQL expression for it (in which
// `k` is the copy number, 1..n).
func copyRows(t testing.TB, db *sql.DB, table, where string, n int, over map[string]string) {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	var cols, exprs []string
	for rows.Next() {
		var c string
		rows.Scan(&c)
		cols = append(cols, "`"+c+"`")
		if e, ok := over[c]; ok {
			exprs = append(exprs, e)
		} else {
			exprs = append(exprs, "t.`"+c+"`")
		}
	}
	rows.Close()
	q := fmt.Sprintf("WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM c WHERE k < %d) INSERT INTO `%s`(%s) SELECT %s FROM `%s` t, c WHERE %s",
		n, table, strings.Join(cols, ","), strings.Join(exprs, ","), table, where)
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("copy %s: %v", table, err)
	}
}

// multiplyHistory adds n copies of every v1 session of db (fresh ids, same
// content, titles marked), the way a long-lived user's history grows.
func multiplyHistory(t testing.TB, db string, n int) {
	t.Helper()
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	suffix := `'_c' || k`
	copyRows(t, w, "session", "1", n, map[string]string{
		"id":        "t.id || " + suffix,
		"parent_id": "CASE WHEN t.parent_id IS NULL THEN NULL ELSE t.parent_id || " + suffix + " END",
		"title":     "t.title || ' [copy ' || k || ']'",
	})
	copyRows(t, w, "message", "1", n, map[string]string{
		"id":         "t.id || " + suffix,
		"session_id": "t.session_id || " + suffix,
	})
	copyRows(t, w, "part", "1", n, map[string]string{
		"id":         "t.id || " + suffix,
		"message_id": "t.message_id || " + suffix,
		"session_id": "t.session_id || " + suffix,
	})
}

// sessionDigest is everything the index holds for one session, reduced to
// a hash, plus the counts a half-written session would get wrong.
type sessionDigest struct {
	Messages, MessageRows, Parts, Docs int
	Hash                               string
}

// digestSessions reads an index file directly (no engine, so nothing is
// repaired on the way) and digests each session.
func digestSessions(t testing.TB, ixPath string) map[string]sessionDigest {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+ixPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ic string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ic); err != nil || ic != "ok" {
		t.Fatalf("integrity_check: %q %v", ic, err)
	}
	out := map[string]sessionDigest{}
	rows, err := db.Query(`SELECT id, messages FROM sessions`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var d sessionDigest
		rows.Scan(&id, &d.Messages)
		out[id] = d
	}
	rows.Close()
	// Rows of a session that has no session row: half a session.
	for _, table := range []string{"messages", "parts", "docs", "file_touches"} {
		var n int
		db.QueryRow(`SELECT count(*) FROM ` + table + ` WHERE session_id NOT IN (SELECT id FROM sessions)`).Scan(&n)
		if n > 0 {
			t.Errorf("%d %s rows belong to no indexed session", n, table)
		}
	}
	var docs, fts int
	db.QueryRow(`SELECT count(*) FROM docs`).Scan(&docs)
	db.QueryRow(`SELECT count(*) FROM docs_fts`).Scan(&fts)
	if docs != fts {
		t.Errorf("docs %d vs FTS rows %d", docs, fts)
	}
	hashes := map[string]*strings.Builder{}
	add := func(q string) {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			id := fmt.Sprint(vals[0])
			if hashes[id] == nil {
				hashes[id] = &strings.Builder{}
			}
			fmt.Fprintln(hashes[id], vals[1:]...)
		}
	}
	add(`SELECT session_id, id, ord, role FROM messages ORDER BY session_id, ord`)
	add(`SELECT session_id, id, msg_ord, ord, kind, text, input, output, error FROM parts ORDER BY session_id, msg_ord, ord`)
	add(`SELECT session_id, part_id, kind, text FROM docs ORDER BY session_id, part_id, kind`)
	count := func(q string, set func(*sessionDigest, int)) {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var n int
			rows.Scan(&id, &n)
			d := out[id]
			set(&d, n)
			out[id] = d
		}
	}
	count(`SELECT session_id, count(*) FROM messages GROUP BY session_id`, func(d *sessionDigest, n int) { d.MessageRows = n })
	count(`SELECT session_id, count(*) FROM parts GROUP BY session_id`, func(d *sessionDigest, n int) { d.Parts = n })
	count(`SELECT session_id, count(*) FROM docs GROUP BY session_id`, func(d *sessionDigest, n int) { d.Docs = n })
	for id, d := range out {
		if b := hashes[id]; b != nil {
			d.Hash = fmt.Sprintf("%x", sha256.Sum256([]byte(b.String())))
		}
		out[id] = d
	}
	return out
}

// openNoSync opens an engine without syncing, so what a test inspects is
// exactly what the last process left.
func openNoSync(t testing.TB, db, ix string) *Engine {
	t.Helper()
	e, err := Open(context.Background(), Options{DBPath: db, IndexPath: ix, Getenv: noEnv})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// A sync killed with SIGKILL at any moment leaves an index that opens, passes
// integrity_check and holds only whole sessions; the next sync finishes the
// job and the result equals a fresh rebuild.
func TestKillDuringSync(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	if testing.Short() {
		t.Skip("20 killed syncs of a large history (~40 s)")
	}
	bin := buildRecall(t)
	db := fixture(t, "v1")
	multiplyHistory(t, db, 60)
	home := t.TempDir()
	env := isolatedEnv(home)
	recall := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// The reference: one uninterrupted cold sync, which also says how long
	// a sync takes here, so the kills land inside one.
	ref := filepath.Join(t.TempDir(), "ref.db")
	start := time.Now()
	if out, err := recall("sync", "--db", db, "--index", ref); err != nil {
		t.Fatalf("reference sync: %v\n%s", err, out)
	}
	cold := time.Since(start)
	want := digestSessions(t, ref)
	t.Logf("cold sync of %d sessions: %s", len(want), cold)

	seed := time.Now().UnixNano()
	if s := os.Getenv("RECALL_KILL_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (rerun with RECALL_KILL_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))

	ix := filepath.Join(t.TempDir(), "killed.db")
	killed, partial := 0, 0
	for round := range 20 {
		// Most rounds re-write every session (--force: delete and insert
		// inside one transaction), so there is always work to interrupt;
		// the others resume an interrupted cold sync.
		args := []string{"sync", "--db", db, "--index", ix}
		force := rng.IntN(5) > 0
		if force {
			args = append(args, "--force")
		}
		delay := time.Duration(rng.Int64N(int64(cold) + 1))
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var outb strings.Builder
		cmd.Stdout, cmd.Stderr = &outb, &outb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var werr error
		wasKilled := false
		select {
		case werr = <-done:
		case <-time.After(delay):
			cmd.Process.Signal(syscall.SIGKILL)
			werr = <-done
			wasKilled = true
		}
		if wasKilled {
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
				wasKilled = false // it had finished just before the signal
			}
		}
		if wasKilled {
			killed++
		} else if werr != nil {
			t.Fatalf("round %d: sync failed on its own: %v\n%s", round, werr, outb.String())
		}

		got := digestSessions(t, ix)
		if len(got) < len(want) {
			partial++
		}
		for id, d := range got {
			w, ok := want[id]
			switch {
			case !ok:
				t.Errorf("round %d: session %s is not in the history", round, id)
			case d.Messages != d.MessageRows:
				t.Errorf("round %d: session %s says %d messages, has %d rows", round, id, d.Messages, d.MessageRows)
			case d != w:
				t.Errorf("round %d: session %s is not whole: %+v, want %+v", round, id, d, w)
			}
		}
		if out, err := recall("status", "--no-sync", "--json", "--db", db, "--index", ix); err != nil {
			t.Fatalf("round %d: status after the kill: %v\n%s", round, err, out)
		}
		e := openNoSync(t, db, ix)
		if n := e.Notices(); len(n) > 0 {
			t.Errorf("round %d: index needed repair after a kill: %v", round, n)
		}
		e.Close()
		t.Logf("round %d: force=%v delay=%s killed=%v indexed %d/%d sessions", round, force, delay.Round(time.Millisecond), wasKilled, len(got), len(want))
		if t.Failed() {
			t.FailNow()
		}
	}
	if killed < 8 {
		t.Errorf("only %d of 20 syncs were killed mid-way; the history is too small for this machine", killed)
	}
	t.Logf("%d kills, %d left a partial index", killed, partial)

	out, err := recall("sync", "--json", "--db", db, "--index", ix)
	if err != nil {
		t.Fatalf("final sync: %v\n%s", err, out)
	}
	var res SyncResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("final sync: %v\n%s", err, out)
	}
	t.Logf("final sync: %+v", res)
	if !res.Idle && res.TookMS == 0 {
		t.Errorf("sync took 0 ms: tookMs is never set")
	}
	if got := digestSessions(t, ix); len(got) != len(want) {
		t.Fatalf("after the final sync: %d sessions, want %d", len(got), len(want))
	}
	kept, rebuilt := dumpIndex(t, openNoSync(t, db, ix)), dumpIndex(t, openNoSync(t, db, ref))
	if kept != rebuilt {
		t.Errorf("index after kills differs from a rebuild:\n%s", firstDiff(kept, rebuilt))
	}
}

// A first sync that stops part-way (Ctrl-C, a killed LSP server) keeps what
// it committed, and the next sync picks up from there instead of re-writing
// everything again.
func TestInterruptedSyncResumes(t *testing.T) {
	db := fixture(t, "v1")
	multiplyHistory(t, db, 60)
	e := openNoSync(t, db, filepath.Join(t.TempDir(), "i.db"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := e.Sync(ctx, SyncOptions{Progress: func(p SyncProgress) {
		if p.Parts > commitEvery+200 {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("the interrupted sync reported success")
	}
	var kept int
	e.ix.DB().QueryRow(`SELECT count(*) FROM sessions`).Scan(&kept)
	if kept == 0 {
		t.Fatal("nothing was committed before the interruption")
	}
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated != 0 || res.Added+kept != 610 {
		t.Errorf("resumed sync: %d added, %d re-written; want %d added, none re-written", res.Added, res.Updated, 610-kept)
	}
	if res.TookMS <= 0 {
		t.Errorf("tookMs = %d for a sync that indexed %d parts", res.TookMS, res.Parts)
	}
}
