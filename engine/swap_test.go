package engine

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// swapIn renames the history file at from over to, the way a restore or a
// reinstall replaces opencode.db (a new inode at the same path).
func swapIn(t testing.TB, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// sameSizeEdit writes a copy of the database at db into dir with
// ERR_QUOTA_7731 replaced by a string of the same length and no timestamp
// touched, then gives it db's size and modification time: a restored
// backup that differs in content but in none of the numbers a sync
// compares (sizes, mtimes, per-session counts and times).
func sameSizeEdit(t *testing.T, db, dir string) string {
	t.Helper()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "restored.db")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Exec(`UPDATE part SET data = replace(data, 'ERR_QUOTA_7731', 'ERR_SWAPS_9902') WHERE instr(data, 'ERR_QUOTA_7731') > 0`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("fixture has no ERR_QUOTA_7731 part to edit")
	}
	w.Close()
	a, _ := os.Stat(db)
	if st, _ := os.Stat(p); st.Size() != a.Size() {
		t.Fatalf("the edited copy is %d bytes, the original %d: the test needs equal sizes", st.Size(), a.Size())
	}
	if err := os.Chtimes(p, a.ModTime(), a.ModTime()); err != nil {
		t.Fatal(err)
	}
	return p
}

// A different history renamed over opencode.db while an engine has it open
// (a long-lived server): the next sync reads the new file, drops the
// sessions only the old one had, and the index equals a fresh rebuild.
// Before, the engine kept reading the deleted file through its open handle.
func TestSwappedHistoryIsReread(t *testing.T) {
	db := fixture(t, "v1")
	e := openAt(t, db, filepath.Join(t.TempDir(), "kept.db"))
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Fatal("v1 fact not indexed")
	}
	swapIn(t, fixture(t, "v2"), db)
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Idle || res.Deleted != 10 || !res.Replaced {
		t.Errorf("sync after the swap: %+v; want the 10 v1 sessions deleted and replaced set", res)
	}
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) != 0 {
		t.Errorf("a session only the old file had is still indexed: %s", hits[0].Title)
	}
	if hits := search(t, e, "ERR_EVICT_4410").Hits; len(hits) == 0 {
		t.Error("the new file's sessions are not indexed")
	}
	fresh := openAt(t, db, filepath.Join(t.TempDir(), "fresh.db"))
	if kept, rebuilt := dumpIndex(t, e), dumpIndex(t, fresh); kept != rebuilt {
		t.Errorf("index after the swap differs from a rebuild:\n%s", firstDiff(kept, rebuilt))
	}
}

// The case of the issue: a server syncs after a restore, then a CLI
// command runs. The restored file has the same size, mtime and per-session
// stamps as the one it replaced; only its inode (and content) differ.
// Before, the server read the old handle and recorded the new file's
// stamps, and the CLI then said idle over a stale index.
func TestRestoredBackupIsNotIdle(t *testing.T) {
	db := fixture(t, "v1")
	ix := filepath.Join(t.TempDir(), "index.db")
	server := openAt(t, db, ix)
	restored := sameSizeEdit(t, db, t.TempDir())
	ctx := context.Background()

	// A fresh process over the same index (the CLI) after the swap.
	swapIn(t, restored, db)
	cli := openNoSync(t, db, ix)
	res, err := cli.Sync(ctx, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Idle || res.Updated == 0 {
		t.Errorf("CLI sync after a restore: %+v; want the sessions re-read", res)
	}
	if hits := search(t, cli, "ERR_SWAPS_9902").Hits; len(hits) == 0 {
		t.Error("the restored file's content is not indexed")
	}
	cli.Close()

	// The long-lived server, still holding the replaced file, sees it too,
	// and a second restore it syncs first leaves the CLI nothing stale.
	again := sameSizeEdit(t, fixture(t, "v1"), t.TempDir())
	swapIn(t, again, db)
	if _, err := server.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, server, "ERR_SWAPS_9902").Hits; len(hits) == 0 {
		t.Error("the server did not index the restored file")
	}
	cli2 := openNoSync(t, db, ix)
	if _, err := cli2.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := openAt(t, db, filepath.Join(t.TempDir(), "fresh.db"))
	if kept, rebuilt := dumpIndex(t, cli2), dumpIndex(t, fresh); kept != rebuilt {
		t.Errorf("index after the server's sync of a restore differs from a rebuild:\n%s", firstDiff(kept, rebuilt))
	}
}

// An identity change re-reads every session (a byte-identical copy renamed
// over the file is one: nothing proves it is the same database), and a
// re-read cut short resumes where it stopped instead of starting over.
func TestSwapRereadResumes(t *testing.T) {
	db := fixture(t, "v1")
	multiplyHistory(t, db, 60)
	e := openAt(t, db, filepath.Join(t.TempDir(), "index.db"))
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	swapIn(t, cp, db)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = e.Sync(ctx, SyncOptions{Progress: func(p SyncProgress) {
		if p.Parts > commitEvery+200 {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("the interrupted re-read reported success (did the swap not force one?)")
	}
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The interrupted re-read cleared the index (most of it was to be
	// re-read) and wrote some sessions again: the rest are added now.
	if n := res.Added + res.Updated; n == 0 || n >= 610 {
		t.Errorf("resumed re-read wrote %d of 610 sessions (%d added, %d updated); want only those the interrupted one did not commit", n, res.Added, res.Updated)
	}
	if res, err := e.Sync(context.Background(), SyncOptions{}); err != nil || !res.Idle {
		t.Errorf("sync after the re-read: %+v %v; want idle", res, err)
	}
}

// BenchmarkSwapReread measures what choosing to re-read every session on
// an identity change costs, against what trusting the per-session stamps
// would: a sync after a byte-identical copy is renamed over the history
// (every session re-read), and a sync after only the mtime changed (the
// stamps compared, nothing re-read). v1 ×60: 610 sessions.
func BenchmarkSwapReread(b *testing.B) {
	db := fixture(b, "v1")
	multiplyHistory(b, db, 60)
	e := openAt(b, db, filepath.Join(b.TempDir(), "index.db"))
	raw, err := os.ReadFile(db)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var reread, compared time.Duration
	parts := 0
	for i := 0; i < b.N; i++ {
		cp := filepath.Join(filepath.Dir(db), "copy.db")
		if err := os.WriteFile(cp, raw, 0o644); err != nil {
			b.Fatal(err)
		}
		swapIn(b, cp, db)
		start := time.Now()
		res, err := e.Sync(ctx, SyncOptions{})
		if err != nil || res.Updated != 610 {
			b.Fatalf("re-read: %+v %v", res, err)
		}
		reread += time.Since(start)
		parts += res.Parts
		now := time.Now()
		if err := os.Chtimes(db, now, now); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if res, err := e.Sync(ctx, SyncOptions{}); err != nil || res.Idle || res.Updated != 0 {
			b.Fatalf("stamp compare: %+v %v", res, err)
		}
		compared += time.Since(start)
	}
	b.ReportMetric(reread.Seconds()*1000/float64(b.N), "reread-ms")
	b.ReportMetric(float64(parts)/reread.Seconds(), "reread-stored-parts/s")
	b.ReportMetric(compared.Seconds()*1000/float64(b.N), "compare-ms")
}
