//go:build unix

package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The index may never be the history itself, one of its WAL files, or a
// file in OpenCode's data directory: Open refuses before touching anything,
// and the history stays byte-identical with nothing new beside it.
func TestIndexPathMayNotBeTheHistory(t *testing.T) {
	data := t.TempDir()
	ocDir := filepath.Join(data, "opencode")
	os.MkdirAll(ocDir, 0o700)
	found := filepath.Join(ocDir, "opencode.db")
	b, err := os.ReadFile(fixture(t, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(found, b, 0o600)
	env := func(k string) string {
		if k == "XDG_DATA_HOME" {
			return data
		}
		return ""
	}
	explicit := fixture(t, "v1")
	linkDir := t.TempDir()
	symlink := filepath.Join(linkDir, "link.db")
	os.Symlink(explicit, symlink)
	hardlink := filepath.Join(linkDir, "hard.db")
	if err := os.Link(explicit, hardlink); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, db, index string
	}{
		{"the history", explicit, explicit},
		{"its -wal", explicit, explicit + "-wal"},
		{"its -shm", explicit, explicit + "-shm"},
		{"beside the history", explicit, filepath.Join(filepath.Dir(explicit), "recall.db")},
		{"a symlink to the history", explicit, symlink},
		{"a hard link to the history", explicit, hardlink},
		{"the found history", "", found},
		{"inside OpenCode's data dir", "", filepath.Join(ocDir, "recall", "index.db")},
		{"inside OpenCode's data dir, with --db", explicit, filepath.Join(ocDir, "index.db")},
		{"a path through a symlink into OpenCode's data dir", explicit, filepath.Join(linkDir, "oc", "index.db")},
	}
	os.Symlink(ocDir, filepath.Join(linkDir, "oc"))
	// A copy of an OpenCode data dir elsewhere is one too.
	copied := filepath.Join(t.TempDir(), "backup", "opencode", "opencode.db")
	os.MkdirAll(filepath.Dir(copied), 0o700)
	os.WriteFile(copied, b, 0o600)
	cases = append(cases, struct{ name, db, index string }{"inside a copied OpenCode data dir", copied,
		filepath.Join(filepath.Dir(copied), "recall", "index.db")})
	for _, c := range cases {
		db := c.db
		if db == "" {
			db = found
		}
		hash, names, ocNames := hashFile(t, db), listDir(t, filepath.Dir(db)), listDir(t, ocDir)
		e, err := Open(context.Background(), Options{DBPath: c.db, IndexPath: c.index, Getenv: env, NoDemo: true})
		if err == nil {
			e.Close()
			t.Errorf("%s: opened %s as the index", c.name, c.index)
		} else if !strings.Contains(err.Error(), c.index) || !strings.Contains(err.Error(), "OpenCode") {
			t.Errorf("%s: error should name %s and say why (OpenCode's files): %v", c.name, c.index, err)
		}
		if hashFile(t, db) != hash || listDir(t, filepath.Dir(db)) != names || listDir(t, ocDir) != ocNames {
			t.Errorf("%s: the history or its directory changed", c.name)
		}
	}
	// The default index, one in a directory of its own, and one below the
	// folder of a history that is not in OpenCode's layout are fine.
	home := t.TempDir()
	loose := filepath.Join(home, "opencode.db")
	os.WriteFile(loose, b, 0o600)
	for _, ix := range []string{filepath.Join(home, ".local", "share", "recall", "index", "i.db"), filepath.Join(home, "recall", "i.db")} {
		e, err := Open(context.Background(), Options{DBPath: loose, IndexPath: ix, Getenv: env})
		if err != nil {
			t.Fatalf("index %s under the folder of %s: %v", ix, loose, err)
		}
		e.Close()
	}
	e, err := Open(context.Background(), Options{DBPath: explicit, IndexPath: filepath.Join(t.TempDir(), "i.db"), Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	e, err = Open(context.Background(), Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
}
