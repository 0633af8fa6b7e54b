//go:build unix

package commands

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// fileState is a path's bytes, mode and owner plus the names beside it: a
// refused index must leave all of them as they were.
func fileState(t *testing.T, p string) string {
	t.Helper()
	var b strings.Builder
	if data, err := os.ReadFile(p); err == nil {
		fmt.Fprintf(&b, "%x ", sha256.Sum256(data))
	}
	if fi, err := os.Lstat(p); err == nil {
		fmt.Fprintf(&b, "%v uid=%d ", fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	b.WriteString(strings.Join(names, ","))
	return b.String()
}

// refused runs a command with --index ix and checks the refusal: exit 1, a
// message naming ix and each of want, and every watched path unchanged.
func refused(t *testing.T, name, db, ix string, want []string, watch ...string) {
	t.Helper()
	watch = append(watch, ix)
	before := map[string]string{}
	for _, p := range watch {
		before[p] = fileState(t, p)
	}
	r := cli(t, "search", "--db", db, "--index", ix, "--json", "invoice")
	if r.code != ExitFailure {
		t.Errorf("%s: exit %d, want %d (stderr %q)", name, r.code, ExitFailure, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("%s: stdout should be empty on a refusal: %.120q", name, r.stdout)
	}
	for _, w := range append(want, ix) {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("%s: stderr should contain %q: %q", name, w, r.stderr)
		}
	}
	for _, p := range watch {
		if got := fileState(t, p); got != before[p] {
			t.Errorf("%s: %s changed:\n before %s\n after  %s", name, p, before[p], got)
		}
	}
}

func privateDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "ix")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// Every file that is not provably Recall's index is refused from the CLI
// and left exactly as it was.
func TestCLIRefusesForeignIndexPaths(t *testing.T) {
	db := fixtureDB(t)

	text := filepath.Join(privateDir(t), "notes.txt")
	os.WriteFile(text, []byte("my notes, not a database\n"), 0o600)
	refused(t, "text file", db, text, []string{"not a Recall index"})

	foreign := filepath.Join(privateDir(t), "app.db")
	w, _ := sql.Open("sqlite", foreign)
	w.Exec(`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)`)
	w.Exec(`INSERT INTO meta VALUES('schema_version', '7')`)
	w.Close()
	os.Chmod(foreign, 0o600)
	refused(t, "foreign sqlite with meta", db, foreign, []string{"not a Recall index"})

	refused(t, "--index X --db X", db, db, []string{"OpenCode"})
	refused(t, "the history's -wal", db, db+"-wal", []string{"OpenCode"}, db)

	other := filepath.Join(privateDir(t), "other-opencode.db")
	b, _ := os.ReadFile(db)
	os.WriteFile(other, b, 0o600)
	refused(t, "another OpenCode database", db, other, []string{"not a Recall index"})
}

// An index others can read, a symlink, or a directory others can write is
// refused with the exact command that fixes it; nothing is chmod'ed.
func TestCLIRefusesUnsafeIndexPaths(t *testing.T) {
	db := fixtureDB(t)
	dir := privateDir(t)
	ix := filepath.Join(dir, "i.db")
	if r := cli(t, "sync", "--db", db, "--index", ix); r.code != 0 {
		t.Fatal(r.stderr)
	}
	os.Chmod(ix, 0o644)
	refused(t, "world-readable index", db, ix, []string{"chmod 600 " + ix})
	os.Chmod(ix, 0o600)

	os.Chmod(dir, 0o777)
	refused(t, "world-writable directory", db, ix, []string{"chmod 700 " + dir})
	os.Chmod(dir, 0o700)

	target := filepath.Join(t.TempDir(), "shared.db")
	os.WriteFile(target, nil, 0o644)
	link := filepath.Join(privateDir(t), "link.db")
	os.Symlink(target, link)
	refused(t, "symlink", db, link, []string{"symbolic link"}, target)

	if os.Geteuid() != 0 {
		t.Log("the other-user cases need root (chown); skipped them")
		return
	}
	// The shared-directory attack: another user pre-creates the index
	// world-writable and waits for Recall to fill it.
	planted := filepath.Join(privateDir(t), "i.db")
	os.WriteFile(planted, nil, 0o666)
	os.Chmod(planted, 0o666)
	os.Chown(planted, 65534, 65534)
	refused(t, "pre-created by another user", db, planted, []string{"uid 65534", "remove it"})
}
