package engine

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/recallhq/recall/engine/index"
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
	out := map[string]sessionDigest{}
	// A sync killed before it created the index leaves none; opening it
	// here would create one (mode 0644, which Recall then rightly refuses).
	if _, err := os.Stat(ixPath); errors.Is(err, os.ErrNotExist) {
		return out
	}
	db, err := sql.Open("sqlite", "file:"+ixPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ic string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ic); err != nil || ic != "ok" {
		t.Fatalf("integrity_check: %q %v", ic, err)
	}
	// A sync killed between creating a new index file (O_EXCL, stamped with
	// the application_id) and making its schema leaves an index of ours
	// with no tables yet: it holds no session, and the next open makes the
	// schema (the caller checks that it opens).
	var tables int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables == 0 {
		return out
	}
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
		if _, err := os.Stat(ix); err == nil && len(got) == 0 {
			// Killed before its first session (perhaps before its schema):
			// the index must still open.
			openNoSync(t, db, ix).Close()
		}
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
	rawIndex(t, e).QueryRow(`SELECT count(*) FROM sessions`).Scan(&kept)
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

// Ctrl-C during `recall sync` exits 130 saying how to go on (it printed
// "context canceled" and exited 1); what was committed stays whole, and
// the next sync resumes instead of starting over.
func TestCtrlCDuringSync(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGINT")
	}
	if testing.Short() {
		t.Skip("builds the binary and syncs a large history twice (~40 s)")
	}
	bin := buildRecall(t)
	db := fixture(t, "v1")
	multiplyHistory(t, db, 60)
	env := isolatedEnv(t.TempDir())
	sync := func(ix string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"sync", "--db", db, "--index", ix}, args...)...)
		cmd.Env = env
		return cmd
	}
	ref := filepath.Join(t.TempDir(), "ref.db")
	start := time.Now()
	if out, err := sync(ref).CombinedOutput(); err != nil {
		t.Fatalf("reference sync: %v\n%s", err, out)
	}
	cold := time.Since(start)
	want := digestSessions(t, ref)

	// Interrupt half-way; a sync that beat the signal is tried again
	// sooner.
	for delay := cold / 2; delay > cold/64; delay /= 2 {
		ix := filepath.Join(t.TempDir(), "i.db")
		cmd := sync(ix)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		if err == nil {
			t.Logf("the sync finished within %s, before the signal; again sooner", delay)
			continue
		}
		if code := cmd.ProcessState.ExitCode(); code != 130 || stderr.String() != "recall sync: interrupted; run again to resume\n" {
			t.Fatalf("Ctrl-C after %s: exit %d, stderr %q; want 130 and \"recall sync: interrupted; run again to resume\"", delay, code, stderr.String())
		}
		got := digestSessions(t, ix)
		for id, d := range got {
			if d != want[id] {
				t.Errorf("session %s is not whole after Ctrl-C: %+v, want %+v", id, d, want[id])
			}
		}
		out, err := sync(ix, "--json").Output()
		if err != nil {
			t.Fatalf("the sync after Ctrl-C: %v\n%s", err, out)
		}
		var res SyncResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		if res.Updated != 0 || res.Added+len(got) != len(want) {
			t.Errorf("the sync after Ctrl-C (%d sessions kept): %d added, %d re-written; want %d added, none re-written",
				len(got), res.Added, res.Updated, len(want)-len(got))
		}
		t.Logf("Ctrl-C after %s of a %s sync kept %d/%d sessions; the next sync added %d", delay, cold.Round(time.Millisecond), len(got), len(want), res.Added)
		return
	}
	t.Fatalf("every sync finished before Ctrl-C (a cold sync takes %s here)", cold)
}

// Status says the index is fresh right after a sync, and stale once the
// history changes.
func TestFreshnessAfterSync(t *testing.T) {
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "i.db"))
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Freshness.Stale {
		t.Errorf("stale right after a sync: %+v", st.Freshness)
	}
	w, _ := sql.Open("sqlite", "file:"+db)
	defer w.Close()
	if _, err := w.Exec(`UPDATE session SET title = title || ' (edited)' WHERE rowid = 1`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if st, _ := e.Status(context.Background()); !st.Freshness.Stale {
		t.Errorf("not stale after the history changed: %+v", st.Freshness)
	}
}

// peakHeap runs fn and returns the largest HeapInuse seen above the level
// before it (sampled every millisecond).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peak - base
}

// A 50 MB tool output (a custom tool dumping a log) syncs with bounded
// memory; the index keeps its head and tail only, and read says how long it
// was.
func TestHugeToolOutput(t *testing.T) {
	db := fixture(t, "v1")
	const size = 50 << 20
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	var sid, mid string
	var created int64
	if err := w.QueryRow(`SELECT m.session_id, m.id, m.time_created FROM message m JOIN session s ON s.id = m.session_id
		WHERE s.title LIKE 'List runtime%' AND json_extract(m.data, '$.role') = 'assistant' LIMIT 1`).Scan(&sid, &mid, &created); err != nil {
		t.Fatal(err)
	}
	{
		var b strings.Builder
		b.Grow(size + 64)
		b.WriteString("HUGEHEAD_MARKER start of the dump\n")
		for i := 0; b.Len() < size-64; i++ {
			fmt.Fprintf(&b, "line %08d filler filler filler filler filler filler filler\n", i)
		}
		b.WriteString("HUGETAIL_MARKER end of the dump\n")
		out := b.String()
		if _, err := w.Exec(`INSERT INTO part(id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zzzzHUGE', ?, ?, ?, ?,
			json_object('type','tool','tool','dump_logs','callID','call_huge',
				'state', json_object('status','completed','input',json_object('service','billing'),'output',?,'title','dump billing logs',
					'metadata', json_object('exit', 0),'time', json_object('start', ?, 'end', ?))))`,
			mid, sid, created+1, created+1, out, created+1, created+2); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	e := openNoSync(t, db, filepath.Join(t.TempDir(), "i.db"))
	var res SyncResult
	peak := peakHeap(func() { res, err = e.Sync(context.Background(), SyncOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sync: %d parts in %d ms, peak heap +%d MB", res.Parts, res.TookMS, peak>>20)
	if peak > 300<<20 {
		t.Errorf("peak heap during the sync grew by %d MB for a %d MB output; want < 300 MB", peak>>20, size>>20)
	}
	var stored, orig int
	rawIndex(t, e).QueryRow(`SELECT length(output), output_len FROM parts WHERE id = 'prt_zzzzHUGE'`).Scan(&stored, &orig)
	if orig < size-64 || stored > index.OutputCap+1<<10 {
		t.Errorf("stored %d bytes of a %d-byte output (output_len %d)", stored, size, orig)
	}
	for _, marker := range []string{"HUGEHEAD_MARKER", "HUGETAIL_MARKER"} {
		hits := search(t, e, marker).Hits
		if len(hits) == 0 || hits[0].PartID != "prt_zzzzHUGE" {
			t.Fatalf("%s: not found in the kept head/tail: %+v", marker, hits)
		}
	}
	hits := search(t, e, "HUGETAIL_MARKER").Hits
	r, err := e.Read(context.Background(), ReadParams{Cursor: hits[0].Cursor})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`truncated="true" original_chars="%d"`, orig); !strings.Contains(r.Text, want) {
		t.Errorf("read does not say the output was cut (%s)", want)
	}
	if len(r.Text) > 64<<10 {
		t.Errorf("read window is %d bytes", len(r.Text))
	}
}

// A session with 10,000 messages: sync works, a read in the middle returns
// exactly that window, and the listing counts are right.
func TestTenThousandMessages(t *testing.T) {
	db := fixture(t, "v1")
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	const n = 10000
	const sid = "ses_0000000000000LONGSESSION1"
	stmts := []string{
		`INSERT INTO session(id, project_id, slug, directory, title, version, time_created, time_updated)
			SELECT '` + sid + `', project_id, 'long', directory, 'A very long session', version, 1800000000000, 1800000000000 + 2*10000
			FROM session LIMIT 1`,
		`WITH RECURSIVE c(k) AS (SELECT 0 UNION ALL SELECT k+1 FROM c WHERE k < 9999)
			INSERT INTO message(id, session_id, time_created, time_updated, data)
			SELECT printf('msg_long%06d', k), '` + sid + `', 1800000000000 + 2*k, 1800000000000 + 2*k,
				json_object('role', CASE k % 2 WHEN 0 THEN 'user' ELSE 'assistant' END, 'time', json_object('created', 1800000000000 + 2*k))
			FROM c`,
		`INSERT INTO part(id, message_id, session_id, time_created, time_updated, data)
			SELECT 'prt_' || substr(id, 5), id, session_id, time_created, time_updated,
				json_object('type', 'text', 'text', 'long session message ' || substr(id, 9) ||
					CASE substr(id, 9) WHEN '005000' THEN ' MIDPOINT_MARKER' ELSE '' END)
			FROM message WHERE session_id = '` + sid + `'`,
	}
	for _, q := range stmts {
		if _, err := w.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	w.Close()
	e := openNoSync(t, db, filepath.Join(t.TempDir(), "i.db"))
	ctx := context.Background()
	start := time.Now()
	if _, err := e.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("sync: %s", time.Since(start))
	hits := search(t, e, "MIDPOINT_MARKER").Hits
	if len(hits) == 0 || hits[0].MessageID != "msg_long005000" {
		t.Fatalf("marker not found: %+v", hits)
	}
	start = time.Now()
	r, err := e.Read(ctx, ReadParams{Cursor: hits[0].Cursor, Mode: "around", Limit: 12, Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read around message 5001 of %d: %s", n, time.Since(start))
	if r.Range.Total != n || r.Range.Last-r.Range.First != 11 || r.Range.First > 5001 || r.Range.Last < 5001 {
		t.Errorf("range %+v, want 12 messages around 5001 of %d", r.Range, n)
	}
	if len(r.Messages) != 12 {
		t.Fatalf("%d messages in the window", len(r.Messages))
	}
	for i, m := range r.Messages {
		if want := fmt.Sprintf("msg_long%06d", r.Range.First-1+i); m.ID != want {
			t.Errorf("window message %d is %s, want %s", i, m.ID, want)
		}
	}
	tail, err := e.Read(ctx, ReadParams{Cursor: r.Nav.Tail, Limit: 5, Format: "json"})
	if err != nil || tail.Range.Last != n || len(tail.Messages) != 5 || tail.Messages[4].ID != "msg_long009999" {
		t.Errorf("tail: %+v %v", tail.Range, err)
	}
	list, err := e.Sessions(ctx, SessionsParams{Filter: "very long session", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) == 0 || list.Sessions[0].ID != sid {
		t.Fatalf("session not listed: %+v", list.Sessions)
	}
	if s := list.Sessions[0]; s.Messages != n || s.Turns != n/2 || s.ToolCalls != 0 {
		t.Errorf("counts: %d messages, %d turns, %d tool calls; want %d, %d, 0", s.Messages, s.Turns, s.ToolCalls, n, n/2)
	}
}

// Rows the schema allows but OpenCode would never write: a session row with
// every nullable column NULL (the id too: a TEXT PRIMARY KEY may be NULL in
// SQLite), a session with nothing but its id, and a part whose message is
// gone. The rest of the history is indexed; nothing fails.
func TestNullSessionAndOrphanPart(t *testing.T) {
	db := fixture(t, "v1")
	w, _ := sql.Open("sqlite", "file:"+db)
	for _, q := range []string{
		`INSERT INTO session(id, project_id, workspace_id, parent_id, slug, directory, path, title, version, share_url, summary_additions,
			summary_deletions, summary_files, summary_diffs, metadata, revert, permission, agent, model, time_created, time_updated,
			time_compacting, time_archived)
			VALUES (NULL, '', NULL, NULL, '', '', NULL, '', '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL)`,
		`INSERT INTO session(id, project_id, slug, directory, title, version, time_created, time_updated)
			VALUES ('ses_0000000000000BAREBONES01', '', '', '', '', '', 0, 0)`,
		`INSERT INTO message(id, session_id, time_created, time_updated, data)
			VALUES ('msg_0000000000000NULLSESSION', 'ses_nowhere', 1, 1, '{"role":"user"}')`,
		`INSERT INTO part(id, message_id, session_id, time_created, time_updated, data)
			SELECT 'prt_0000000000000ORPHANPART1', 'msg_gone', session_id, 1, 1, '{"type":"text","text":"ORPHAN_PART_TEXT"}'
			FROM part LIMIT 1`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	w.Close()
	e := openNoSync(t, db, filepath.Join(t.TempDir(), "i.db"))
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatalf("one odd row broke the whole sync: %v", err)
	}
	t.Logf("sync: %+v", res)
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Error("the rest of the history was not indexed")
	}
	if hits := search(t, e, "ORPHAN_PART_TEXT").Hits; len(hits) != 0 {
		t.Errorf("a part without its message was indexed: %+v", hits[0])
	}
	list, err := e.Sessions(context.Background(), SessionsParams{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range list.Sessions {
		found = found || s.ID == "ses_0000000000000BAREBONES01"
		if s.ID == "" {
			t.Error("a session without an id was indexed")
		}
	}
	if !found {
		t.Error("the bare session is not listed")
	}
	if again, err := e.Sync(context.Background(), SyncOptions{}); err != nil || !again.Idle {
		t.Errorf("second sync: %+v %v", again, err)
	}
}

// A write transaction that cannot start after a commit (Ctrl-C landing
// between the two: TestCtrlCDuringSync caught it once in CI) fails the
// sync with its error; it used to leave the deferred rollback a nil
// writer, and the CLI panicked instead of saying "interrupted". The next
// sync completes.
func TestSyncSurvivesAWriteThatCannotStart(t *testing.T) {
	calls, heal := failWriteStart(t, 2)
	e, err := Open(context.Background(), Options{DBPath: fixture(t, "v1"), IndexPath: filepath.Join(t.TempDir(), "index.db"), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Sync(context.Background(), SyncOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("sync with a write that cannot start: %v, want context.Canceled", err)
	}
	if *calls < 2 {
		t.Fatalf("the sync started %d write transactions; the test needs a second", *calls)
	}
	heal()
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatalf("the next sync: %v", err)
	}
	if hits := search(t, e, "currency").Hits; len(hits) == 0 {
		t.Error("the index answers nothing after the next sync")
	}
}
