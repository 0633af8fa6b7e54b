package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/config"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/source"
)

// Several histories searched as one, tested with real OpenCode histories:
// the v1 and v2 fixtures, and v1 copied under two names (colliding ids).

// openSources opens an engine over specs (each index fresh, under dir)
// and syncs.
func openSources(t testing.TB, getenv func(string) string, specs ...SourceSpec) *Engine {
	t.Helper()
	if getenv == nil {
		getenv = noEnv
	}
	e, err := Open(context.Background(), Options{Sources: specs, Getenv: getenv})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatalf("sync: %v", err)
	}
	return e
}

// spec is a source at a fixture copy, with its own fresh index.
func spec(t testing.TB, name, fixtureName string) SourceSpec {
	return SourceSpec{Name: name, Path: fixture(t, fixtureName), Index: filepath.Join(t.TempDir(), "index.db")}
}

// twinV1 copies the v1 fixture into two folders named a and b: the same
// history on two machines.
func twinV1(t testing.TB) (a, b string) {
	t.Helper()
	root := t.TempDir()
	for _, name := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(fixture(t, "v1"), filepath.Join(root, name, "opencode.db")); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "a", "opencode.db"), filepath.Join(root, "b", "opencode.db")
}

func hitSources(hits []Hit) map[string]int {
	out := map[string]int{}
	for _, h := range hits {
		out[h.Source]++
	}
	return out
}

// One search over two histories finds each one's facts, says which source
// each hit is in, and --source keeps to the ones named.
func TestTwoHistoriesSearchAsOne(t *testing.T) {
	e := openSources(t, nil, spec(t, "laptop", "v1"), spec(t, "desktop", "v2"))
	if got := e.SourceNames(); strings.Join(got, ",") != "laptop,desktop" {
		t.Fatalf("sources %q", got)
	}
	for q, want := range map[string]string{"ERR_QUOTA_7731": "laptop", "ERR_EVICT_4410": "desktop"} {
		hits := search(t, e, q).Hits
		if len(hits) == 0 || hits[0].Source != want {
			t.Fatalf("%s: top hit %+v, want one from %s", q, hits, want)
		}
		if !strings.Contains(hits[0].URI, "source="+want) || !strings.HasPrefix(hits[0].Cursor, "c1:"+want+":") {
			t.Errorf("%s: uri %s, cursor %s; want both to name %s", q, hits[0].URI, hits[0].Cursor, want)
		}
	}
	both := search(t, e, "ERR_QUOTA_7731 ERR_EVICT_4410")
	if n := hitSources(both.Hits); n["laptop"] == 0 || n["desktop"] == 0 {
		t.Fatalf("a query matching both histories: hits by source %v", n)
	}
	only := search(t, e, "ERR_QUOTA_7731 ERR_EVICT_4410", func(p *SearchParams) { p.Filter.Sources = []string{"desktop"} })
	if n := hitSources(only.Hits); n["laptop"] != 0 || n["desktop"] == 0 {
		t.Errorf("--source desktop: hits by source %v", n)
	}
	if _, err := e.Search(context.Background(), SearchParams{Query: "x", Filter: queryFilterSources("phone")}); !errors.Is(err, ErrUnknownSource) || !strings.Contains(err.Error(), "laptop, desktop") {
		t.Errorf("an unknown source: %v", err)
	}
	// A read by cursor goes to the hit's source; the window says which.
	w, err := e.Read(context.Background(), ReadParams{Cursor: search(t, e, "ERR_EVICT_4410").Hits[0].Cursor})
	if err != nil || w.Session.Source != "desktop" || !strings.Contains(w.Text, `source="desktop"`) {
		t.Errorf("read: %v source %q", err, w.Session.Source)
	}
	// Recent activity merges both by time.
	recent := search(t, e, "", func(p *SearchParams) { p.Limit = 50; p.Group = "none" })
	if n := hitSources(recent.Hits); n["laptop"] == 0 || n["desktop"] == 0 {
		t.Errorf("recent activity by source %v", n)
	}
	for i := 1; i < len(recent.Hits); i++ {
		if recent.Hits[i].Time > recent.Hits[i-1].Time {
			t.Fatalf("recent activity out of order at %d: %s after %s", i, recent.Hits[i].Time, recent.Hits[i-1].Time)
		}
	}
}

// status lists each source with its own counts; the top level has their
// totals (what readers made for one history read).
func TestStatusListsEachSource(t *testing.T) {
	e := openSources(t, nil, spec(t, "laptop", "v1"), spec(t, "desktop", "v2"))
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Sources) != 2 || st.Sources[0].Name != "laptop" || st.Sources[1].Name != "desktop" {
		t.Fatalf("sources %+v", st.Sources)
	}
	one := openSources(t, nil, spec(t, "", "v2"))
	alone, err := one.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d := st.Sources[1]
	if d.Sessions != alone.Sessions || d.Parts != alone.Parts || d.Documents != alone.Documents || strings.Join(d.Eras, ",") != strings.Join(alone.Eras, ",") {
		t.Errorf("desktop %+v, the same history alone %+v", d, alone)
	}
	if st.Sessions != st.Sources[0].Sessions+d.Sessions || st.Documents != st.Sources[0].Documents+d.Documents {
		t.Errorf("totals %d sessions %d documents; sources %+v", st.Sessions, st.Documents, st.Sources)
	}
	if st.Source != st.Sources[0].Path || st.Freshness.SyncedAt == "" || d.Freshness.SyncedAt == "" {
		t.Errorf("top level %+v", st)
	}
	only, err := e.Status(context.Background(), "desktop")
	if err != nil || len(only.Sources) != 1 || only.Sessions != d.Sessions {
		t.Errorf("status --source desktop: %+v %v", only, err)
	}
}

// Paging the session listing across two histories returns each session
// once, in (updated desc, source, id) order, each page from limit+1 rows a
// source.
func TestSessionsPageAcrossSources(t *testing.T) {
	a, b := twinV1(t) // every updated time is in both: ties all the way
	e := openSources(t, nil, SourceSpec{Path: a, Index: filepath.Join(t.TempDir(), "a.db")}, SourceSpec{Path: b, Index: filepath.Join(t.TempDir(), "b.db")},
		spec(t, "v2", "v2"))
	all, err := e.Sessions(context.Background(), SessionsParams{Limit: MaxSessionsLimit})
	if err != nil {
		t.Fatal(err)
	}
	var paged []SessionInfo
	cursor := ""
	for page := 0; page < 50; page++ {
		res, err := e.Sessions(context.Background(), SessionsParams{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, res.Sessions...)
		if cursor = res.Next; cursor == "" {
			break
		}
	}
	key := func(s SessionInfo) string { return s.Source + "/" + s.ID }
	if len(paged) != len(all.Sessions) {
		t.Fatalf("paging gave %d sessions, one page %d", len(paged), len(all.Sessions))
	}
	seen := map[string]bool{}
	for i, s := range paged {
		if seen[key(s)] {
			t.Fatalf("%s listed twice", key(s))
		}
		seen[key(s)] = true
		if key(s) != key(all.Sessions[i]) {
			t.Fatalf("page order differs at %d: %s, one page %s", i, key(s), key(all.Sessions[i]))
		}
	}
	bySource := map[string]int{}
	for _, s := range all.Sessions {
		bySource[s.Source]++
	}
	if bySource["a"] == 0 || bySource["a"] != bySource["b"] || bySource["v2"] == 0 {
		t.Errorf("sessions by source %v", bySource)
	}
	sorted := sort.SliceIsSorted(all.Sessions, func(i, j int) bool {
		x, y := all.Sessions[i], all.Sessions[j]
		if x.Updated != y.Updated {
			return x.Updated > y.Updated
		}
		if x.Source != y.Source {
			return x.Source < y.Source
		}
		return x.ID < y.ID
	})
	if !sorted {
		t.Error("the listing is not in (updated desc, source, id) order")
	}
	// A fuzzy filter merges every source's titles.
	f, err := e.Sessions(context.Background(), SessionsParams{Filter: "invoice rounding", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if n := map[string]int{}; len(f.Sessions) > 0 {
		for _, s := range f.Sessions {
			n[s.Source]++
		}
		if n["a"] == 0 || n["a"] != n["b"] {
			t.Errorf("filtered sessions by source %v", n)
		}
	} else {
		t.Error("the filter found nothing")
	}
}

// The same history under two names: every session is there twice,
// distinct by source; cursors read from their own source; a bare id reads
// from the first source and says so; forget of an id both hold asks which.
func TestCollidingIDsStayDistinct(t *testing.T) {
	a, b := twinV1(t)
	e := openSources(t, nil, SourceSpec{Path: a, Index: filepath.Join(t.TempDir(), "a.db")}, SourceSpec{Path: b, Index: filepath.Join(t.TempDir(), "b.db")})
	if got := strings.Join(e.SourceNames(), ","); got != "a,b" {
		t.Fatalf("derived names %q, want a,b", got)
	}
	ctx := context.Background()
	// One hit per family: the same family in two sources is two families.
	hits := search(t, e, "ERR_QUOTA_7731", func(p *SearchParams) { p.PerSession = 1 }).Hits
	if n := hitSources(hits); n["a"] != 1 || n["b"] != 1 {
		t.Fatalf("hits by source %v; want the one fact once in each", n)
	}
	if hits[0].SessionID != hits[1].SessionID || hits[0].Cursor == hits[1].Cursor {
		t.Fatalf("the twins: %+v", hits)
	}
	for _, h := range hits {
		w, err := e.Read(ctx, ReadParams{Cursor: h.Cursor})
		if err != nil || w.Session.Source != h.Source || w.Session.ID != h.SessionID {
			t.Errorf("read %s's cursor: %v, session from %q", h.Source, err, w.Session.Source)
		}
	}
	id := hits[0].SessionID
	w, err := e.Read(ctx, ReadParams{Cursor: id})
	if err != nil || w.Session.Source != "a" {
		t.Errorf("a bare session id: %v, from %q; want the first source, a", err, w.Session.Source)
	}
	if w, err := e.Read(ctx, ReadParams{Cursor: id, Source: "b"}); err != nil || w.Session.Source != "b" {
		t.Errorf("a bare id with --source b: %v, from %q", err, w.Session.Source)
	}
	if pv, err := e.Lookup(ctx, hits[0].PartID); err != nil || pv.Session.Source != "a" || !strings.HasPrefix(pv.Cursor, "c1:a:") {
		t.Errorf("hover on a part both hold: %+v %v", pv, err)
	}
	var out strings.Builder
	if err := e.Export(ctx, ExportParams{SessionID: id, Source: "b"}, &out); err != nil || !strings.Contains(out.String(), `source="b"`) {
		t.Errorf("export --source b: %v", err)
	}
	if _, err := e.Forget(ctx, id); !errors.Is(err, ErrAmbiguousID) || !strings.Contains(err.Error(), "--source") {
		t.Fatalf("forget of an id both hold: %v", err)
	}
	res, err := e.Forget(ctx, id, "b")
	if err != nil || res.Source != "b" {
		t.Fatalf("forget --source b: %+v %v", res, err)
	}
	if n := hitSources(search(t, e, "ERR_QUOTA_7731").Hits); n["a"] != 1 || n["b"] != 0 {
		t.Errorf("after forgetting it in b: hits by source %v", n)
	}
}

func queryFilterSources(names ...string) query.Filter { return query.Filter{Sources: names} }

// A configured source whose history is missing is a notice, not an error:
// the others answer; once the history appears, a sync reads it.
func TestMissingConfiguredSourceDegrades(t *testing.T) {
	v1 := fixture(t, "v1")
	later := filepath.Join(t.TempDir(), "later", "opencode.db")
	data := t.TempDir()
	cfg := &config.Config{Path: "config.toml", Sources: []config.Source{{Name: "here", Path: v1}, {Name: "later", Path: later}}}
	e, err := Open(context.Background(), Options{Config: cfg, Getenv: dataEnv(data)})
	if err != nil {
		t.Fatalf("open with a missing configured source: %v", err)
	}
	defer e.Close()
	if n := strings.Join(e.Notices(), "\n"); !strings.Contains(n, `source "later": no OpenCode history at `+later) {
		t.Errorf("notices %q", n)
	}
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil || res.Added == 0 || len(res.Sources) != 2 || !res.Sources[1].Missing {
		t.Fatalf("sync: %+v %v", res, err)
	}
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 || hits[0].Source != "here" {
		t.Errorf("the present source did not answer: %+v", hits)
	}
	st, err := e.Status(context.Background())
	if err != nil || st.Sources[1].Error == "" {
		t.Errorf("status of the missing source: %+v %v", st.Sources, err)
	}
	fp := e.SourceFingerprint()
	os.MkdirAll(filepath.Dir(later), 0o755)
	if err := os.Rename(fixture(t, "v2"), later); err != nil {
		t.Fatal(err)
	}
	if e.SourceFingerprint() == fp {
		t.Error("the fingerprint did not change when the history appeared (a watcher would not sync)")
	}
	if res, err := e.Sync(context.Background(), SyncOptions{}); err != nil || res.Sources[1].Added == 0 {
		t.Fatalf("sync once it appeared: %+v %v", res, err)
	}
	if hits := search(t, e, "ERR_EVICT_4410").Hits; len(hits) == 0 || hits[0].Source != "later" {
		t.Errorf("the history that appeared is not searched: %+v", hits)
	}
}

// An explicit --db that does not exist stays an error, as with one history.
func TestMissingExplicitSourceFails(t *testing.T) {
	_, err := Open(context.Background(), Options{Sources: []SourceSpec{{Path: fixture(t, "v1")}, {Path: filepath.Join(t.TempDir(), "none.db")}}, Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "none.db") {
		t.Fatalf("got %v", err)
	}
}

// One history locked by a writer before its first sync: the others are
// synced and answer, and a notice names the locked one.
func TestLockedSourceDegradesToANotice(t *testing.T) {
	locked := spec(t, "busy", "v2")
	release := holdLock(t, locked.Path)
	e, err := Open(context.Background(), Options{Sources: []SourceSpec{spec(t, "free", "v1"), locked}, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatalf("one locked source failed the sync: %v", err)
	}
	if res.Sources[0].Added == 0 || res.Sources[1].Error == "" || !strings.Contains(strings.Join(res.Notices, "\n"), `source "busy"`) {
		t.Errorf("sync %+v", res)
	}
	if hits := search(t, e, "ERR_QUOTA_7731").Hits; len(hits) == 0 {
		t.Error("the free source does not answer")
	}
	release()
	if res, err := e.Sync(context.Background(), SyncOptions{}); err != nil || res.Sources[1].Added == 0 {
		t.Errorf("sync after the lock: %+v %v", res, err)
	}
}

// A cursor of a source that is not open any more says so and names the
// open ones.
func TestCursorOfASourceGone(t *testing.T) {
	laptop, desktop := spec(t, "laptop", "v1"), spec(t, "desktop", "v2")
	data := t.TempDir()
	e := openSources(t, dataEnv(data), laptop, desktop)
	c := search(t, e, "ERR_EVICT_4410").Hits[0].Cursor
	e.Close()
	only := openSources(t, dataEnv(data), laptop)
	_, err := only.Read(context.Background(), ReadParams{Cursor: c})
	if !errors.Is(err, ErrBadCursor) || !strings.Contains(err.Error(), `names source "desktop", which is not open (open sources: laptop)`) {
		t.Fatalf("got %v", err)
	}
}

// Adding a source never rebuilds another's index: the first one's sync is
// idle, its index file the same; a damaged index is rebuilt alone.
func TestSourcesKeepTheirOwnIndexes(t *testing.T) {
	laptop, desktop := spec(t, "laptop", "v1"), spec(t, "desktop", "v2")
	data := t.TempDir()
	first := openSources(t, dataEnv(data), laptop)
	first.Close()
	before, _ := os.Stat(laptop.Index)
	e, err := Open(context.Background(), Options{Sources: []SourceSpec{laptop, desktop}, Getenv: dataEnv(data)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil || !res.Sources[0].Idle || res.Sources[1].Added == 0 {
		t.Fatalf("sync after adding a source: %+v %v", res, err)
	}
	if _, err := e.RebuildIndex(context.Background(), "desktop"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(laptop.Index)
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("laptop's index was rewritten by another source's add or rebuild")
	}
	if hits := search(t, e, "ERR_EVICT_4410").Hits; len(hits) == 0 {
		t.Error("the rebuilt source does not answer")
	}
}

// Options that cannot work together are refused before anything opens.
func TestSourceOptionsRefused(t *testing.T) {
	v1 := fixture(t, "v1")
	v2 := fixture(t, "v2")
	for name, tc := range map[string]struct {
		opts Options
		want string
	}{
		"--index with two":   {Options{Sources: []SourceSpec{{Path: v1}, {Path: v2}}, IndexPath: filepath.Join(t.TempDir(), "i.db")}, "set index"},
		"one history twice":  {Options{Sources: []SourceSpec{{Name: "x", Path: v1}, {Name: "y", Path: v1}}}, "given twice (as x and y)"},
		"one name twice":     {Options{Sources: []SourceSpec{{Name: "x", Path: v1}, {Name: "x", Path: v2}}}, `two sources are named "x"`},
		"a name with spaces": {Options{Sources: []SourceSpec{{Name: "my laptop", Path: v1}}}, "lower-case letters"},
	} {
		tc.opts.Getenv = noEnv
		_, err := Open(context.Background(), tc.opts)
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrOptions saying %q", name, err, tc.want)
		}
	}
}

// --db NAME=PATH and --db PATH.
func TestParseSourceFlag(t *testing.T) {
	for in, want := range map[string]SourceSpec{
		"laptop=/s/opencode.db": {Name: "laptop", Path: "/s/opencode.db"},
		"/s/a=b.db":             {Path: "/s/a=b.db"},
		"./a=b.db":              {Path: "./a=b.db"},
		"/s/opencode.db":        {Path: "/s/opencode.db"},
	} {
		got, err := ParseSourceFlag(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"My Laptop=/x.db", "laptop="} {
		if _, err := ParseSourceFlag(bad); !errors.Is(err, ErrOptions) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if msg := source.CheckName(DefaultSourceName); msg != "" {
		t.Error(msg)
	}
}

// Semantic search over several sources: one query vector against each
// source's vectors, hits merged by similarity; a source without vectors
// answers lexically and the coverage notice counts its documents.
func TestHybridOverSources(t *testing.T) {
	store := t.TempDir()
	installModel(t, store, 1, "")
	laptop, desktop := spec(t, "laptop", "v1"), spec(t, "desktop", "v2")
	data := t.TempDir()
	open := func(specs ...SourceSpec) *Engine {
		return openSynced(t, Options{Sources: specs, ModelDir: store, Getenv: dataEnv(data)})
	}
	first := open(laptop)
	if _, err := first.Embed(context.Background(), EmbedOptions{}); err != nil {
		t.Fatal(err)
	}
	first.Close()
	e := open(laptop, desktop)
	res := search(t, e, "ERR_QUOTA_7731 ERR_EVICT_4410", func(p *SearchParams) { p.Mode = "hybrid" })
	if res.Mode != "hybrid" || !strings.Contains(strings.Join(res.Notices, "\n"), "vectors cover") {
		t.Fatalf("hybrid with one source embedded: mode %q notices %q", res.Mode, res.Notices)
	}
	if n := hitSources(res.Hits); n["laptop"] == 0 || n["desktop"] == 0 {
		t.Errorf("hybrid hits by source %v; want both (desktop lexically)", n)
	}
	er, err := e.Embed(context.Background(), EmbedOptions{})
	if err != nil || er.Done != er.Total {
		t.Fatalf("embed both: %+v %v", er, err)
	}
	sem := search(t, e, "cache eviction policy", func(p *SearchParams) { p.Mode = "semantic"; p.Limit = 40; p.Group = "none" })
	if n := hitSources(sem.Hits); n["laptop"] == 0 || n["desktop"] == 0 {
		t.Errorf("semantic hits by source %v; want both", n)
	}
	for i := 1; i < len(sem.Hits); i++ {
		if sem.Hits[i].Score > sem.Hits[i-1].Score {
			t.Fatalf("semantic hits not merged by similarity at %d", i)
		}
	}
	st, err := e.Status(context.Background())
	if err != nil || st.Semantic.Embedded != st.Semantic.Total || st.Semantic.Total == 0 {
		t.Errorf("status semantic %+v %v", st.Semantic, err)
	}
}

// The history OpenCode uses is "local" whether found or given by its path
// (so a cursor made either way reads in the other).
func TestDefaultHistoryIsLocal(t *testing.T) {
	data := t.TempDir()
	db := filepath.Join(data, "opencode", "opencode.db")
	os.MkdirAll(filepath.Dir(db), 0o755)
	if err := os.Rename(fixture(t, "v1"), db); err != nil {
		t.Fatal(err)
	}
	env := dataEnv(data)
	found := openSources(t, env)
	given := openSources(t, env, SourceSpec{Path: db})
	if found.SourceNames()[0] != "local" || given.SourceNames()[0] != "local" {
		t.Fatalf("names %q and %q, want local for both", found.SourceNames(), given.SourceNames())
	}
	c := search(t, found, "ERR_QUOTA_7731").Hits[0].Cursor
	if _, err := given.Read(context.Background(), ReadParams{Cursor: c}); err != nil {
		t.Error(err)
	}
}
