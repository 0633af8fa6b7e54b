//go:build unix

package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// nobody is the uid the root-only tests give a file to stand for another
// local user (65534 is "nobody" on Linux and the BSDs).
const nobody = 65534

// needRoot skips a test that has to chown a file to another user; CI runs
// as root, so there it always runs.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: gives a file to another uid (chown)")
	}
}

// state is what a test compares before and after Recall touched a path:
// the file's bytes and mode, and the names in its directory (so a -wal,
// -shm or .lock that appears beside it is caught).
type state struct {
	hash  string
	mode  os.FileMode
	uid   int
	names string
}

func stateOf(t *testing.T, p string) state {
	t.Helper()
	var s state
	if b, err := os.ReadFile(p); err == nil {
		s.hash = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	if fi, err := os.Lstat(p); err == nil {
		s.mode = fi.Mode()
		s.uid = int(fi.Sys().(*syscall.Stat_t).Uid)
	}
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	s.names = strings.Join(names, ",")
	return s
}

func assertUntouched(t *testing.T, name, p string, before state) {
	t.Helper()
	if after := stateOf(t, p); after != before {
		t.Errorf("%s: %s changed: before %+v, after %+v", name, p, before, after)
	}
}

// privateDir is a fresh directory only the current user can enter (what
// Recall creates for its own index directory).
func privateDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "ix")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// appID reads the application_id field of an SQLite header (offset 68).
func appID(t *testing.T, p string) uint32 {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hdr := make([]byte, 100)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		t.Fatalf("read header of %s: %v", p, err)
	}
	return binary.BigEndian.Uint32(hdr[68:72])
}

func sqliteFile(t *testing.T, p string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func openIndex(t testing.TB, p string) *Index {
	t.Helper()
	ix, err := Open(context.Background(), p)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	return ix
}

// A new index carries Recall's application_id from its first byte on, so a
// later open can tell it from every other SQLite file; it is private.
func TestNewIndexIsMarkedAndPrivate(t *testing.T) {
	p := filepath.Join(privateDir(t), "i.db")
	ix := openIndex(t, p)
	ix.Close()
	if got := appID(t, p); got != 0x52434c4c {
		t.Errorf("application_id = %#x, want %#x (\"RCLL\")", got, 0x52434c4c)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %o, want 600", fi.Mode().Perm())
	}
	// Reopening is not a refusal.
	openIndex(t, p).Close()
}

// Files that are not provably Recall's are refused with an error naming
// them, and stay byte-identical with nothing created beside them.
func TestForeignFilesLeftAlone(t *testing.T) {
	ourTables := []string{}
	for _, s := range schema {
		if strings.HasPrefix(s, "CREATE TABLE") || strings.HasPrefix(s, "CREATE VIRTUAL TABLE") {
			ourTables = append(ourTables, s)
		}
	}
	cases := map[string]func(p string){
		"text file": func(p string) {
			os.WriteFile(p, []byte("my notes: buy milk; this is not a database\n"), 0o600)
		},
		"sqlite with a meta(key,value) table": func(p string) {
			sqliteFile(t, p, `CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)`, `INSERT INTO meta VALUES('owner','someone')`,
				`CREATE TABLE ledger(id INTEGER PRIMARY KEY, amount INTEGER)`, `INSERT INTO ledger(amount) VALUES(42)`)
		},
		"other sqlite": func(p string) {
			sqliteFile(t, p, `CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)`, `INSERT INTO notes(body) VALUES('hello')`)
		},
		"opencode database": func(p string) {
			sqliteFile(t, p, `PRAGMA journal_mode=wal`, `CREATE TABLE session(id TEXT PRIMARY KEY, data TEXT)`,
				`CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, data TEXT)`,
				`CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, data TEXT)`, `INSERT INTO session VALUES('ses_1','{}')`)
		},
		"another application's id on our layout": func(p string) {
			sqliteFile(t, p, append([]string{`PRAGMA application_id = 1179210545`}, append(ourTables,
				`INSERT INTO meta VALUES('schema_version','4'),('cursor_key','00112233445566778899aabbccddeeff')`)...)...)
		},
		"our meta keys beside a foreign table": func(p string) {
			sqliteFile(t, p, append(ourTables, `CREATE TABLE payroll(name TEXT, salary INTEGER)`,
				`INSERT INTO meta VALUES('schema_version','4'),('cursor_key','00112233445566778899aabbccddeeff')`)...)
		},
	}
	for name, make := range cases {
		p := filepath.Join(privateDir(t), "target.db")
		make(p)
		before := stateOf(t, p)
		ix, err := Open(context.Background(), p)
		if err == nil {
			ix.Close()
			t.Errorf("%s: opened as an index", name)
		} else if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a Recall index") {
			t.Errorf("%s: error should name %s and say it is not a Recall index: %v", name, p, err)
		}
		assertUntouched(t, name, p, before)
	}
}

// An index made before the application_id existed (id 0, exactly our
// tables and meta keys) is adopted and stamped; its cursor key survives,
// so cursors handed out before the upgrade still resolve.
func TestLegacyIndexAdopted(t *testing.T) {
	p := filepath.Join(privateDir(t), "old.db")
	ix := openIndex(t, p)
	key, _ := ix.Meta(context.Background(), "cursor_key")
	// A pre-mark index has only legacyTables (doc_lens came with schema 8).
	for _, q := range []string{`DROP TRIGGER docs_drop_lens`, `DROP TABLE doc_lens`, `UPDATE meta SET value = '7' WHERE key = 'schema_version'`} {
		if _, err := ix.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ix.db.Exec(`PRAGMA application_id = 0`)
	ix.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	ix.Close()
	if appID(t, p) != 0 {
		t.Fatal("could not make a legacy index")
	}
	ix = openIndex(t, p)
	defer ix.Close()
	if got, _ := ix.Meta(context.Background(), "cursor_key"); got != key || key == "" {
		t.Errorf("cursor key %q, want the old %q", got, key)
	}
	if got := appID(t, p); got != 0x52434c4c {
		t.Errorf("adopted index not stamped: application_id %#x", got)
	}
}

// An index readable by others, or in a directory others can write, is
// refused with the command that fixes it, and its mode is left as it was.
func TestUnsafeModesRefused(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []os.FileMode{0o644, 0o640, 0o606} {
		p := filepath.Join(privateDir(t), "i.db")
		openIndex(t, p).Close()
		os.Chmod(p, mode)
		before := stateOf(t, p)
		ix, err := Open(ctx, p)
		if err == nil {
			ix.Close()
			t.Errorf("mode %o: opened", mode)
		} else if !strings.Contains(err.Error(), "chmod 600 "+p) {
			t.Errorf("mode %o: error should say `chmod 600 %s`: %v", mode, p, err)
		}
		assertUntouched(t, fmt.Sprintf("mode %o", mode), p, before)
	}
	for _, mode := range []os.FileMode{0o777, 0o770, 0o733} {
		dir := privateDir(t)
		p := filepath.Join(dir, "i.db")
		openIndex(t, p).Close()
		os.Chmod(dir, mode)
		before := stateOf(t, p)
		ix, err := Open(ctx, p)
		if err == nil {
			ix.Close()
			t.Errorf("dir mode %o: opened", mode)
		} else if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "chmod 700 "+dir) {
			t.Errorf("dir mode %o: error should name %s and say `chmod 700 %s`: %v", mode, dir, dir, err)
		}
		assertUntouched(t, fmt.Sprintf("dir mode %o", mode), p, before)
		if fi, _ := os.Stat(dir); fi.Mode().Perm() != mode {
			t.Errorf("dir mode changed to %o", fi.Mode().Perm())
		}
	}
}

// A symlink as the index path is refused: Recall never follows it (old
// code chmod'ed the link's target to 0600).
func TestSymlinkedIndexRefused(t *testing.T) {
	dir := privateDir(t)
	target := filepath.Join(t.TempDir(), "shared.db")
	openIndex(t, target).Close()
	os.Chmod(target, 0o644)
	link := filepath.Join(dir, "i.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	before, lbefore := stateOf(t, target), stateOf(t, link)
	ix, err := Open(context.Background(), link)
	if err == nil {
		ix.Close()
		t.Fatal("opened through a symlink")
	}
	if !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("error should name %s and say it is a symbolic link: %v", link, err)
	}
	assertUntouched(t, "target", target, before)
	assertUntouched(t, "link", link, lbefore)
}

// Another user's file at the index path (pre-created in a shared place, or
// left there) is refused: adopting it would let that user read the history.
func TestOtherUsersFilesRefused(t *testing.T) {
	needRoot(t)
	ctx := context.Background()

	// A file pre-created by another user, world-writable.
	dir := privateDir(t)
	p := filepath.Join(dir, "i.db")
	os.WriteFile(p, nil, 0o666)
	os.Chmod(p, 0o666)
	os.Chown(p, nobody, nobody)
	before := stateOf(t, p)
	if ix, err := Open(ctx, p); err == nil {
		ix.Close()
		t.Error("adopted another user's empty file")
	} else if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "uid 65534") || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("error should name %s, its owner and say to remove it: %v", p, err)
	}
	assertUntouched(t, "pre-created file", p, before)

	// A real index that belongs to someone else.
	p = filepath.Join(privateDir(t), "i.db")
	openIndex(t, p).Close()
	os.Chown(p, nobody, nobody)
	before = stateOf(t, p)
	if ix, err := Open(ctx, p); err == nil {
		ix.Close()
		t.Error("opened another user's index")
	}
	assertUntouched(t, "other user's index", p, before)

	// Our index in a directory that belongs to someone else.
	dir = privateDir(t)
	p = filepath.Join(dir, "i.db")
	openIndex(t, p).Close()
	os.Chown(dir, nobody, nobody)
	before = stateOf(t, p)
	if ix, err := Open(ctx, p); err == nil {
		ix.Close()
		t.Error("opened an index in another user's directory")
	} else if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("error should name %s and its owner: %v", dir, err)
	}
	assertUntouched(t, "index in other user's dir", p, before)

	// A -wal planted beside our index by someone else.
	p = filepath.Join(privateDir(t), "i.db")
	openIndex(t, p).Close()
	os.WriteFile(p+"-wal", nil, 0o666)
	os.Chown(p+"-wal", nobody, nobody)
	before = stateOf(t, p)
	if ix, err := Open(ctx, p); err == nil {
		ix.Close()
		t.Error("opened an index whose -wal belongs to someone else")
	} else if !strings.Contains(err.Error(), p+"-wal") {
		t.Errorf("error should name %s-wal: %v", p, err)
	}
	assertUntouched(t, "planted -wal", p, before)
}

// The writer lock file follows the same rules: never through a symlink,
// never another user's or a world-readable file.
func TestLockFileRefusals(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(privateDir(t), "i.db")
	openIndex(t, p).Close()

	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("keep"), 0o644)
	os.Remove(p + ".lock")
	if err := os.Symlink(target, p+".lock"); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, target)
	if l, err := LockWriter(ctx, p); err == nil {
		l.Unlock()
		t.Error("locked through a symlink")
	} else if !strings.Contains(err.Error(), p+".lock") {
		t.Errorf("error should name %s.lock: %v", p, err)
	}
	assertUntouched(t, "lock symlink target", target, before)

	os.Remove(p + ".lock")
	os.WriteFile(p+".lock", nil, 0o644)
	os.Chmod(p+".lock", 0o644)
	if l, err := LockWriter(ctx, p); err == nil {
		l.Unlock()
		t.Error("took a world-readable lock file")
	} else if !strings.Contains(err.Error(), "chmod 600 "+p+".lock") {
		t.Errorf("error should say chmod 600 %s.lock: %v", p, err)
	}

	if os.Geteuid() == 0 {
		os.Chmod(p+".lock", 0o600)
		os.Chown(p+".lock", nobody, nobody)
		if l, err := LockWriter(ctx, p); err == nil {
			l.Unlock()
			t.Error("took another user's lock file")
		}
	}
}

// An empty file (what an interrupted create leaves) holds nothing to lose:
// it becomes the index. A file with Recall's mark but tables Recall did
// not make is refused like any foreign file.
func TestEmptyAndMarkedFiles(t *testing.T) {
	p := filepath.Join(privateDir(t), "i.db")
	os.WriteFile(p, nil, 0o600)
	openIndex(t, p).Close()
	if appID(t, p) != ApplicationID {
		t.Error("an empty file did not become a marked index")
	}

	p = filepath.Join(privateDir(t), "marked.db")
	sqliteFile(t, p, fmt.Sprintf(`PRAGMA application_id = %d`, ApplicationID), `CREATE TABLE notes(body TEXT)`)
	os.Chmod(p, 0o600)
	before := stateOf(t, p)
	if ix, err := Open(context.Background(), p); err == nil {
		ix.Close()
		t.Error("opened a marked file holding someone else's tables")
	} else if !strings.Contains(err.Error(), "not a Recall index") {
		t.Errorf("want a not-a-Recall-index refusal, got %v", err)
	}
	assertUntouched(t, "marked file with foreign tables", p, before)
}

// MoveAside keeps the damaged bytes under a new name and refuses a file
// that is not Recall's.
func TestMoveAside(t *testing.T) {
	dir := privateDir(t)
	p := filepath.Join(dir, "i.db")
	openIndex(t, p).Close()
	want := stateOf(t, p).hash
	moved, err := MoveAside(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(moved, p+".damaged-") || stateOf(t, moved).hash != want {
		t.Errorf("moved to %s (hash %s), want %s.damaged-* with the same bytes", moved, stateOf(t, moved).hash, p)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", p, err)
	}
	// A second damage within the same second gets its own name.
	openIndex(t, p).Close()
	again, err := MoveAside(p)
	if err != nil || again == moved {
		t.Errorf("second move: %s, %v (first %s)", again, err, moved)
	}

	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("mine"), 0o600)
	if _, err := MoveAside(text); err == nil {
		t.Error("moved a file that is not an index")
	}
	if b, _ := os.ReadFile(text); string(b) != "mine" {
		t.Error("the foreign file changed")
	}
}
