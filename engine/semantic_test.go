package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/recallhq/recall/engine/embed"
	"github.com/recallhq/recall/engine/embed/bertgen"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

// Semantic search tests run on tiny random BERT models from bertgen: no
// network, no real weights. Random weights say nothing about meaning, so
// these tests pin behaviour (modes, fallbacks, caching, invalidation,
// resumption, concurrency), not quality.

const testModel = "test/tiny"

// installModel writes a random model and installs it into store under
// testModel; rev "" installs it as revision "local", else as that commit.
func installModel(t testing.TB, store string, seed uint64, rev string) embed.Manifest {
	t.Helper()
	m, err := bertgen.Generate(bertgen.Tiny(seed))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "snapshot")
	if rev != "" {
		src = filepath.Join(src, rev)
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteDir(src, bertgen.Safetensors); err != nil {
		t.Fatal(err)
	}
	man, err := embed.Store{Dir: store}.Import(context.Background(), src, testModel)
	if err != nil {
		t.Fatal(err)
	}
	return man
}

// openSemantic opens a synced engine over the v1 fixture reading models from
// store.
func openSemantic(t testing.TB, db, ix, store string) *Engine {
	t.Helper()
	return openSynced(t, Options{DBPath: db, IndexPath: ix, ModelDir: store, Getenv: noEnv})
}

func countRows(t testing.TB, e *Engine, q string) int {
	t.Helper()
	var n int
	if err := rawIndex(t, e).QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNoModelSearchesLexicallyWithOneNotice(t *testing.T) {
	e := openSemantic(t, fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db"), t.TempDir())
	res := search(t, e, "cache")
	if res.Mode != "lexical" || len(res.Hits) == 0 {
		t.Fatalf("auto without a model: mode %q, %d hits; want lexical hits", res.Mode, len(res.Hits))
	}
	if len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "recall models pull") {
		t.Fatalf("want one notice naming `recall models pull`, got %q", res.Notices)
	}
	if again := search(t, e, "cache"); len(again.Notices) != 0 {
		t.Errorf("the notice came twice: %q", again.Notices)
	}
	for _, mode := range []query.Mode{query.ModeSemantic, query.ModeHybrid} {
		_, err := e.Search(context.Background(), SearchParams{Query: "cache", Mode: mode})
		if !errors.Is(err, embed.ErrNoModel) || !strings.Contains(err.Error(), "recall models import DIR") {
			t.Errorf("--mode %s without a model: want ErrNoModel telling what to run, got %v", mode, err)
		}
	}
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Semantic.Installed || st.Semantic.Total == 0 || !strings.Contains(st.Semantic.Notice, "models pull") {
		t.Errorf("status without a model: %+v", st.Semantic)
	}
}

func TestEmbedThenHybrid(t *testing.T) {
	store := t.TempDir()
	installModel(t, store, 1, "")
	e := openSemantic(t, fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db"), store)
	ctx := context.Background()

	res := search(t, e, "cache")
	if res.Mode != "lexical" || len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "recall sync --embed") {
		t.Fatalf("model but no vectors: mode %q notices %q; want lexical and a notice to run sync --embed", res.Mode, res.Notices)
	}
	var progress []EmbedProgress
	er, err := e.Embed(ctx, EmbedOptions{Batch: 3, Progress: func(p EmbedProgress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if er.Total == 0 || er.Done != er.Total || er.Embedded == 0 {
		t.Fatalf("embed: %+v", er)
	}
	if len(progress) < 2 || progress[len(progress)-1].Done != er.Total {
		t.Errorf("progress: %+v", progress)
	}
	// Only prose, reasoning, titles, tool inputs, subtasks and summaries
	// get vectors: never tool outputs or patches.
	if n := countRows(t, e, `SELECT count(*) FROM doc_vectors v JOIN docs d ON d.rid = v.doc_rid WHERE d.kind IN ('output','patch','file')`); n != 0 {
		t.Errorf("%d tool outputs, patches or files were embedded", n)
	}
	res = search(t, e, "cache", func(p *SearchParams) { p.Explain = true })
	if res.Mode != "hybrid" || len(res.Hits) == 0 {
		t.Fatalf("auto with vectors: mode %q, %d hits", res.Mode, len(res.Hits))
	}
	if len(res.Notices) != 0 {
		t.Errorf("complete vectors gave notices: %q", res.Notices)
	}
	if res.Hits[0].Explain == nil || res.Hits[0].Explain.LexicalRank == 0 && res.Hits[0].Explain.SemanticRank == 0 {
		t.Errorf("hybrid explain lacks ranks: %+v", res.Hits[0].Explain)
	}
	sem := search(t, e, "how did we speed things up", func(p *SearchParams) { p.Mode = "semantic" })
	if sem.Mode != "semantic" || len(sem.Hits) == 0 {
		t.Fatalf("semantic: mode %q, %d hits", sem.Mode, len(sem.Hits))
	}
	lex := search(t, e, "cache", func(p *SearchParams) { p.Mode = "lexical" })
	if lex.Mode != "lexical" {
		t.Errorf("--mode lexical ran %q", lex.Mode)
	}
	st, err := e.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Semantic.Installed || st.Semantic.Model != testModel || st.Semantic.Embedded != st.Semantic.Total {
		t.Errorf("status: %+v", st.Semantic)
	}
}

// Filters apply to vector hits exactly as to lexical ones.
func TestSemanticHitsHonourFilters(t *testing.T) {
	store := t.TempDir()
	installModel(t, store, 1, "")
	e := openSemantic(t, fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db"), store)
	if _, err := e.Embed(context.Background(), EmbedOptions{}); err != nil {
		t.Fatal(err)
	}
	all := search(t, e, "fix the failing build", func(p *SearchParams) { p.Mode = "semantic"; p.Group = "none"; p.Limit = 50 })
	if len(all.Hits) < 2 {
		t.Fatalf("want several semantic hits, got %d", len(all.Hits))
	}
	sid := all.Hits[0].SessionID
	for name, tc := range map[string]struct {
		mod func(*SearchParams)
		ok  func(Hit) bool
	}{
		"session": {func(p *SearchParams) { p.Filter.Session = sid }, func(h Hit) bool { return h.SessionID == sid }},
		"exclude": {func(p *SearchParams) { p.Filter.ExcludeSession = sid }, func(h Hit) bool { return h.SessionID != sid }},
		"kind":    {func(p *SearchParams) { p.Filter.Kinds = []model.Kind{model.KindTool} }, func(h Hit) bool { return h.Kind == "tool" }},
		"role":    {func(p *SearchParams) { p.Filter.Roles = []query.Role{query.RoleUser} }, func(h Hit) bool { return h.Role == "user" }},
		"dir":     {func(p *SearchParams) { p.Filter.Directory = all.Hits[0].Directory }, func(h Hit) bool { return strings.HasPrefix(h.Directory, all.Hits[0].Directory) }},
	} {
		for _, mode := range []query.Mode{query.ModeSemantic, query.ModeHybrid} {
			res := search(t, e, "fix the failing build", func(p *SearchParams) { p.Mode = mode; p.Group = "none"; p.Limit = 50; tc.mod(p) })
			for _, h := range res.Hits {
				if !tc.ok(h) {
					t.Errorf("%s/%s: hit %s/%s (%s, %s) breaks the filter", name, mode, h.SessionID, h.PartID, h.Kind, h.Role)
				}
			}
		}
	}
}

// Unchanged text is never embedded twice: a full re-sync rewrites every
// document, and the next embedding run only re-links cached vectors.
func TestResyncEmbedsNothingNew(t *testing.T) {
	store := t.TempDir()
	installModel(t, store, 1, "")
	e := openSemantic(t, fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db"), store)
	ctx := context.Background()
	first, err := e.Embed(ctx, EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(ctx, SyncOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, e, `SELECT count(*) FROM doc_vectors`); n != 0 {
		t.Fatalf("a forced sync left %d vector links to deleted documents", n)
	}
	again, err := e.Embed(ctx, EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Embedded != 0 || again.Cached != first.Done || again.Done != again.Total {
		t.Fatalf("re-embedding unchanged text: first %+v, again %+v; want 0 embedded, all cached", first, again)
	}
	if res := search(t, e, "cache"); res.Mode != "hybrid" {
		t.Errorf("after re-sync and re-link: mode %q", res.Mode)
	}
}

// A different model (here the same name at another revision) invalidates
// every stored vector.
func TestModelChangeInvalidatesVectors(t *testing.T) {
	store, db, ix := t.TempDir(), fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db")
	revA, revB := strings.Repeat("a", 40), strings.Repeat("b", 40)
	installModel(t, store, 1, revA)
	e := openSemantic(t, db, ix, store)
	ctx := context.Background()
	if _, err := e.Embed(ctx, EmbedOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Close()

	installModel(t, store, 2, revB)
	e = openSemantic(t, db, ix, store)
	st, err := e.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Semantic.Revision != revB || st.Semantic.Embedded != 0 || !st.Semantic.Stale {
		t.Fatalf("status after a model change: %+v; want 0 embedded, stale", st.Semantic)
	}
	res := search(t, e, "cache")
	if res.Mode != "lexical" || len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "another model") {
		t.Fatalf("search with another model's vectors: mode %q notices %q", res.Mode, res.Notices)
	}
	er, err := e.Embed(ctx, EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !er.Reset || er.Embedded != countRows(t, e, `SELECT count(*) FROM embeddings`) || er.Done != er.Total || !strings.Contains(er.Model, revB) {
		t.Fatalf("re-embedding with the new model: %+v; want a reset and every text embedded again", er)
	}
	if n := countRows(t, e, `SELECT count(*) FROM embeddings WHERE model NOT LIKE '%`+revB+`%'`); n != 0 {
		t.Errorf("%d vectors of the old model remain", n)
	}
	if res := search(t, e, "cache"); res.Mode != "hybrid" {
		t.Errorf("after re-embedding: mode %q", res.Mode)
	}
}

// A run stopped midway keeps what it committed; the next run finishes the
// rest without embedding a committed text again or duplicating rows.
func TestEmbeddingResumes(t *testing.T) {
	store := t.TempDir()
	installModel(t, store, 1, "")
	e := openSemantic(t, fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db"), store)
	ctx, cancel := context.WithCancel(context.Background())
	batches := 0
	first, err := e.Embed(ctx, EmbedOptions{Batch: 2, Progress: func(EmbedProgress) {
		batches++
		if batches == 3 { // the initial report and two committed batches
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the run cancelled, got %v (%+v)", err, first)
	}
	if first.Done == 0 || first.Done >= first.Total {
		t.Fatalf("cancelled run: %+v; want part done", first)
	}
	committed := countRows(t, e, `SELECT count(*) FROM embeddings`)
	second, err := e.Embed(context.Background(), EmbedOptions{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if second.Done != second.Total {
		t.Fatalf("second run did not finish: %+v", second)
	}
	distinct := countRows(t, e, `SELECT count(*) FROM embeddings`)
	if committed+second.Embedded != distinct {
		t.Errorf("second run embedded %d texts; %d were committed before, %d distinct now: something was embedded twice", second.Embedded, committed, distinct)
	}
	if n := countRows(t, e, `SELECT count(*) FROM (SELECT hash FROM embeddings GROUP BY hash HAVING count(*) > 1)`); n != 0 {
		t.Errorf("%d duplicated vectors", n)
	}
	if n, total := countRows(t, e, `SELECT count(*) FROM doc_vectors`), second.Total; n != total {
		t.Errorf("%d vector links for %d documents", n, total)
	}
}

// Searches run while a background run embeds (go test -race).
func TestSearchDuringBackgroundEmbedding(t *testing.T) {
	store := t.TempDir()
	installModel(t, store, 1, "")
	e := openSemantic(t, fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db"), store)
	run := e.StartEmbedding(context.Background(), EmbedOptions{Batch: 1})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				mode := []query.Mode{query.ModeAuto, query.ModeHybrid, query.ModeLexical}[(i+w)%3]
				res, err := e.Search(context.Background(), SearchParams{Query: "cache retry", Mode: mode, Limit: 5})
				if err != nil {
					errs <- err
					return
				}
				if mode == "lexical" && res.Mode != "lexical" {
					errs <- errors.New("lexical mode ran " + string(res.Mode))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	er, err := run.Result()
	if err != nil {
		t.Fatal(err)
	}
	if er.Done != er.Total {
		t.Fatalf("background run: %+v", er)
	}
	if res := search(t, e, "cache retry"); res.Mode != "hybrid" {
		t.Errorf("after the run: mode %q", res.Mode)
	}
}

// Close stops a background run; what it committed stays.
func TestCloseStopsEmbedding(t *testing.T) {
	store := t.TempDir()
	installModel(t, store, 1, "")
	e := openSemantic(t, fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db"), store)
	run := e.StartEmbedding(context.Background(), EmbedOptions{Batch: 1})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done():
	default:
		t.Fatal("Close returned before the embedding run ended")
	}
}
