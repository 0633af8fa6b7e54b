package engine

import (
	"context"
	"database/sql"
	"errors"
	"github.com/recallhq/recall/engine/query"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mountOrSkip runs a mount(2) the test needs; without root (or without
// the capability in a container) it skips and says why. CI runs as root.
func mountOrSkip(t *testing.T, source, target, fstype string, flags uintptr, data string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a filesystem")
	}
	if err := syscall.Mount(source, target, fstype, flags, data); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("mount %s: %v (no CAP_SYS_ADMIN here)", target, err)
		}
		t.Fatalf("mount %s: %v", target, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(target, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", target, err)
		}
	})
}

// readOnlyView mounts dir read-only at a new path (a bind mount remounted
// ro: a read-only directory does not stop root) and returns that path.
func readOnlyView(t *testing.T, dir string) string {
	t.Helper()
	view := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(view, 0o700); err != nil {
		t.Fatal(err)
	}
	mountOrSkip(t, dir, view, "", syscall.MS_BIND, "")
	if err := syscall.Mount("", view, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", view, err)
	}
	return view
}

// On a read-only filesystem the index opens read-only: searches, reads,
// sessions and status answer from it; a sync says what to do instead.
func TestReadOnlyIndexAnswers(t *testing.T) {
	db := fixture(t, "v1")
	dir := filepath.Join(t.TempDir(), "ix")
	os.Mkdir(dir, 0o700)
	e := openAt(t, db, filepath.Join(dir, "index.db"))
	e.Close()
	ix := filepath.Join(readOnlyView(t, dir), "index.db")

	ro, err := Open(context.Background(), Options{DBPath: db, IndexPath: ix, Getenv: noEnv})
	if err != nil {
		t.Fatalf("open a read-only index: %v", err)
	}
	defer ro.Close()
	ctx := context.Background()
	res := search(t, ro, "ERR_QUOTA_7731")
	if len(res.Hits) == 0 {
		t.Fatal("no hits from the read-only index")
	}
	if _, err := ro.Read(ctx, ReadParams{Cursor: res.Hits[0].Cursor, Mode: "around"}); err != nil {
		t.Errorf("read: %v", err)
	}
	if _, err := ro.Sessions(ctx, SessionsParams{Limit: 5}); err != nil {
		t.Errorf("sessions: %v", err)
	}
	if _, err := ro.Status(ctx); err != nil {
		t.Errorf("status: %v", err)
	}
	_, err = ro.Sync(ctx, SyncOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), ix) || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "--no-sync") {
		t.Errorf("sync of a read-only index: want an error naming %s, read-only and --no-sync, got %v", ix, err)
	}
}

// An index of the schema before (7, without doc_lens) on a read-only
// filesystem is searched as it is: it cannot be upgraded there.
func TestReadOnlySchema7IndexAnswers(t *testing.T) {
	db := fixture(t, "v1")
	dir := filepath.Join(t.TempDir(), "ix")
	os.Mkdir(dir, 0o700)
	path := filepath.Join(dir, "index.db")
	e := openAt(t, db, path)
	e.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TRIGGER docs_drop_lens`, `DROP TABLE doc_lens`, `UPDATE meta SET value = '7' WHERE key = 'schema_version'`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	ro, err := Open(context.Background(), Options{DBPath: db, IndexPath: filepath.Join(readOnlyView(t, dir), "index.db"), Getenv: noEnv})
	if err != nil {
		t.Fatalf("open a read-only schema-7 index: %v", err)
	}
	defer ro.Close()
	if res := search(t, ro, "ERR_QUOTA_7731"); len(res.Hits) == 0 {
		t.Fatal("no hits from the read-only schema-7 index")
	}
}

// A full disk during a sync says "disk full" with the index path; the
// index keeps answering and the next sync, with space again, completes.
func TestDiskFullDuringSync(t *testing.T) {
	db := fixture(t, "v1")
	disk := filepath.Join(t.TempDir(), "disk")
	os.Mkdir(disk, 0o700)
	// 8 MiB holds the fixture's index (about 270 KiB) and its WAL,
	// and is quickly filled by the filler below.
	mountOrSkip(t, "tmpfs", disk, "tmpfs", 0, "size=8m,mode=0700")
	ix := filepath.Join(disk, "index.db")
	e := openAt(t, db, ix)
	multiplyHistory(t, db, 8)
	filler := filepath.Join(disk, "filler")
	f, err := os.OpenFile(filler, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	_, err = e.Sync(context.Background(), SyncOptions{})
	if err == nil {
		t.Fatal("sync on a full disk succeeded; the filler did not fill it")
	}
	if !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), ix) {
		t.Errorf("want an error saying disk full and naming %s, got %v", ix, err)
	}
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Error("the index stopped answering after the failed sync")
	}
	os.Remove(filler)
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatalf("sync with space again: %v", err)
	}
	// Ungrouped: grouped results fold the copies (same texts, same times,
	// as a fork's) into the family of the original.
	if hits := search(t, e, "ERR_QUOTA_7731", func(p *SearchParams) { p.Limit = 50; p.Group = query.GroupNone }).Hits; len(hits) < 2 {
		t.Errorf("after the second sync: %d hits, want the copies too", len(hits))
	}
}

// A data dir Recall cannot write: cursors are signed with a key that lives
// as long as the process, and a notice says so once.
func TestCursorKeyOnReadOnlyDataDir(t *testing.T) {
	data := readOnlyView(t, t.TempDir())
	e, err := Open(context.Background(), Options{DBPath: fixture(t, "v1"), IndexPath: filepath.Join(t.TempDir(), "i.db"), Getenv: dataEnv(data)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := e.Notices(); len(n) != 1 || !strings.Contains(n[0], "cursors from this run stop working when it ends") {
		t.Errorf("notices %q", n)
	}
	hit := search(t, e, "ERR_QUOTA_7731").Hits[0]
	if _, err := e.Read(context.Background(), ReadParams{Cursor: hit.Cursor}); err != nil {
		t.Errorf("read with the process's key: %v", err)
	}
}
