package commands

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The index and its WAL files are private to the user (0600), like
// OpenCode's own database.
func TestIndexIsPrivate(t *testing.T) {
	db, dir := fixtureDB(t), t.TempDir()
	ix := filepath.Join(dir, "sub", "i.db")
	if r := cli(t, "search", "--db", db, "--index", ix, "--json", "invoice"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	entries, _ := os.ReadDir(filepath.Dir(ix))
	for _, e := range entries {
		info, _ := e.Info()
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %o, want no group/other access", e.Name(), perm)
		}
	}
	if info, _ := os.Stat(filepath.Dir(ix)); info.Mode().Perm()&0o077 != 0 {
		t.Errorf("index dir has mode %o", info.Mode().Perm())
	}
}

// export -o writes the named file and nothing else.
func TestExportWritesOnlyTheNamedFile(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	r := cli(t, "sessions", "--db", db, "--index", ix, "--json")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	out := t.TempDir()
	sentinel := filepath.Join(out, "keep.txt")
	os.WriteFile(sentinel, []byte("mine"), 0o644)
	target := filepath.Join(out, "s.md")
	id := firstSessionID(t, r.stdout)
	if r := cli(t, "export", id, "--format", "markdown", "-o", target, "--db", db, "--index", ix); r.code != 0 {
		t.Fatal(r.stderr)
	}
	var names []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 2 || names[0] != "keep.txt" || names[1] != "s.md" {
		t.Errorf("export left %v", names)
	}
	if b, _ := os.ReadFile(sentinel); string(b) != "mine" {
		t.Error("export touched another file")
	}
	// A failed export (unknown session) creates nothing.
	bad := filepath.Join(out, "bad.md")
	if r := cli(t, "export", "ses_nope", "-o", bad, "--db", db, "--index", ix); r.code == 0 {
		t.Fatal("export of an unknown session succeeded")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Error("failed export left a file")
	}
}

// Commands that write files are not reachable over JSON-RPC.
func TestServerCannotWriteFiles(t *testing.T) {
	for _, c := range ServerCommands() {
		if c.Spec().Name == "export" {
			t.Error("export is reachable over JSON-RPC")
		}
		for _, f := range c.Fields() {
			if f.JSON == "output" || f.JSON == "file" {
				t.Errorf("%s takes an output path over JSON-RPC", c.Spec().Name)
			}
		}
	}
}

func firstSessionID(t *testing.T, stdout string) string {
	t.Helper()
	i := indexOf(stdout, `"id":"`)
	if i < 0 {
		t.Fatalf("no session in %q", stdout)
	}
	rest := stdout[i+6:]
	return rest[:indexOf(rest, `"`)]
}

func indexOf(s, sub string) int { return strings.Index(s, sub) }
