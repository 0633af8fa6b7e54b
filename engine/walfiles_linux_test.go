package engine

import (
	"bufio"
	"context"
	"database/sql"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// walFixture is the v1 fixture switched to WAL mode, as OpenCode keeps its
// database, and closed the way OpenCode leaves it when it exits: the WAL
// checkpointed and -wal/-shm removed, the header still saying WAL.
func walFixture(t *testing.T) string {
	t.Helper()
	db := fixture(t, "v1")
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := w.QueryRow(`PRAGMA journal_mode = WAL`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode: %q %v", mode, err)
	}
	w.Close()
	if got := listDir(t, filepath.Dir(db)); strings.Contains(got, "-wal") || strings.Contains(got, "-shm") {
		t.Fatalf("after closing the WAL fixture: %s", got)
	}
	return db
}

// writeToWAL writes a title that stays in -wal: the connection never
// checkpoints.
func writeToWAL(db string) (*sql.DB, error) {
	w, err := sql.Open("sqlite", "file:"+db+"?_pragma=journal_mode(wal)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`UPDATE session SET title = 'WAL_ONLY_TITLE', time_updated = time_updated + 1 WHERE id = 'ses_dd7571907ffe5vPpW7vxTE77tW'`); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// TestHelperWALWriter is OpenCode running, in a process of its own (SQLite
// shares one process's handles on a file, which would hide how a separate
// reader sees it): it writes to the WAL of $RECALL_WAL_WRITER, says
// "ready", and holds the database open until stdin closes.
func TestHelperWALWriter(t *testing.T) {
	db := os.Getenv("RECALL_WAL_WRITER")
	if db == "" {
		return // not a test of its own: runWALWriter starts it
	}
	w, err := writeToWAL(db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	os.Stdout.WriteString("ready\n")
	io.Copy(io.Discard, os.Stdin)
}

// runWALWriter starts TestHelperWALWriter on db and waits until its write
// is in the WAL; the writer exits (checkpointing) at cleanup.
func runWALWriter(t *testing.T, db string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWALWriter$")
	cmd.Env = append(os.Environ(), "RECALL_WAL_WRITER="+db)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("WAL writer: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("WAL writer did not start: %q %v", line, err)
	}
}

// walLeftover is a history OpenCode left with its newest writes in -wal and
// no -shm (a crash, a copy of the two files): reading the WAL would need a
// -shm created beside it.
func walLeftover(t *testing.T) string {
	t.Helper()
	src := walFixture(t)
	w, err := writeToWAL(src)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "opencode.db"+suffix), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "opencode.db")
}

// useEngine runs every operation that may touch the source.
func useEngine(t *testing.T, db string) *Engine {
	t.Helper()
	e := openAt(t, db, filepath.Join(t.TempDir(), "index.db"))
	ctx := context.Background()
	if _, err := e.Sessions(ctx, SessionsParams{Filter: "invoice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(ctx, SyncOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	return e
}

// A WAL-mode opencode.db that OpenCode closed: reading it creates no -wal
// or -shm beside it. Before, the read-only connection created both (and
// left them behind).
func TestWALHistoryNeverWritten(t *testing.T) {
	db := walFixture(t)
	before, files := hashFile(t, db), listDir(t, filepath.Dir(db))
	e := useEngine(t, db)
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Error("history not indexed")
	}
	e.Close()
	if got := listDir(t, filepath.Dir(db)); got != files {
		t.Errorf("files beside opencode.db: %s -> %s", files, got)
	}
	if hashFile(t, db) != before {
		t.Error("opencode.db changed")
	}
}

// -wal without -shm in a directory we may write (as root: any): Recall
// creates no -shm; it reads the main file and says once that the newest
// changes, still in the WAL, are not visible.
func TestWALWithoutShmNotCreated(t *testing.T) {
	db := walLeftover(t)
	e := useEngine(t, db)
	if got := listDir(t, filepath.Dir(db)); got != "opencode.db,opencode.db-wal" {
		t.Errorf("files beside opencode.db: %s", got)
	}
	assertWALNotice(t, e, db)
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Error("the main file's content is not indexed")
	}
}

func assertWALNotice(t *testing.T, e *Engine, db string) {
	t.Helper()
	n := 0
	for _, msg := range e.Notices() {
		if strings.Contains(msg, db+"-wal") && strings.Contains(msg, "not visible") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("want one notice that the WAL's changes are not visible, got %q", e.Notices())
	}
	// Said once: a later sync reopens the file (an immutable handle sees no
	// later write) and finds the same WAL, and stays quiet about it.
	res, err := e.Sync(context.Background(), SyncOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notices) != 0 {
		t.Errorf("the WAL notice was repeated: %q", res.Notices)
	}
	list, err := e.Sessions(context.Background(), SessionsParams{Filter: "WAL_ONLY_TITLE"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 0 {
		t.Error("a title only the WAL holds is indexed: the notice is wrong")
	}
}

// OpenCode running on a directory that is read-only to us: -wal and -shm
// exist, so the WAL is read (its newest title is indexed) and nothing is
// created or noticed.
func TestReadOnlyDirWithLiveWAL(t *testing.T) {
	db := walFixture(t)
	view := filepath.Join(readOnlyView(t, filepath.Dir(db)), "opencode.db")
	runWALWriter(t, db)
	before := listDir(t, filepath.Dir(db))
	e := useEngine(t, view)
	list, err := e.Sessions(context.Background(), SessionsParams{Filter: "WAL_ONLY_TITLE"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) == 0 {
		t.Error("the title written to the WAL is not indexed")
	}
	if got := listDir(t, filepath.Dir(db)); got != before {
		t.Errorf("files beside opencode.db: %s -> %s", before, got)
	}
	if len(e.Notices()) != 0 {
		t.Errorf("notices for a readable WAL: %q", e.Notices())
	}
}

// A read-only directory with -wal but no -shm: the main file is read and
// the user is told once that the WAL's changes are not visible. Before,
// the fallback to the main file was silent.
func TestReadOnlyDirWALWithoutShm(t *testing.T) {
	db := walLeftover(t)
	view := filepath.Join(readOnlyView(t, filepath.Dir(db)), "opencode.db")
	e := useEngine(t, view)
	if got := listDir(t, filepath.Dir(db)); got != "opencode.db,opencode.db-wal" {
		t.Errorf("files beside opencode.db: %s", got)
	}
	assertWALNotice(t, e, view)
}
