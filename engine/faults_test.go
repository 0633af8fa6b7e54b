package engine

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/source"
	"github.com/recallhq/recall/engine/source/opencode"
)

func noEnv(string) string { return "" }

func TestMissingDatabaseNamesPaths(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope", "opencode.db")
	_, err := Open(context.Background(), Options{DBPath: missing, IndexPath: filepath.Join(t.TempDir(), "i.db"), Getenv: noEnv})
	if !errors.Is(err, opencode.ErrNotFound) || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "--db") {
		t.Fatalf("want a not-found error naming %s and --db, got %v", missing, err)
	}
	// Discovery tries OpenCode's own places and says which.
	home := t.TempDir()
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	_, err = opencode.Locate("", env)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(home, ".local", "share", "opencode", "opencode.db")) {
		t.Fatalf("discovery error should name the default path: %v", err)
	}
}

// With no history anywhere, the bundled demo answers and says so.
func TestDemoFallback(t *testing.T) {
	data := t.TempDir()
	env := func(k string) string {
		if k == "XDG_DATA_HOME" {
			return data
		}
		return ""
	}
	e, err := Open(context.Background(), Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !e.IsDemo() || len(e.Notices()) == 0 || !strings.Contains(e.Notices()[0], "demo") {
		t.Fatalf("demo not announced: %v", e.Notices())
	}
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, e, "ErrEmailTaken").Hits; len(hits) == 0 {
		t.Fatal("demo history has no hits for ErrEmailTaken")
	}
}

func TestNotSQLiteAndTruncated(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{
		"text.db":  []byte("this is not a database at all, just some text that is long enough"),
		"empty.db": {},
	}
	good, _ := os.ReadFile(fixture(t, "v1"))
	cases["truncated.db"] = good[:len(good)/3]
	for name, content := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, content, 0o644)
		e, err := Open(context.Background(), Options{DBPath: p, IndexPath: filepath.Join(t.TempDir(), name+".idx"), Getenv: noEnv})
		if err == nil {
			_, err = e.Sync(context.Background(), SyncOptions{})
			e.Close()
		}
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), p) || !(strings.Contains(err.Error(), "--db") || strings.Contains(err.Error(), "copy")) {
			t.Errorf("%s: error should name the file and what to do: %v", name, err)
		}
	}
}

func TestUnknownSchema(t *testing.T) {
	p := filepath.Join(t.TempDir(), "other.db")
	db, _ := sql.Open("sqlite", p)
	db.Exec(`CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)`)
	db.Close()
	_, err := Open(context.Background(), Options{DBPath: p, IndexPath: filepath.Join(t.TempDir(), "other.idx"), Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "unknown schema") {
		t.Fatalf("want unknown schema error, got %v", err)
	}
}

// A damaged index is moved aside (not deleted: <name>.damaged-<time>), the
// notice says where, and a fresh index is built from the history.
func TestCorruptIndexRebuilt(t *testing.T) {
	db := fixture(t, "v1")
	ix := filepath.Join(t.TempDir(), "index.db")
	e := openAt(t, db, ix)
	e.Close()
	os.Remove(ix + "-wal")
	os.Remove(ix + "-shm")
	b, _ := os.ReadFile(ix)
	for i := 100; i < len(b) && i < 200000; i += 7 {
		b[i] ^= 0x5a
	}
	os.WriteFile(ix, b, 0o600)
	e2 := openAt(t, db, ix)
	moved := damagedCopies(t, ix)
	if len(moved) != 1 {
		t.Fatalf("want the damaged index moved to one %s.damaged-* file, got %v", ix, moved)
	}
	if got, _ := os.ReadFile(moved[0]); !bytes.Equal(got, b) {
		t.Error("the moved file is not the damaged index byte for byte")
	}
	if joined := strings.Join(e2.Notices(), "\n"); !strings.Contains(joined, moved[0]) || !strings.Contains(joined, "rebuilt") {
		t.Errorf("notice should say where the damaged index went: %q", joined)
	}
	if hits := search(t, e2, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Fatal("rebuilt index finds nothing")
	}
}

// damagedCopies lists the files a damaged index was moved to.
func damagedCopies(t *testing.T, ix string) []string {
	t.Helper()
	m, _ := filepath.Glob(ix + ".damaged-*")
	return m
}

// Malformed rows are skipped and counted; everything else is indexed.
func TestMalformedRowsSkipped(t *testing.T) {
	db := fixture(t, "v1")
	w, _ := sql.Open("sqlite", db)
	id := func(q string) string {
		var s string
		if err := w.QueryRow(q).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	texts := []string{
		id(`SELECT id FROM part WHERE json_extract(data,'$.type')='text' LIMIT 1 OFFSET 3`),
		id(`SELECT id FROM part WHERE json_extract(data,'$.type')='text' LIMIT 1 OFFSET 5`),
		id(`SELECT id FROM part WHERE json_extract(data,'$.type')='reasoning' LIMIT 1`),
	}
	msg := id(`SELECT id FROM message WHERE id NOT IN (SELECT message_id FROM part WHERE id IN ('` +
		strings.Join(texts, "','") + `')) LIMIT 1 OFFSET 7`)
	for q, arg := range map[string]string{
		`UPDATE part SET data = '{"type":"text","text": broken' WHERE id = ?`:  texts[0],
		`UPDATE part SET data = '{"type":"hologram","text":"x"}' WHERE id = ?`: texts[1],
		`UPDATE part SET data = '{}' WHERE id = ?`:                             texts[2],
		`UPDATE message SET data = 'not json' WHERE id = ?`:                    msg,
	} {
		if _, err := w.Exec(q, arg); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	e, err := Open(context.Background(), Options{DBPath: db, IndexPath: filepath.Join(t.TempDir(), "i.db"), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 4 || len(res.Warnings) != 4 {
		t.Errorf("skipped %d (%v), want 4", res.Skipped, res.Warnings)
	}
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Error("the rest of the history was not indexed")
	}
}

// holdLock locks db as a writer in rollback-journal mode does mid-commit
// (BEGIN EXCLUSIVE on its own connection) until the returned func runs.
func holdLock(t *testing.T, db string) func() {
	t.Helper()
	w, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	conn, err := w.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			conn.Close()
			w.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// A history locked by a writer: with nothing indexed, a sync fails after
// the short busy wait with an error naming the file and what to do; with
// an index that has content, it answers from the index, says so and as of
// when, and the next sync after the lock catches up.
func TestLockedDatabase(t *testing.T) {
	db := fixture(t, "v1")
	ix := filepath.Join(t.TempDir(), "i.db")
	ctx := context.Background()
	release := holdLock(t, db)
	start := time.Now()
	e, err := Open(ctx, Options{DBPath: db, IndexPath: ix, Getenv: noEnv})
	if err != nil {
		t.Fatalf("open of a locked history: %v", err)
	}
	_, err = e.Sync(ctx, SyncOptions{})
	if !errors.Is(err, source.ErrLocked) || !strings.Contains(err.Error(), db) || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("want a locked error naming the file and what to do, got %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("failed after %s", d)
	}
	release()
	if _, err := e.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatalf("sync once the lock was released: %v", err)
	}

	w, _ := sql.Open("sqlite", db)
	var sid string
	if err := w.QueryRow(`SELECT id FROM session WHERE rowid = 1`).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, w, sid, "session.updated.1", `UPDATE session SET title = 'LOCKED_RENAME', time_updated = time_updated + 1 WHERE id = ?`, sid)
	w.Close()
	release = holdLock(t, db)
	start = time.Now()
	res, err := e.Sync(ctx, SyncOptions{})
	if err != nil || !res.Locked {
		t.Fatalf("sync of a locked history over a synced index: %+v %v; want locked, no error", res, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("answered after %s", d)
	}
	if n := res.LockNotice(); !strings.Contains(n, "locked by another process (OpenCode writing?); answered from the index as of 20") {
		t.Errorf("lock notice %q", n)
	}
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Error("no answer from the index")
	}
	release()
	if res, err := e.Sync(ctx, SyncOptions{}); err != nil || res.Locked || res.Updated != 1 {
		t.Errorf("sync after the lock: %+v %v; want the renamed session", res, err)
	}
}

// Damage deep inside the index (not the schema page) is found on use: the
// command path rebuilds (moving the damaged file aside too) and answers.
func TestDamageFoundOnUseIsRebuilt(t *testing.T) {
	db := fixture(t, "v1")
	ix := filepath.Join(t.TempDir(), "index.db")
	e := openAt(t, db, ix)
	raw := rawIndex(t, e)
	raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	raw.Close() // its -wal and -shm would be moved aside with the file
	e.Close()
	b, _ := os.ReadFile(ix)
	for i := len(b) / 2; i < len(b); i += 3 {
		b[i] ^= 0xa5
	}
	os.WriteFile(ix, b, 0o600)
	e2, err := Open(context.Background(), Options{DBPath: db, IndexPath: ix, Getenv: noEnv})
	if err != nil {
		t.Fatal(err) // the schema page is intact: Open succeeds
	}
	defer e2.Close()
	_, err = e2.Search(context.Background(), SearchParams{Query: "ERR_QUOTA_7731 invoice rounding", Limit: 5})
	if err == nil {
		t.Fatal("the damage missed every page this search reads; damage the file differently")
	}
	if !IsIndexDamaged(err) {
		t.Fatalf("want an index-damaged error, got %v", err)
	}
	if _, err := e2.RebuildIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	moved := damagedCopies(t, ix)
	if len(moved) != 1 {
		t.Fatalf("want the damaged index moved to one %s.damaged-* file, got %v", ix, moved)
	}
	if joined := strings.Join(e2.Notices(), "\n"); !strings.Contains(joined, moved[0]) {
		t.Errorf("notice should name %s: %q", moved[0], joined)
	}
	if hits := search(t, e2, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Fatal("no hits after rebuild")
	}
}

// OPENCODE_DB naming a file that is not there is an error naming it and
// the variable, not a look elsewhere: the default history beside it (and
// the demo) are not what the user asked for.
func TestOpencodeDBMissingIsAnError(t *testing.T) {
	data := t.TempDir()
	def := filepath.Join(data, "opencode", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(def), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(def, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "typo.db")
	env := func(k string) string {
		return map[string]string{"XDG_DATA_HOME": data, "OPENCODE_DB": missing}[k]
	}
	p, err := opencode.Locate("", env)
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "OPENCODE_DB") {
		t.Fatalf("Locate with OPENCODE_DB=%s missing: %q, %v; want an error naming it", missing, p, err)
	}
	if _, err := Open(context.Background(), Options{Getenv: env}); !errors.Is(err, opencode.ErrNotFound) {
		t.Fatalf("Open with OPENCODE_DB missing: %v; want not found (no demo)", err)
	}
}

// A history replaced by a database that is not OpenCode's is reported at
// Open also when its index exists (the history is opened lazily only when
// it is the very file the index's last sync read).
func TestUnknownSchemaOverAnExistingIndex(t *testing.T) {
	db := fixture(t, "v1")
	ix := filepath.Join(t.TempDir(), "index.db")
	openAt(t, db, ix).Close()
	other := filepath.Join(t.TempDir(), "other.db")
	odb, _ := sql.Open("sqlite", other)
	if _, err := odb.Exec(`CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)`); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	if err := os.Rename(other, db); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), Options{DBPath: db, IndexPath: ix, Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "unknown schema") {
		t.Fatalf("want unknown schema error at Open, got %v", err)
	}
}
