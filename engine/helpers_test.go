package engine

import (
	"context"
	"database/sql"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/internal/historytest"
)

// fixture copies a committed OpenCode fixture (testdata/opencode/<name>)
// into a temp dir and returns the path to open: the database, or the data
// dir for the legacy JSON tree.
func fixture(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join("..", "testdata", "opencode", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatalf("copy fixture %s: %v", name, err)
	}
	if name == "legacy" {
		return dst
	}
	return filepath.Join(dst, "opencode.db")
}

// openFixture opens an engine over a fixture with a fresh index and syncs.
func openFixture(t testing.TB, name string) *Engine {
	t.Helper()
	return openAt(t, fixture(t, name), filepath.Join(t.TempDir(), "index.db"))
}

func openAt(t testing.TB, db, index string) *Engine {
	t.Helper()
	return openSynced(t, Options{DBPath: db, IndexPath: index, Getenv: func(string) string { return "" }})
}

// openSynced opens an engine with opts, closed when the test ends, and
// syncs it once.
func openSynced(t testing.TB, opts Options) *Engine {
	t.Helper()
	e, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatalf("sync: %v", err)
	}
	return e
}

func search(t testing.TB, e *Engine, q string, mod ...func(*SearchParams)) SearchResult {
	t.Helper()
	p := SearchParams{Query: q, Limit: 10}
	for _, m := range mod {
		m(&p)
	}
	res, err := e.Search(context.Background(), p)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res
}

// mustWrite writes to the history through w as OpenCode does (query and an
// event of session sid of type typ, in one transaction).
func mustWrite(t testing.TB, w *sql.DB, sid, typ, query string, args ...any) {
	t.Helper()
	if err := historytest.Write(w, sid, typ, query, args...); err != nil {
		t.Fatal(err)
	}
}

// rawIndex is a second SQL handle on e's index file, for tests that look
// at what the index stores (the engine itself reaches it only through
// package index's methods).
func rawIndex(t testing.TB, e *Engine) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: e.IndexPath(), RawQuery: "_pragma=busy_timeout(10000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatalf("open index %s: %v", e.IndexPath(), err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// failWriteStart makes the nth write transaction a sync starts fail with
// context.Canceled, as a Ctrl-C landing between two commits does; calls
// counts the starts, and heal (or the test's end) lets writes start again.
func failWriteStart(t testing.TB, n int) (calls *int, heal func()) {
	t.Helper()
	orig := beginWrite
	heal = func() { beginWrite = orig }
	t.Cleanup(heal)
	calls = new(int)
	beginWrite = func(ctx context.Context, ix *index.Index, bulk bool) (*index.Writer, error) {
		if *calls++; *calls == n {
			return nil, context.Canceled
		}
		return orig(ctx, ix, bulk)
	}
	return calls, heal
}
