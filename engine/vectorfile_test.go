package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A hybrid search through the CLI is one process per search: the vectors
// it would otherwise read out of SQLite, quantise and intern on every run
// (most of a hybrid CLI search, issue 15) come from a flat file beside the
// index that the first full load writes and later processes map.

// embeddedEngine opens an engine over the v1 fixture with every document
// embedded, and returns its paths for other engines to reopen.
func embeddedEngine(t *testing.T) (db, ix, store string) {
	t.Helper()
	store = t.TempDir()
	installModel(t, store, 1, "")
	db, ix = fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db")
	e := openSemantic(t, db, ix, store)
	if _, err := e.Embed(context.Background(), EmbedOptions{}); err != nil {
		t.Fatal(err)
	}
	return db, ix, store
}

// hitKeys is what a search found, in order: the fields two loads of the
// same vectors must agree on.
func hitKeys(res SearchResult) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.SessionID+"/"+h.PartID+"/"+h.Kind)
	}
	return out
}

func hybridSearch(t *testing.T, e *Engine, q string) SearchResult {
	t.Helper()
	res := search(t, e, q, func(p *SearchParams) { p.Mode = "hybrid" })
	if res.Mode != "hybrid" || len(res.Hits) == 0 {
		t.Fatalf("hybrid %q: mode %q, %d hits", q, res.Mode, len(res.Hits))
	}
	return res
}

func mappedVectors(e *Engine) bool {
	for _, sh := range e.shards {
		sh.vec.mu.Lock()
		lv := sh.vec.vecs
		sh.vec.mu.Unlock()
		if lv == nil || !lv.set.Mapped() {
			return false
		}
	}
	return true
}

func TestSecondProcessMapsTheVectorFile(t *testing.T) {
	db, ix, store := embeddedEngine(t)
	first := openSemantic(t, db, ix, store)
	want := hitKeys(hybridSearch(t, first, "cache"))
	if mappedVectors(first) {
		t.Fatal("the first load mapped a vector file that no process had written")
	}
	fi, err := os.Lstat(ix + "-vectors")
	if err != nil {
		t.Fatalf("the first full load wrote no vector file beside the index: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("vector file mode %v, want 0600 like the index", fi.Mode().Perm())
	}
	second := openSemantic(t, db, ix, store)
	got := hitKeys(hybridSearch(t, second, "cache"))
	if !mappedVectors(second) {
		t.Fatal("a second engine read the vectors from SQLite again instead of mapping the file")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mapped vectors rank otherwise:\n got %v\nwant %v", got, want)
	}
	// Filters and the coverage count read the mapped set's fields.
	st, err := second.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Semantic.Embedded == 0 || st.Semantic.Embedded != st.Semantic.Total {
		t.Errorf("status after a mapped load: %+v", st.Semantic)
	}
}

// A file that no longer matches the index (more vectors since, a damaged
// byte) is never used: the vectors come from the index, and the file is
// rewritten.
func TestStaleOrDamagedVectorFileIsRebuilt(t *testing.T) {
	db, ix, store := embeddedEngine(t)
	want := hitKeys(hybridSearch(t, openSemantic(t, db, ix, store), "cache"))
	path := ix + "-vectors"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[200] ^= 0x5a // inside the string tables and fields under the CRC
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e := openSemantic(t, db, ix, store)
	if got := hitKeys(hybridSearch(t, e, "cache")); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a damaged vector file:\n got %v\nwant %v", got, want)
	}
	if mappedVectors(e) {
		t.Fatal("a damaged vector file was mapped")
	}
	if again, _ := os.ReadFile(path); bytes.Equal(again, b) {
		t.Fatal("the damaged vector file was not rewritten")
	}
	if !mappedVectors(func() *Engine { e := openSemantic(t, db, ix, store); hybridSearch(t, e, "cache"); return e }()) {
		t.Fatal("the rewritten vector file is not used")
	}
	// Stale: the index's vectors change (reset by another model's
	// embedding would do; a generation bump is what any change makes).
	raw := rawIndex(t, e)
	if _, err := raw.Exec(`UPDATE meta SET value = value + 1 WHERE key = 'vector_gen'`); err != nil {
		t.Fatal(err)
	}
	stale := openSemantic(t, db, ix, store)
	hybridSearch(t, stale, "cache")
	if mappedVectors(stale) {
		t.Fatal("a vector file of an older vector generation was mapped")
	}
}

// A file at the vector file's path that Recall cannot prove it wrote (not
// its format, a symlink) is neither read nor replaced; search still runs.
func TestForeignVectorFileLeftAlone(t *testing.T) {
	db, ix, store := embeddedEngine(t)
	path := ix + "-vectors"
	foreign := []byte("my notes, not Recall's\n")
	if err := os.WriteFile(path, foreign, 0o600); err != nil {
		t.Fatal(err)
	}
	e := openSemantic(t, db, ix, store)
	hybridSearch(t, e, "cache")
	if got, _ := os.ReadFile(path); !bytes.Equal(got, foreign) {
		t.Fatalf("a foreign file at %s was replaced", path)
	}
	os.Remove(path)
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, foreign, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	e2 := openSemantic(t, db, ix, store)
	hybridSearch(t, e2, "cache")
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink at %s was replaced (%v)", path, err)
	}
	if got, _ := os.ReadFile(target); !bytes.Equal(got, foreign) {
		t.Fatal("a write went through the symlink")
	}
}

// Forget changes neither the vector generation nor synced_at; the vector
// file must not keep the forgotten session's vectors and ids for the next
// process to map.
func TestForgetDropsTheVectorFile(t *testing.T) {
	db, ix, store := embeddedEngine(t)
	e := openSemantic(t, db, ix, store)
	res := hybridSearch(t, e, "cache")
	victim := res.Hits[0].SessionID
	if b, err := os.ReadFile(ix + "-vectors"); err != nil || !bytes.Contains(b, []byte(victim)) {
		t.Fatalf("vector file without %s before forget (%v)", victim, err)
	}
	if _, err := e.Forget(context.Background(), victim); err != nil {
		t.Fatal(err)
	}
	for _, h := range hybridSearch(t, e, "cache").Hits {
		if h.SessionID == victim {
			t.Fatalf("forgotten session %s still found", victim)
		}
	}
	b, err := os.ReadFile(ix + "-vectors")
	if err != nil {
		t.Fatalf("no vector file rewritten after forget: %v", err)
	}
	if bytes.Contains(b, []byte(victim)) {
		t.Fatalf("the vector file still names the forgotten session %s", victim)
	}
}

// The default setup: no index path, the index where Recall keeps it under
// XDG_DATA_HOME. The vector file goes beside that index, and a second
// process maps it.
func TestVectorFileBesideTheDefaultIndex(t *testing.T) {
	store, data := t.TempDir(), t.TempDir()
	installModel(t, store, 1, "")
	db := fixture(t, "v1")
	env := dataEnv(data)
	open := func() *Engine { return openSynced(t, Options{DBPath: db, ModelDir: store, Getenv: env}) }
	first := open()
	if _, err := first.Embed(context.Background(), EmbedOptions{}); err != nil {
		t.Fatal(err)
	}
	ix := first.shards[0].ix.Path()
	if !strings.HasPrefix(ix, data) {
		t.Fatalf("the index is at %s, not under XDG_DATA_HOME %s", ix, data)
	}
	want := hitKeys(hybridSearch(t, first, "cache"))
	fi, err := os.Lstat(ix + "-vectors")
	if err != nil {
		t.Fatalf("no vector file beside the default index: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("vector file mode %v, want 0600", fi.Mode().Perm())
	}
	second := open()
	got := hitKeys(hybridSearch(t, second, "cache"))
	if !mappedVectors(second) {
		t.Fatal("a second engine on the default index did not map the vector file")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mapped vectors rank otherwise:\n got %v\nwant %v", got, want)
	}
}
